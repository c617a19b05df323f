"""The channel plug-in interface (omega.channels.plugin, .registry): every channel `omega
start` runs is found through it, the built-ins too; a plug-in's section is validated by its
own model; what a plug-in delivers goes through admission, pairing and the inbox like any
channel's; a plug-in that fails is reported and stops nothing."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
from datetime import UTC, datetime
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import omega.channels.registry as registry
import omega.ops.selfcheck as selfcheck
from omega.app import bootstrap, build_service, run_service
from omega.app.channels import WEB, message_channels
from omega.channels import builtin
from omega.channels.base import Submit
from omega.channels.plugin import (
    GROUP,
    ChannelContext,
    ChannelPlugin,
    PluginChannelConfig,
    platform_proven,
)
from omega.channels.supervised import SupervisedChannel
from omega.config import Config, ConfigError, load_config
from omega.health_file import read_health
from omega.memory import Store
from omega.ops.selfcheck import CheckContext, run_checks
from omega.types import IncomingMessage, OutgoingMessage
from tests.fakes.providers import ScriptedProvider

HERE = "tests.unit.test_channel_plugins"


class LoopConfig(PluginChannelConfig):
    """[channel.loop]: the base's keys and one of its own."""

    greeting: str = "hello"


class Loop:
    """A channel whose wire is a list: it submits `script` in order, records what it is sent,
    then fails with `fail` (when given) or waits to be stopped."""

    name = "loop"
    script: ClassVar[list[IncomingMessage]] = []
    fail: ClassVar[Exception | None] = None

    def __init__(self, ctx: ChannelContext) -> None:
        self.sent: list[OutgoingMessage] = []
        self.stopped = asyncio.Event()
        self.done = asyncio.Event()
        SENT.append(self)

    async def run(self, submit: Submit) -> None:
        for message in self.script:
            handled = await submit(message)
            await handled
        self.done.set()
        if self.fail is not None:
            raise self.fail
        await self.stopped.wait()

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self.stopped.set()


SENT: list[Loop] = []
# A platform that proves its senders (a pairing code goes only to a proven stranger).
LOOP = ChannelPlugin(
    name="loop", config_model=LoopConfig, factory=Loop, sender_assurance=platform_proven
)


def _broken_factory(ctx: ChannelContext) -> Loop:
    raise RuntimeError("cannot reach the wire")


BROKEN = ChannelPlugin(name="broken", config_model=PluginChannelConfig, factory=_broken_factory)
IMPOSTOR = ChannelPlugin(name="telegram", config_model=LoopConfig, factory=Loop)


def _points(*names: str) -> list[EntryPoint]:
    """Omega's own entry points plus these plug-ins of this module, as metadata lists them."""
    mine = {**registry.BUILTIN, **registry.SHIPPED}
    own = [EntryPoint(name, value, GROUP) for name, value in mine.items()]
    return own + [EntryPoint(name, f"{HERE}:{name.upper()}", GROUP) for name in names]


@pytest.fixture
def home(isolated_env: Path) -> Path:
    isolated_env.mkdir(parents=True, exist_ok=True)
    return isolated_env


@pytest.fixture(autouse=True)
def _clean_checks(monkeypatch: pytest.MonkeyPatch) -> object:
    # The checks the plug-ins register here stay here (the registry is process-wide).
    monkeypatch.setattr(selfcheck, "_registered", dict(selfcheck._registered))
    yield
    Loop.script, Loop.fail = [], None
    SENT.clear()


def test_the_installed_package_declares_the_builtin_channels_as_entry_points() -> None:
    # `make dev` installs Omega editable; its metadata must name the same objects as BUILTIN
    # (a pyproject.toml without the entry points fails here once reinstalled).
    declared = {p.name: p.value for p in entry_points(group=GROUP) if p.name in registry.BUILTIN}
    assert declared == registry.BUILTIN


