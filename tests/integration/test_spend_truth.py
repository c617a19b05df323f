"""Every billed token counts toward `[limits] daily_usd` (turn/spend.py), through the pipeline
with the scripted server: a tool loop that ends in a provider error or a timeout counts the
requests it made, a fallback member that failed after being billed counts too, a model with no
list price costs `[limits] unknown_model_usd_per_mtok`, and `omega ask` on the lean path is
priced like any call. Each day's spend read from the store equals the price of every request
the server answered."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from omega import i18n
from omega.app import bootstrap
from omega.memory import Store
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_spending_cap import audit, spent_already
from tests.integration.test_tool_loop import tool_call

PRICED = "gpt-4o-mini"  # genai-prices: $0.15 in / $0.60 out per million tokens


def spent_today(home: Path) -> float:
    """What the store says today's provider calls cost (the sum the cap reads)."""
    store = Store(bootstrap(home).paths.db)
    try:
        return store.spent_since(datetime.now(UTC).strftime("%Y-%m-%d"))
    finally:
        store.close()


def list_price(usage: dict[str, Any], model: str = PRICED) -> float:
    """The list price of one answered request's reported usage."""
    tokens = PriceUsage(
        input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"]
    )
    return float(calc_price(tokens, model, provider_id="openai").total_price)


def answered_tokens(server: FakeOpenAI) -> tuple[int, int]:
    """Input and output tokens of every request the server answered, all together."""
    return (
        sum(u["prompt_tokens"] for _, u in server.answered),
        sum(u["completion_tokens"] for _, u in server.answered),
    )


def env(server: FakeOpenAI, **extra: str) -> dict[str, str]:
    settings = {
        "OMEGA_PROVIDER__OPENAI__MODEL": PRICED,
        "OMEGA_LIMITS__DAILY_USD": "5",
        "OMEGA_AUTH__OWNERS": '["terminal:owner"]',
    }
    return openai_env(server, **(settings | extra))


