"""`omega ask` on the lean path: one tool-less chat completion with the standard library
(no pydantic-ai, no OpenAI SDK imported), retried and classified like the SDK path;
`--tools` keeps the full tool loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from omega.providers.base import ProviderError
from omega.providers.lean import LeanChatProvider
from omega.types import ChatMessage, Context
from tests.conftest import on_postgresql, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_spending_cap import audit


def test_ask_imports_no_sdk(  # the import budget of the lean path (issue 40)
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Rome."), Step(text="Paris.")]
    env = dict(os.environ, **openai_env(fake_openai))
    # The first question of a model loads genai-prices (the model is not listed): remembered.
    first = run_omega("ask", "Capital of Italy?", env=openai_env(fake_openai))
    assert first.stdout.strip() == "Rome." and (isolated_env / "prices-memo.json").exists()
    # The store's own driver is the one heavy import a PostgreSQL home needs (the audit row).
    heavy_roots = [
        "pydantic_ai",
        "openai",
        "httpx",
        "httpx2",  # genai-prices' client
        "genai_prices",  # the price memo knows the model (omega.providers.price_memo)
        "yaml",  # skills' frontmatter, read only when a skill is
        "anthropic",
        "google",
        "numpy",
        "telegram",
        "discord",
        "slack_sdk",
        "nio",
        "neonize",
        "llama_cpp",
        "mcp",
        "typer",  # `omega ask` is answered without the typer app (omega.cli.ask)
        "click",
        "rich",
    ]
    if not on_postgresql():
        heavy_roots.append("psycopg")
    code = (
        "import sys; from omega.cli.main import main; sys.argv = ['omega', 'ask', 'Capital?']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {tuple(heavy_roots)!r} "
        "or (m.startswith('omega.channels.') and m != 'omega.channels.base')"
        " or m.split('.')[:2] in (['omega', 'sandbox'], ['omega', 'tools'])"
        " or m == 'omega.cli.commands')\n"
        "print('HEAVY', heavy)\n"
        # What it imported is frozen out of the collector's reach, which collects again after.
        "import gc; print('GC', gc.isenabled(), gc.get_freeze_count() > 50000)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["Paris.", "HEAVY []", "GC True True"]
    request = fake_openai.requests[-1]
    assert request.path == "/v1/chat/completions"
    assert [m["role"] for m in request.messages] == ["system", "user"]
    assert request.messages[1]["content"] == "Capital?"
    assert request.headers["authorization"] == "Bearer sk-test-secret-key-0123456789"
    assert "tools" not in request.body


def test_ask_with_tools_offers_them(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    fake_openai.script = [Step(text="Listed.")]
    result = run_omega("ask", "--tools", "What is in my workspace?", env=openai_env(fake_openai))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Listed."
    names = {t["function"]["name"] for t in fake_openai.requests[0].body["tools"]}
    assert {"read_file", "list_files"} <= names


def _context() -> Context:
    return Context(
        system_prompt="Be brief.",
        messages=[
            ChatMessage("user", "one"),
            ChatMessage("assistant", "two"),
            ChatMessage("user", "three"),
        ],
        max_tokens=20,
    )


def _lean(server: FakeOpenAI, **kwargs: float) -> LeanChatProvider:
    return LeanChatProvider("openai", "fake-model", "sk-x", server.base_url, **kwargs)  # type: ignore[arg-type]


@pytest.mark.no_store
def test_lean_provider_request_usage_and_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [Step(status=503), Step(status=500), Step(text="answer")]
    reply = asyncio.run(_lean(fake_openai, max_retries=2).complete(_context()))
    assert reply.text == "answer" and reply.provider == "openai"
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert len(fake_openai.requests) == 3  # two retries, when asked for
    body = fake_openai.requests[-1].body
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["max_tokens"] == 20 and body["model"] == "fake-model"


@pytest.mark.no_store
def test_lean_provider_errors_are_classified(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [Step(status=429, retry_after=7)] * 3
    with pytest.raises(ProviderError) as err:
        asyncio.run(_lean(fake_openai).complete(_context()))
    # One attempt: the 429 and its retry-after go to Omega's limiter at once (issue 38).
    assert err.value.kind == "rate_limit" and len(fake_openai.requests) == 1
    assert err.value.retry_after == 7
    for status, kind in ((500, "unavailable"), (502, "unavailable"), (504, "timeout")):
        fake_openai.script = [Step(status=status)]
        with pytest.raises(ProviderError) as err:
            asyncio.run(_lean(fake_openai).complete(_context()))
        assert err.value.kind == kind, status
    fake_openai.script = [Step(status=401, text="bad key")]
    with pytest.raises(ProviderError) as err:
        asyncio.run(_lean(fake_openai).complete(_context()))
    assert err.value.kind == "error" and "401" in str(err.value)
    fake_openai.script = [Step(hang_secs=5)]
    with pytest.raises(ProviderError) as err:
        asyncio.run(_lean(fake_openai, timeout_secs=0.5).complete(_context()))
    assert err.value.kind == "timeout"
    closed = LeanChatProvider("openai", "m", "", "http://127.0.0.1:9/v1", max_retries=0)
    with pytest.raises(ProviderError) as err:
        asyncio.run(closed.complete(_context()))
    assert err.value.kind == "unavailable"
    with pytest.raises(ProviderError, match="no tools"):
        asyncio.run(closed.complete(Context("s", [ChatMessage("user", "x")], use_tools=True)))


def test_a_model_answering_as_a_dated_snapshot_is_priced_without_genai_prices_next_time(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # OpenAI answers `gpt-4o-mini` as `gpt-4o-mini-2024-07-18`: the price is the answering
    # model's, and the memo learns both names, so the second question loads no price list.
    dated = "gpt-4o-mini-2024-07-18"
    fake_openai.script = [Step(text="One.", model=dated), Step(text="Two.", model=dated)]
    env = dict(os.environ, **openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__MODEL="gpt-4o-mini"))
    code = (
        "import sys; from omega.cli.main import main; sys.argv = ['omega', 'ask', 'Count?']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('PRICES', 'genai_prices' in sys.modules)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        for _ in range(2)
    ]
    assert [r.stdout.split() for r in runs] == [
        ["One.", "PRICES", "True"],
        ["Two.", "PRICES", "False"],
    ]
    costs = [r["cost_usd"] for r in audit(isolated_env, "event = 'ask'")]
    expected = [
        float(
            calc_price(
                PriceUsage(input_tokens=u["prompt_tokens"], output_tokens=u["completion_tokens"]),
                dated,
                provider_id="openai",
            ).total_price
        )
        for _, u in fake_openai.answered
    ]
    assert costs == pytest.approx(expected, rel=1e-12) and costs[0] > 0