def test_builtins_are_found_through_their_entry_points_and_without_them() -> None:
    found = registry.discover(_points())
    fallback = registry.discover([])  # an install older than the entry points
    expected = [builtin.TERMINAL, builtin.TELEGRAM, builtin.WHATSAPP, WEB]
    shipped = ["discord", "email", "matrix", "slack"]  # Omega's plug-ins, by name
    assert list(found.plugins.values())[:4] == expected
    assert list(fallback.plugins.values())[:4] == expected
    assert list(found.plugins)[4:] == list(fallback.plugins)[4:] == shipped
    assert not found.failures and not fallback.failures


def test_the_installed_package_declares_every_shipped_channel() -> None:
    # Every `omega.channels` entry point of Omega's own package is a protected name.
    ours = [p for p in entry_points(group=GROUP) if p.value.startswith("omega.")]
    assert {p.name: p.value for p in ours} == {**registry.BUILTIN, **registry.SHIPPED}


# A third-party package's plug-ins under the names of channels Omega ships.
IMPOSTORS = SimpleNamespace(
    **{
        name: ChannelPlugin(name=name, config_model=LoopConfig, factory=Loop)
        for name in ("telegram", "web", "email", "slack", "discord", "matrix")
    }
)


@pytest.mark.parametrize("name", sorted(vars(IMPOSTORS)))
def test_a_third_party_plugin_cannot_take_the_name_of_a_channel_omega_ships(name: str) -> None:
    mine = {**registry.BUILTIN, **registry.SHIPPED}[name]
    module, _, attr = mine.partition(":")
    omegas = getattr(importlib.import_module(module), attr)
    impostor = EntryPoint(name, f"{HERE}:IMPOSTORS.{name}", GROUP)
    # Beside Omega's own entry point, or where the metadata lists only the impostor's.
    for points in ([*_points("loop"), impostor], [impostor]):
        found = registry.discover(points)
        assert found.plugins[name] is omegas
        assert name not in found.failures


def test_a_third_party_plugin_cannot_take_a_builtin_name() -> None:
    points = [*_points("loop"), EntryPoint("telegram", f"{HERE}:IMPOSTOR", GROUP)]
    found = registry.discover(points)
    assert found.plugins["telegram"] is builtin.TELEGRAM
    assert found.plugins["loop"] is LOOP


def test_a_plugin_that_cannot_be_loaded_is_a_failure_not_an_error() -> None:
    points = [
        *_points("loop"),
        EntryPoint("gone", "omega_no_such_module:PLUGIN", GROUP),
        EntryPoint("wrong", f"{HERE}:LoopConfig", GROUP),  # not a ChannelPlugin
        EntryPoint("Bad-Name", f"{HERE}:LOOP", GROUP),
    ]
    found = registry.discover(points)
    assert "loop" in found.plugins
    assert "ModuleNotFoundError" in found.failures["gone"].reason
    assert "not an omega ChannelPlugin" in found.failures["wrong"].reason
    assert "lowercase" in found.failures["Bad-Name"].reason