def chat(server: FakeOpenAI, text: str, **extra: str) -> list[dict[str, Any]]:
    result = run_omega(
        "chat",
        "--jsonl",
        env=env(server, **extra),
        stdin=jsonl({"text": text, "sender_id": "owner"}),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.events


def tool_rounds(count: int) -> list[Step]:
    """`count` rounds of a tool call, each answered with usage."""
    return [
        Step(match="build", tool_calls=[tool_call(f"c{n}", "run_shell", command=f"echo {n}")])
        for n in range(count)
    ]


def billed_loop(server: FakeOpenAI) -> list[dict[str, Any]]:
    """The usage of each answered request of the tool loop (planning calls left out)."""
    return [u for r, u in server.answered if any(r is q for q in server.requests)]


def error_row(home: Path) -> sqlite3.Row:
    (row,) = audit(home, "event = 'exchange' AND status = 'error'")
    return row


def test_an_errored_tool_loops_tokens_reach_daily_usd(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Three billed rounds of tools, then the provider fails (500 on every retry of the SDK).
    fake_openai.script = [*tool_rounds(3), *[Step(match="build", status=500)] * 3]
    events = chat(fake_openai, "please run the build script three times")
    assert [e["kind"] for e in events if e["kind"] in ("reply", "error")] == ["error"]
    billed = billed_loop(fake_openai)
    assert len(billed) == 3
    row = error_row(isolated_env)
    assert row["input_tokens"] == sum(u["prompt_tokens"] for u in billed) > 0
    assert row["output_tokens"] == sum(u["completion_tokens"] for u in billed)
    assert row["cost_usd"] == pytest.approx(sum(list_price(u) for u in billed))
    assert row["provider"] == "openai" and row["model"] == PRICED
    # The day's spend (what the cap reads) is every answered request's price, planning too.
    spent = spent_today(isolated_env)
    assert spent > 0
    assert spent == pytest.approx(sum(list_price(u) for _, u in fake_openai.answered))


def test_a_timed_out_tool_loop_counts_what_it_was_billed(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Two rounds of tools within 8 s (3 s was once not enough for four test workers beside
    # other jobs on two cores), then a request that hangs past the timeout.
    fake_openai.script = [*tool_rounds(2), Step(match="build", hang_secs=12)]
    events = chat(
        fake_openai, "please run the build script twice", OMEGA_PROVIDER__TIMEOUT_SECS="8"
    )
    assert [e["kind"] for e in events if e["kind"] in ("reply", "error")] == ["error"]
    row = error_row(isolated_env)
    assert "8s" in row["detail"] or "timed out" in row["detail"]
    billed = billed_loop(fake_openai)
    assert len(billed) == 2
    assert row["input_tokens"] == sum(u["prompt_tokens"] for u in billed) > 0
    assert row["cost_usd"] == pytest.approx(sum(list_price(u) for u in billed))
    assert spent_today(isolated_env) == pytest.approx(
        sum(list_price(u) for _, u in fake_openai.answered)
    )


def test_a_fallback_member_billed_before_it_failed_counts(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # openai runs two rounds of tools, then answers 400 (not retried); openrouter, the same
    # server under another name, answers.
    fake_openai.script = [
        *tool_rounds(2),
        Step(match="build", status=400, text="bad request"),
        Step(match="build", text="Built."),
    ]
    events = chat(
        fake_openai,
        "please run the build script twice",
        OMEGA_PROVIDER__FALLBACK='["openrouter"]',
        OMEGA_PROVIDER__OPENROUTER__BASE_URL=fake_openai.base_url,
        OMEGA_PROVIDER__OPENROUTER__API_KEY="sk-or-test-0123456789",
        OMEGA_PROVIDER__OPENROUTER__MODEL=f"openai/{PRICED}",
    )
    assert [e["text"] for e in events if e["kind"] == "reply"] == ["Built."]
    (failed,) = audit(isolated_env, "event = 'exchange' AND status = 'error'")
    (answered,) = audit(isolated_env, "event = 'exchange' AND status = 'ok'")
    assert (failed["provider"], answered["provider"]) == ("openai", "openrouter")
    billed = billed_loop(fake_openai)[:2]
    assert failed["input_tokens"] == sum(u["prompt_tokens"] for u in billed) > 0
    assert failed["cost_usd"] == pytest.approx(sum(list_price(u) for u in billed))
    assert answered["cost_usd"] > 0
    input_tokens, output_tokens = answered_tokens(fake_openai)
    rows = audit(isolated_env, "provider != ''")
    assert sum(r["input_tokens"] for r in rows) == input_tokens
    assert sum(r["output_tokens"] for r in rows) == output_tokens


def test_an_unpriced_model_costs_the_unknown_model_rate(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # "fake-model" is in no price table: 15 USD per million tokens by default, or as set.
    events = chat(fake_openai, "hello there", OMEGA_PROVIDER__OPENAI__MODEL="fake-model")
    assert [e["kind"] for e in events if e["kind"] == "reply"] == ["reply"]
    input_tokens, output_tokens = answered_tokens(fake_openai)
    assert input_tokens > 0
    expected = (input_tokens + output_tokens) * 15.0 / 1_000_000
    assert spent_today(isolated_env) == pytest.approx(expected)
    (row,) = audit(isolated_env, "event = 'exchange'")
    assert row["cost_usd"] > 0 and row["model"] == "fake-model"
    chat(
        fake_openai,
        "hello again",
        OMEGA_PROVIDER__OPENAI__MODEL="fake-model",
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK="0",
    )
    assert spent_today(isolated_env) == pytest.approx(expected)  # counted as free


def test_the_lean_ask_is_priced_and_counts_toward_the_cap(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    spent_already(isolated_env, 1.0 - 1e-9)  # just under a 1 USD cap
    capped = env(fake_openai, OMEGA_LIMITS__DAILY_USD="1", OMEGA_PROVIDER__OPENAI__MODEL="gpt-4o")
    first = run_omega("ask", "What is the capital of France?", env=capped)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "echo: What is the capital of France?"
    ((_, usage),) = fake_openai.answered
    (row,) = audit(isolated_env, "event = 'ask'")
    assert (row["input_tokens"], row["output_tokens"]) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert row["cost_usd"] == pytest.approx(list_price(usage, "gpt-4o")) and row["cost_usd"] > 0
    # Its cost crossed the cap: the next question is refused before any request is made.
    second = run_omega("ask", "And of Spain?", env=capped)
    assert second.returncode == 1
    assert i18n.message("error_spending_cap", "English") in second.stderr
    assert len(fake_openai.requests) == 1


def test_the_lean_ask_prices_a_remembered_model_the_same(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # The first question loads genai-prices and remembers gpt-4o-mini's rates in the home
    # (omega.providers.price_memo); the second is priced from them, to the same figure.
    for question in ("What is the capital of France?", "And of Spain, in a longer question?"):
        result = run_omega("ask", question, env=env(fake_openai))
        assert result.returncode == 0, result.stderr
    assert PRICED in (isolated_env / "prices-memo.json").read_text()
    rows = audit(isolated_env, "event = 'ask'")
    expected = [list_price(u) for _, u in fake_openai.answered]
    assert [r["cost_usd"] for r in rows] == pytest.approx(expected, rel=1e-12)
    assert rows[0]["cost_usd"] != rows[1]["cost_usd"]
