"""A fallback chain's probes under the daily spending cap (providers/fallback.py,
turn.ask.ask_probe), through the pipeline with the chain built from config as `omega start`
builds it: openai (a scripted server that is down) first, ollama (another, free) after it.

A probe is background work: once the day's spending has stopped background work no probe is
made (the breaker stays open and the person is still answered, by the fallback); below that
line a probe is made, and its cost is audited and counted like any call's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from omega.gateway.pipeline import handle_message
from omega.memory.audit import AuditEntry
from omega.providers.fallback import FallbackProvider
from omega.turn import PipelineDeps
from omega.turn.spend import today
from omega.types import IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.outbox import Recorder
from tests.integration.test_breaker_limiter import chain_env

CAP = 1.0
PRICED = "gpt-4o-mini"  # genai-prices: a probe of it has a price


def capped_deps(make_deps: MakeDeps, primary: FakeOpenAI, fallback: FakeOpenAI) -> PipelineDeps:
    """The chain under a $1 cap; a member that is down is probed at the next message."""
    return make_deps(
        **chain_env(
            primary.base_url,
            fallback,
            OMEGA_PROVIDER__OPENAI__MODEL=PRICED,
            OMEGA_PROVIDER__BREAKER_SECS="0.000001",
            OMEGA_PROVIDER__CLASSIFY="false",
            OMEGA_LIMITS__DAILY_USD=str(CAP),
        )
    )


def spent_already(deps: PipelineDeps, usd: float) -> None:
    """Today's earlier calls cost `usd` (one audited answer)."""
    deps.store.audit(
        AuditEntry(
            channel="terminal",
            sender_id="owner",
            status="ok",
            provider="openai",
            model=PRICED,
            cost_usd=usd,
        )
    )


async def two_messages(deps: PipelineDeps, out: Recorder, between: FakeOpenAI) -> None:
    """The first message finds the primary down (its breaker opens); `between` then answers
    again; the second message starts the primary's probe, awaited to its end."""
    started: list[asyncio.Task[Any]] = []

    def keep(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **options)
        started.append(task)  # the probe may be over before the message is
        return task

    asyncio.get_running_loop().set_task_factory(keep)
    for text in ("hello", "hello again"):
        await handle_message(deps, IncomingMessage("terminal", "owner", text), out)
        between.default_status = 200
    probes = [t for t in started if t.get_name().startswith("probe:")]
    assert len(probes) == 1  # the probe was due: the chain started it
    await asyncio.gather(*probes)


def chain(deps: PipelineDeps) -> FallbackProvider:
    assert isinstance(deps.provider, FallbackProvider)
    return deps.provider


def test_no_probe_once_background_work_has_stopped_and_replies_still_fail_over(
    make_deps: MakeDeps, fake_openai: FakeOpenAI
) -> None:
    with FakeOpenAI() as primary:
        primary.default_status = 500
        deps = capped_deps(make_deps, primary, fake_openai)
        spent_already(deps, 0.8 * CAP)  # background work stops at 80%; replies go on
        out = Recorder()
        asyncio.run(two_messages(deps, out, primary))
        # Only the first message's attempt reached the primary: no probe was made.
        assert len(primary.requests) == 1
        assert chain(deps).is_open(0)
    replies = [m.text for m in out.sent if m.kind == "reply"]
    assert replies == ["echo: hello", "echo: hello again"]  # the fallback answered both
    rows = deps.store.audit_entries(100)
    assert not [r for r in rows if r["event"] == "probe"]
    assert deps.store.spent_since(today()) == pytest.approx(0.8 * CAP)


def test_a_probe_below_the_line_is_made_audited_and_counted(
    make_deps: MakeDeps, fake_openai: FakeOpenAI
) -> None:
    with FakeOpenAI() as primary:
        primary.default_status = 500
        deps = capped_deps(make_deps, primary, fake_openai)
        asyncio.run(two_messages(deps, Recorder(), primary))
        assert len(primary.requests) == 2 and not chain(deps).is_open(0)  # probed: back
        ((_, usage),) = primary.answered
    (row,) = [r for r in deps.store.audit_entries(100) if r["event"] == "probe"]
    assert (row["status"], row["provider"], row["model"]) == ("ok", "openai", PRICED)
    assert (row["input_tokens"], row["output_tokens"]) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    tokens = PriceUsage(
        input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"]
    )
    price = float(calc_price(tokens, PRICED, provider_id="openai").total_price)
    assert row["cost_usd"] == pytest.approx(price) and price > 0
    # Ollama is free: the probe is all the day's spending.
    assert deps.store.spent_since(today()) == pytest.approx(price)