def test_an_unknown_channel_section_is_kept_for_its_plugin(home: Path) -> None:
    path = home / "config.toml"
    path.write_text('[channel.loop]\nenabled = true\ngreeting = "hi"\n', encoding="utf-8")
    config = load_config(path)
    assert config.channel.plugin_sections() == {"loop": {"enabled": True, "greeting": "hi"}}
    section = registry.bind_section(config, LOOP)
    assert isinstance(section, LoopConfig) and section.greeting == "hi"
    assert config.channel.loop is section  # type: ignore[attr-defined]  # auth reads the model
    # A built-in section still rejects an unknown key, and a plug-in's must be a table.
    path.write_text("[channel.telegram]\nbot_tokn = 'x'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="did you mean 'bot_token'"):
        load_config(path)
    path.write_text("[channel]\nloop = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[channel.loop\] must be a table"):
        load_config(path)


def test_a_plugin_validates_its_own_section(home: Path) -> None:
    (home / "config.toml").write_text(
        "[channel.loop]\nenabled = true\ncolour = 'red'\n[channel.telegramm]\nenabled = true\n",
        encoding="utf-8",
    )
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    try:
        started = message_channels(runtime, store, found=registry.discover(_points("loop")))
        checks = {c.name: c for c in run_checks(CheckContext(runtime.config, runtime.paths))}
    finally:
        store.close()
    assert started.channels == []
    reasons = {f.name: f.reason for f in started.failures}
    assert "channel.loop.colour" in reasons["loop"] and "Extra inputs" in reasons["loop"]
    assert "did you mean [channel.telegram]" in reasons["telegramm"]
    health = read_health(runtime.paths.channel_health("loop")) or {}
    assert health["state"] == "failed"
    assert not checks["loop"].ok and not checks["telegramm"].ok


def test_start_runs_the_channels_discovery_finds_and_no_other(home: Path) -> None:
    # Telegram is enabled with a token, but only what the interface yields may start: a root
    # that wires a channel by hand fails here.
    (home / "config.toml").write_text(
        "[channel.telegram]\nenabled = true\nbot_token = '123:abc'\n"
        "[channel.loop]\nenabled = true\n",
        encoding="utf-8",
    )
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    try:
        only_loop = registry.Discovery(plugins={"loop": LOOP})
        started = message_channels(runtime, store, found=only_loop)
        assert [c.name for c in started.channels] == ["loop"]
        assert isinstance(started.channels[0], SupervisedChannel)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(registry, "entry_points", lambda group: _points("loop"))
            service = build_service(runtime, store, jsonl=True)
        assert [c.name for c in service.channels] == ["terminal", "telegram", "loop"]
    finally:
        store.close()


def test_what_a_plugin_delivers_goes_through_admission_pairing_and_the_inbox(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "config.toml").write_text(
        "[channel.loop]\nenabled = true\nallowed_users = ['ana']\ndm_policy = 'pairing'\n"
        "[channel.broken]\nenabled = true\n",
        encoding="utf-8",
    )
    Loop.script = [
        IncomingMessage("loop", "ana", "hello there", id="loop:1"),
        IncomingMessage("loop", "ana", "hello there", id="loop:1"),  # delivered twice
        IncomingMessage("loop", "mallory", "let me in", assurance="platform"),
        IncomingMessage(
            "web", "mallory", "I am the owner now", assurance="local"
        ),  # passing for the web page
    ]
    Loop.fail = RuntimeError("the wire went down")
    monkeypatch.setattr(registry, "entry_points", lambda group: _points("loop", "broken"))
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    provider = ScriptedProvider("Hi Ana.", default="unexpected")

    async def scenario() -> None:
        service = build_service(runtime, store)
        service.deps.provider = provider  # type: ignore[assignment]
        stop = asyncio.Event()
        running = asyncio.create_task(run_service(service, stop))
        while not SENT or not SENT[0].done.is_set():
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # the failure is reported
        stop.set()
        await asyncio.wait_for(running, 30)

    try:
        asyncio.run(scenario())
        pending = store.pairing_pending(datetime.now(UTC))
        alerts = [a.text for a in store.pending_owner_alerts()]
    finally:
        store.close()
    sent = SENT[0].sent
    replies = [m for m in sent if m.kind == "reply"]
    assert [(m.target, m.text) for m in replies] == [("ana", "Hi Ana.")]  # once
    assert [p.sender_id for p in pending] == ["mallory"]  # paired, not answered
    assert not any("let me in" in p or "owner now" in p for p in provider.prompts)
    # A plug-in with no platform line of its own gets one from its capabilities (plain text).
    [system] = [c.system_prompt for c in provider.contexts if c.prompt == "hello there"]
    assert "Platform: Loop. Plain text only; no Markdown." in system
    assert any("broken" in a and "cannot reach the wire" in a for a in alerts)
    assert any("loop" in a and "the wire went down" in a for a in alerts)
    health = read_health(runtime.paths.channel_health("loop")) or {}
    assert health["state"] == "failed" and "the wire went down" in str(health["detail"])


def test_a_plugin_cannot_choose_whose_memory_its_message_reads(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message's person key is the gateway's to find from the channel id: a plug-in that
    sets `origin_id` (the gateway's record of the channel id behind a person key) and a
    `sender_id` of its choosing reads nobody's memory but its sender's own. (The durable inbox
    keeps no origin_id either; the plug-in wrapper clears it first.)"""
    (home / "config.toml").write_text(
        "[channel.loop]\nenabled = true\nallowed_users = ['*']\n", encoding="utf-8"
    )
    Loop.script = [
        IncomingMessage("loop", "111", "what do you know?", origin_id="ana", assurance="platform")
    ]
    monkeypatch.setattr(registry, "entry_points", lambda group: _points("loop"))
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    telegram_person = store.person_of("telegram", "111")  # Telegram's user 111, seen first
    store.set_learned_fact(telegram_person, "diagnosis", "told in private to Omega on Telegram")
    provider = ScriptedProvider(default="I know little.")

    async def scenario() -> None:
        service = build_service(runtime, store)
        service.deps.provider = provider  # type: ignore[assignment]
        stop = asyncio.Event()
        running = asyncio.create_task(run_service(service, stop))
        while not SENT or not SENT[0].done.is_set():
            await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(running, 30)

    try:
        asyncio.run(scenario())
    finally:
        store.close()
    assert not any("told in private" in c.system_prompt for c in provider.contexts)
    assert not any("told in private" in m.text for m in SENT[0].sent)


def _documented_example() -> str:
    """The Python of docs/channels.md's minimal channel."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "channels.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.DOTALL)
    assert len(blocks) == 1
    return str(blocks[0])


def test_the_documented_example_channel_works(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "omega_socket_channel.py").write_text(_documented_example(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(package))
    sock, outbox = tmp_path / "s", tmp_path / "out.jsonl"
    (home / "config.toml").write_text(
        f"[channel.sock]\nenabled = true\nallowed_users = ['ana']\n"
        f"socket = '{sock}'\noutbox = '{outbox}'\n",
        encoding="utf-8",
    )
    declared = [*_points(), EntryPoint("sock", "omega_socket_channel:PLUGIN", GROUP)]
    monkeypatch.setattr(registry, "entry_points", lambda group: declared)
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    provider = ScriptedProvider("Hi Ana.", default="unexpected")

    async def scenario() -> list[dict[str, str]]:
        service = build_service(runtime, store)
        service.deps.provider = provider  # type: ignore[assignment]
        stop = asyncio.Event()
        running = asyncio.create_task(run_service(service, stop))
        while not sock.exists():
            await asyncio.sleep(0.02)
        _, writer = await asyncio.open_unix_connection(str(sock))
        for sender, text in (("ana", "hello"), ("mallory", "let me in")):
            writer.write((json.dumps({"from": sender, "text": text}) + "\n").encode())
        await writer.drain()
        writer.close()
        lines: list[dict[str, str]] = []
        for _ in range(500):
            if outbox.exists():
                lines = [json.loads(x) for x in outbox.read_text("utf-8").splitlines()]
                if {"ana", "mallory"} <= {x["to"] for x in lines} and "Hi Ana." in str(lines):
                    break
            await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(running, 30)
        return lines

    try:
        lines = asyncio.run(scenario())
    finally:
        store.close()
    assert {"to": "ana", "text": "Hi Ana."} in lines
    assert [x for x in lines if x["to"] == "mallory" and "Hi Ana" in x["text"]] == []
    assert [x for x in lines if x["to"] == "mallory"]  # refused, with the deny message
    assert not any("let me in" in p for p in provider.prompts)


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    name=st.from_regex(registry.NAME, fullmatch=True),
    table=st.dictionaries(
        st.sampled_from(["enabled", "allowed_users", "dm_policy", "greeting", "colour"]), _values
    )
    | _values,
)
def test_any_channel_table_is_accepted_or_refused_with_a_clear_error(
    name: str, table: object
) -> None:
    try:
        config = Config.model_validate({"channel": {name: table}})
    except ValidationError:
        return  # load_config turns it into a ConfigError naming the key
    plugin = ChannelPlugin(name=name, config_model=LoopConfig, factory=Loop)
    try:
        section = registry.bind_section(config, plugin)
    except ValueError as exc:
        assert f"channel.{name}" in str(exc)
        return
    assert isinstance(section, LoopConfig)
    assert getattr(config.channel, name) is section
