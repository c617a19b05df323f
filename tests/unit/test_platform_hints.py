"""The system prompt's platform line: one mechanism for every channel (issue 41).

Each channel plug-in, Omega's own included, declares its line (`ChannelPlugin.prompt_hint`, or
one made from its capabilities); the composition root hands those lines to the prompt builder,
which takes the line from the situation and nowhere else."""

from __future__ import annotations

import asyncio
from pathlib import Path

import omega.channels.registry as registry
from omega.app import bootstrap, build_chat
from omega.app.channels import message_channels
from omega.channels.base import TERMINAL_HINT
from omega.channels.builtin import TELEGRAM
from omega.channels.plugin import Capabilities, ChannelPlugin, PluginChannelConfig
from omega.loops.heartbeat import run_heartbeat
from omega.memory import Store
from omega.prompts import Prompts
from omega.turn import PromptSituation, compose_prompt_parts
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider

PROMPTS = Prompts(identity="I am Omega.", soul="Kind.", system="Rules.")

# The line each channel Omega ships put in the system prompt before issue 41 (captured from
# main: PLATFORM_HINTS for the four built-in ones, ChannelPlugin.platform_hint() for the rest).
BEFORE = {
    "terminal": "Platform: terminal. Plain text; no Markdown tables.",
    "telegram": "Platform: Telegram. Markdown is supported (bold, italic, code blocks).",
    "whatsapp": "Platform: WhatsApp. Avoid Markdown tables and headers; use *bold* and bullets.",
    "web": "Platform: Omega's local web page. Markdown is supported.",
    "discord": "Platform: Discord. Markdown is supported (bold, italic, code blocks; no tables).",
    "email": (
        "Platform: e-mail. Plain text only, no Markdown; the reply is sent as a mail in the "
        "person's thread, so no subject line and no signature."
    ),
    "matrix": "Platform: Matrix. Markdown is supported (bold, italic, code blocks; no tables).",
    "slack": "Platform: Slack. Markdown is supported (bold, italic, code blocks; no tables).",
}


def _unused(ctx: object) -> object:
    raise AssertionError("never built")


def _plugin(name: str, **kwargs: object) -> ChannelPlugin:
    return ChannelPlugin(name=name, config_model=PluginChannelConfig, factory=_unused, **kwargs)  # type: ignore[arg-type]


def test_every_channel_omega_ships_declares_the_line_it_had() -> None:
    found = registry.discover(declared=())
    assert found.platform_hints() == BEFORE
    # Declared by each plug-in itself, not made up from its capabilities.
    assert {name: plugin.prompt_hint for name, plugin in found.plugins.items()} == BEFORE
    assert BEFORE["terminal"] == TERMINAL_HINT  # `omega ask`'s line is the terminal's


def test_the_prompt_builder_takes_the_line_from_the_situation_only() -> None:
    # The channel's name alone gives no line: there is no table to look it up in.
    bare = compose_prompt_parts(PROMPTS, PromptSituation(channel="telegram"))
    assert "Platform:" not in bare.text
    for name, hint in BEFORE.items():
        parts = compose_prompt_parts(PROMPTS, PromptSituation(channel=name, platform_hint=hint))
        # Right after Omega's base prompt, in the stable (cacheable) part, once.
        assert f"Rules.\n\n{hint}\n\n" in parts.stable
        assert parts.text.count("Platform:") == 1


def test_a_third_party_line_and_the_capabilities_fallback() -> None:
    own = _plugin("loop", prompt_hint="Platform: Loop. Emoji only.")
    assert own.platform_hint() == "Platform: Loop. Emoji only."
    plain = _plugin("loop", capabilities=Capabilities(markdown="plain"))
    assert plain.platform_hint() == "Platform: Loop. Plain text only; no Markdown."
    rich = _plugin("pigeon", capabilities=Capabilities(markdown="commonmark"))
    assert rich.platform_hint() == (
        "Platform: Pigeon. Markdown is supported (bold, italic, code blocks; no tables)."
    )


def test_start_and_chat_hand_every_channels_line_to_the_pipeline(isolated_env: Path) -> None:
    isolated_env.mkdir(parents=True, exist_ok=True)
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    try:
        # A built-in and a third-party plug-in, neither enabled: the lines are known anyway
        # (the channel may run on another replica; the heartbeat writes to the owner's).
        loop = _plugin("loop", capabilities=Capabilities(markdown="plain"))
        found = registry.Discovery(plugins={"telegram": TELEGRAM, "loop": loop})
        started = message_channels(runtime, store, found=found)
        assert started.channels == []
        assert started.hints == {
            "telegram": BEFORE["telegram"],
            "loop": "Platform: Loop. Plain text only; no Markdown.",
        }
        chat = build_chat(runtime, store, jsonl=True)
        assert chat.deps.state.platform_hints == BEFORE
    finally:
        store.close()


def test_the_heartbeat_gets_the_owners_channel_line(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider("HEARTBEAT_OK", "HEARTBEAT_OK")
    deps = make_deps(provider, OMEGA_AUTH__OWNERS='["telegram:42"]')
    deps.state.platform_hints.update(BEFORE)
    deps.paths.heartbeat.write_text("- Check disk\n")
    assert asyncio.run(run_heartbeat(deps, Recorder())) is None
    assert BEFORE["telegram"] in provider.contexts[0].system_prompt
    nobody = make_deps(provider, OMEGA_AUTH__OWNERS="[]")  # no owner address: the terminal's
    nobody.state.platform_hints.update(BEFORE)
    assert asyncio.run(run_heartbeat(nobody, Recorder())) is None
    assert BEFORE["terminal"] in provider.contexts[1].system_prompt
