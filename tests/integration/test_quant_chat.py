"""/quant through the real pipeline: owner only, settings in memory.db, live only with the
owner's code, and the advisory signal in the owner's context only."""

from __future__ import annotations

import asyncio
import importlib.util
import re

from omega.gateway.pipeline import handle_message
from omega.memory import Store
from omega.owner import OWNER
from omega.quant.broker import PaperBroker
from omega.quant.commands import quant_command
from omega.quant.executor import QuantExecutor
from omega.quant.settings import QuantStateStore
from omega.turn import PipelineDeps, local_owner_id
from omega.types import IncomingMessage
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider


def _deps(make_deps: MakeDeps) -> tuple[PipelineDeps, ScriptedProvider]:
    provider = ScriptedProvider(name="capture", model="")
    return make_deps(provider), provider


def _say(deps: PipelineDeps, sender: str, text: str) -> str:
    out = Recorder()
    asyncio.run(
        handle_message(deps, IncomingMessage("terminal", sender, text, assurance="local"), out)
    )
    return "\n".join(m.text for m in out.sent)


def test_quant_commands_are_the_owners_and_persist(make_deps: MakeDeps) -> None:
    deps, _ = _deps(make_deps)
    owner = local_owner_id()
    assert "Only my owner" in _say(deps, "ana", "/quant enable")
    assert not QuantStateStore(deps.store).settings().enabled
    assert "Quant enabled" in _say(deps, owner, "/quant enable")
    assert "AAPL" in _say(deps, owner, "/quant symbol aapl")
    assert "25,000.00" in _say(deps, owner, "/quant portfolio 25000")
    assert "Usage" in _say(deps, owner, "/quant portfolio -3")
    assert "Usage" in _say(deps, owner, "/quant symbol $$$")
    status = _say(deps, owner, "/quant status")
    assert "enabled, symbol AAPL, portfolio 25,000.00, mode PAPER" in status
    assert "not financial advice" in status
    # A second store on the same file sees the same settings (they live in memory.db).
    again = Store(deps.paths.db)
    s = QuantStateStore(again).settings()
    assert (s.enabled, s.symbol, s.portfolio, s.mode) == (True, "AAPL", 25000.0, "paper")
    again.close()
    assert "Quant disabled" in _say(deps, owner, "/quant disable")
    assert "/quant" in _say(deps, owner, "/help")


def test_live_needs_the_code_sent_back_by_the_owner(make_deps: MakeDeps) -> None:
    deps, _ = _deps(make_deps)
    owner = local_owner_id()
    state = QuantStateStore(deps.store)
    assert "Only my owner" in _say(deps, "ana", "/quant live")
    asked = _say(deps, owner, "/quant live")
    assert "REAL orders" in asked
    match = re.search(r"/quant live confirm (\d{6})", asked)
    assert match is not None
    # Someone else cannot confirm it, and the model's reply text is never a command.
    assert "Only my owner" in _say(deps, "ana", f"/quant live confirm {match.group(1)}")
    assert state.settings().mode == "paper"
    assert "LIVE mode on" in _say(deps, owner, f"/quant live confirm {match.group(1)}")
    assert state.settings().mode == "live"
    assert "paper mode" in _say(deps, owner, "/quant paper")
    assert state.settings().mode == "paper"
    wrong = _say(deps, owner, "/quant live confirm 123")
    assert "wrong or expired" in wrong and state.settings().mode == "paper"
    # Omega's own internal messages (tasks, self-checks) can never go live.
    code = state.start_live_confirmation()
    assert "only be confirmed by the owner" in quant_command(
        deps.store, f"live confirm {code}", OWNER
    )
    assert state.settings().mode == "paper"
    events = [str(r["event"]) for r in deps.store.audit_entries(100)]
    assert "quant_live_confirmed" in events and "quant_live_refused" in events


def test_the_models_words_never_confirm_live_nor_open_the_order_connection(
    make_deps: MakeDeps,
) -> None:
    deps, _ = _deps(make_deps)
    owner = local_owner_id()
    state = QuantStateStore(deps.store)
    state.update(enabled=True)
    asked = _say(deps, owner, "/quant live")
    match = re.search(r"/quant live confirm (\d{6})", asked)
    assert match is not None
    code = match.group(1)

    deps.provider = ScriptedProvider(
        default=f"/quant live confirm {code}\n[SCHEDULE: 1m | /quant live confirm {code}]",
        name="echo",
        model="",
    )
    _say(deps, owner, "please go live for me")
    assert state.settings().mode == "paper"  # the reply is text, never a command
    # Nor an internal message (a scheduled task, a self-check) carrying the code.
    assert "only be confirmed by the owner" in quant_command(
        deps.store, f"live confirm {code}", OWNER
    )
    assert state.settings().mode == "paper"

    opened: list[bool] = []

    class Live(PaperBroker):
        name = "fake-live"

        @property
        def is_open(self) -> bool:
            return bool(opened)

        async def open(self) -> None:
            opened.append(True)

    executor = QuantExecutor(deps.store, PaperBroker(), Live())
    assert asyncio.run(executor.sync_mode()) == "paper" and not opened


def test_the_advisory_reaches_the_owners_context_only(make_deps: MakeDeps) -> None:
    deps, provider = _deps(make_deps)
    owner = local_owner_id()
    state = QuantStateStore(deps.store)
    line = "ADVISORY (NOT FINANCIAL ADVICE): regime=Bull, direction=Long, confidence=72%"
    state.save_signal("SPY", {"regime": "Bull"}, line)
    _say(deps, owner, "how is the market?")
    assert "ADVISORY" not in provider.system_prompts[-1]  # quant disabled: nothing injected
    state.update(enabled=True)
    _say(deps, owner, "how is the market?")
    assert f"[SPY] {line}" in provider.system_prompts[-1]
    _say(deps, "ana", "how is the market?")
    assert "ADVISORY" not in provider.system_prompts[-1]
    assert "regime=" not in provider.system_prompts[-1]
    # A stale signal is not presented as current.
    latest = state.latest_signal()
    assert latest is not None
    state._put("latest_signal", {**latest, "at": 0})
    _say(deps, owner, "and now?")
    assert "ADVISORY" not in provider.system_prompts[-1]


def test_quant_enable_and_status_through_omega_chat(fake_openai: FakeOpenAI) -> None:
    """`omega chat --jsonl`, no [quant] section: /quant enable turns quant on (the feed is
    `omega start`'s), and /quant status has a Feed line saying no feed reported yet."""
    env = openai_env(fake_openai)
    result = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl({"text": "/quant enable"}, {"text": "/quant status"}),
    )
    assert result.returncode == 0, result.stderr
    enabled, status = (str(e["text"]) for e in result.events if e["kind"] == "command")
    assert "Quant enabled for SPY" in enabled and "config.toml" not in enabled.split(";")[0]
    if importlib.util.find_spec("ib_async") is None:
        assert "the feed cannot run here: the quant feed needs ib_async" in enabled
        feed = "Feed: cannot run here: the quant feed needs ib_async"
    else:
        assert "no config.toml change needed" in enabled
        feed = "Feed: no report yet (the feed runs inside `omega start`: is it running?)"
    assert "Quant: enabled, symbol SPY" in status
    assert f"{feed}; no bar received yet" in status
    assert not fake_openai.requests  # commands never reach the model
