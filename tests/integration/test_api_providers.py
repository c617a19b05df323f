"""API providers (Anthropic, Gemini, OpenAI-compatible) and the fallback chain, against
scripted wire-format servers: directly through build_provider, and end to end through
`omega chat --jsonl`."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import logging
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omega.config import Config
from omega.paths import OmegaPaths
from omega.providers import (
    Provider,
    ProviderError,
    build_chain,
    build_provider,
    chain_names,
)
from omega.providers.fallback import FallbackProvider
from omega.types import ChatMessage, Context, Reply, Usage
from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes import anthropic_server, gemini_server
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_server import Step as OpenAIStep

ANTHROPIC_KEY = "sk-ant-test-secret-0123456789"
GEMINI_KEY = "AIza-test-secret-0123456789"
OPENAI_KEY = "sk-test-secret-key-0123456789"
PRICED_ANTHROPIC = "claude-sonnet-4-6"  # genai-prices: $3 in / $15 out per million tokens
PRICED_GEMINI = "gemini-2.5-flash"  # genai-prices: $0.30 in / $2.50 out per million tokens
FRIENDLY_ERROR = "Something went wrong on my side. Please try again."
UNAVAILABLE = "My AI provider is not available right now. Please try again later."
SYSTEM = "You are a test assistant."
CONTEXT = Context(
    system_prompt=SYSTEM,
    messages=[
        ChatMessage("user", "Hi, I am Ana"),
        ChatMessage("assistant", "Hello Ana"),
        ChatMessage("user", "What is my name?"),
    ],
)


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running scripted Anthropic Messages API server."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    """A running scripted Gemini API server."""
    with FakeGemini() as server:
        yield server


def config_for(**sections: Any) -> Config:
    """A Config whose [provider] table holds the given keys and sections."""
    return Config.model_validate({"provider": sections})


def anthropic_section(server: FakeAnthropic, model: str = PRICED_ANTHROPIC) -> dict[str, Any]:
    return {"base_url": server.base_url, "api_key": ANTHROPIC_KEY, "model": model}


def gemini_section(server: FakeGemini, model: str = PRICED_GEMINI) -> dict[str, Any]:
    return {"base_url": server.base_url, "api_key": GEMINI_KEY, "model": model}


def openai_section(server: FakeOpenAI) -> dict[str, Any]:
    return {"base_url": server.base_url, "api_key": OPENAI_KEY, "model": "fake-model"}


def complete(provider: Provider, context: Context = CONTEXT) -> Reply:
    return asyncio.run(provider.complete(context))


def complete_limited(provider: Provider, context: Context = CONTEXT) -> tuple[Reply, int]:
    """The answer as Omega asks for it (providers.limiter.limited_call: its limiter sees a
    refusal for load at once and asks again), and the limiter's limit afterwards (of 8)."""
    from omega.providers.limiter import AdaptiveLimiter, limited_call

    limiter = AdaptiveLimiter(8)
    reply = asyncio.run(limited_call(limiter, provider, context))
    return reply, limiter.limit


def anthropic_env(server: FakeAnthropic, **extra: str) -> dict[str, str]:
    """Env that points Omega's anthropic provider at the fake server."""
    env = {
        "OMEGA_PROVIDER__DEFAULT": "anthropic",
        "OMEGA_PROVIDER__ANTHROPIC__BASE_URL": server.base_url,
        "OMEGA_PROVIDER__ANTHROPIC__API_KEY": ANTHROPIC_KEY,
        "OMEGA_PROVIDER__ANTHROPIC__MODEL": PRICED_ANTHROPIC,
    }
    env.update(extra)
    return env


def gemini_env(server: FakeGemini, **extra: str) -> dict[str, str]:
    """Env that points Omega's gemini provider at the fake server."""
    env = {
        "OMEGA_PROVIDER__DEFAULT": "gemini",
        "OMEGA_PROVIDER__GEMINI__BASE_URL": server.base_url,
        "OMEGA_PROVIDER__GEMINI__API_KEY": GEMINI_KEY,
        "OMEGA_PROVIDER__GEMINI__MODEL": PRICED_GEMINI,
    }
    env.update(extra)
    return env


def audit_rows(home: Path) -> list[sqlite3.Row]:
    """The reply rows of the audit log (not the planner's `classify` rows)."""
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    rows = list(conn.execute("SELECT * FROM audit_log ORDER BY id"))
    conn.close()
    return [r for r in rows if r["event"] != "classify"]


def chat_events(env: dict[str, str], *texts: str) -> list[dict[str, object]]:
    """Replies and errors `omega chat --jsonl` wrote for these messages from sender `ana`."""
    result = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl(*({"text": t, "sender_id": "ana"} for t in texts))
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    # What a message said; `id` and `reply_to` are the channel's bookkeeping.
    return [
        {k: v for k, v in e.items() if k not in ("id", "reply_to")}
        for e in result.events
        if e["kind"] in ("reply", "error")
    ]


# ---- Anthropic -----------------------------------------------------------------------------


@pytest.mark.no_store
def test_anthropic_reply_request_shape_usage_and_cost(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script = [
        anthropic_server.Step(text="You are Ana.", input_tokens=1000, output_tokens=100)
    ]
    config = config_for(anthropic=anthropic_section(fake_anthropic))
    reply = complete(build_provider("anthropic", config, OmegaPaths(Path("unused"))))
    assert reply.text == "You are Ana."
    assert reply.provider == "anthropic"
    assert reply.model == PRICED_ANTHROPIC
    assert reply.usage.input_tokens == 1000
    assert reply.usage.output_tokens == 100
    assert reply.usage.cost_usd == pytest.approx(1000 * 3e-6 + 100 * 15e-6)
    [request] = fake_anthropic.requests
    assert request.path.split("?")[0] == "/v1/messages"
    assert request.api_key == ANTHROPIC_KEY
    assert request.headers.get("anthropic-version")
    assert request.body["model"] == PRICED_ANTHROPIC
    # The top-level `system` field, not a message. pydantic-ai may put its framing announcement
    # ahead of it (the default on Sonnet 4.6), so only the end is ours.
    assert request.system_text.endswith(SYSTEM)
    assert request.turns == [
        ("user", "Hi, I am Ana"),
        ("assistant", "Hello Ana"),
        ("user", "What is my name?"),
    ]


@pytest.mark.no_store
def test_anthropic_unpriced_model_has_tokens_but_no_cost(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script = [anthropic_server.Step(text="hi", input_tokens=12, output_tokens=3)]
    config = config_for(anthropic=anthropic_section(fake_anthropic, model="fake-model"))
    reply = complete(build_provider("anthropic", config, OmegaPaths(Path("unused"))))
    assert reply.usage == Usage(input_tokens=12, output_tokens=3, cost_usd=None)


@pytest.mark.no_store
@pytest.mark.parametrize("status", [429, 529])
def test_anthropic_rate_limit_and_overload_are_retried(
    fake_anthropic: FakeAnthropic, status: int
) -> None:
    fake_anthropic.script = [anthropic_server.Step(status=status), anthropic_server.Step("ok")]
    config = config_for(anthropic=anthropic_section(fake_anthropic))
    reply, limit = complete_limited(build_provider("anthropic", config, OmegaPaths(Path("x"))))
    assert reply.text == "ok"
    assert len(fake_anthropic.requests) == 2  # Omega asked again, not the SDK
    assert limit == 4  # the limiter saw the refusal (issue 38: the SDK's retries are off)


@pytest.mark.no_store
@pytest.mark.parametrize(("status", "kind"), [(500, "unavailable"), (429, "rate_limit")])
def test_anthropic_persistent_failure_is_provider_error(
    fake_anthropic: FakeAnthropic, status: int, kind: str
) -> None:
    fake_anthropic.default_status = status
    config = config_for(anthropic=anthropic_section(fake_anthropic))
    with pytest.raises(ProviderError) as caught:
        complete(build_provider("anthropic", config, OmegaPaths(Path("unused"))))
    assert caught.value.kind == kind
    assert str(status) in str(caught.value)
    assert ANTHROPIC_KEY not in str(caught.value)
    assert len(fake_anthropic.requests) == 1  # the SDK's own retries are off (issue 38)


def test_anthropic_chat_end_to_end(fake_anthropic: FakeAnthropic, isolated_env: Path) -> None:
    fake_anthropic.script = [anthropic_server.Step(text="Nice to meet you, Ana.")]
    events = chat_events(anthropic_env(fake_anthropic), "Hi, my name is Ana", "What is my name?")
    assert [(e["kind"], e["text"]) for e in events] == [
        ("reply", "Nice to meet you, Ana."),
        ("reply", "echo: What is my name?"),
    ]
    first, second = fake_anthropic.requests
    assert first.api_key == ANTHROPIC_KEY
    assert "You are Omega" in first.system_text
    assert second.turns == [
        ("user", "Hi, my name is Ana"),
        ("assistant", "Nice to meet you, Ana."),
        ("user", "What is my name?"),
    ]
    rows = audit_rows(isolated_env)
    assert [(r["status"], r["provider"]) for r in rows] == [("ok", "anthropic")] * 2
    assert rows[0]["cost_usd"] is not None and rows[0]["cost_usd"] > 0


def test_anthropic_down_gives_friendly_message_and_error_audit(
    fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    fake_anthropic.default_status = 500  # a 5xx: the provider is down, and the user told so
    events = chat_events(anthropic_env(fake_anthropic), "hello?")
    assert [(e["kind"], e["text"]) for e in events] == [("error", UNAVAILABLE)]
    [row] = audit_rows(isolated_env)
    assert row["status"] == "error"
    assert row["provider"] == "anthropic"
    assert "500" in row["detail"]
    assert ANTHROPIC_KEY not in (isolated_env / "omega.log").read_text()


# ---- Gemini --------------------------------------------------------------------------------


@pytest.mark.no_store
def test_gemini_reply_request_shape_usage_and_cost(fake_gemini: FakeGemini) -> None:
    fake_gemini.script = [
        gemini_server.Step(text="You are Ana.", input_tokens=1000, output_tokens=100)
    ]
    config = config_for(gemini=gemini_section(fake_gemini))
    reply = complete(build_provider("gemini", config, OmegaPaths(Path("unused"))))
    assert reply.text == "You are Ana."
    assert reply.provider == "gemini"
    assert reply.model == PRICED_GEMINI
    assert reply.usage.input_tokens == 1000
    assert reply.usage.output_tokens == 100
    assert reply.usage.cost_usd == pytest.approx(1000 * 0.30e-6 + 100 * 2.50e-6)
    [request] = fake_gemini.requests
    assert request.path == f"/v1beta/models/{PRICED_GEMINI}:generateContent"
    assert request.api_key == GEMINI_KEY
    assert request.system_text == SYSTEM  # `systemInstruction`, not a content
    assert request.turns == [
        ("user", "Hi, I am Ana"),
        ("model", "Hello Ana"),
        ("user", "What is my name?"),
    ]


@pytest.mark.no_store
def test_gemini_unpriced_model_has_tokens_but_no_cost(fake_gemini: FakeGemini) -> None:
    fake_gemini.script = [gemini_server.Step(text="hi", input_tokens=12, output_tokens=3)]
    config = config_for(gemini=gemini_section(fake_gemini, model="fake-model"))
    reply = complete(build_provider("gemini", config, OmegaPaths(Path("unused"))))
    assert reply.usage == Usage(input_tokens=12, output_tokens=3, cost_usd=None)
    assert fake_gemini.requests[0].model == "fake-model"


@pytest.mark.no_store
def test_gemini_rate_limit_is_retried(fake_gemini: FakeGemini) -> None:
    # google-genai backs off about 1-2 s before the retry: one 429 keeps this test short.
    fake_gemini.script = [gemini_server.Step(status=429), gemini_server.Step(text="ok")]
    config = config_for(gemini=gemini_section(fake_gemini))
    reply, limit = complete_limited(build_provider("gemini", config, OmegaPaths(Path("x"))))
    assert reply.text == "ok"
    assert len(fake_gemini.requests) == 2 and limit == 4  # Omega asked again, not the SDK


@pytest.mark.no_store
def test_gemini_persistent_500_is_provider_error(fake_gemini: FakeGemini) -> None:
    fake_gemini.default_status = 500
    config = config_for(gemini=gemini_section(fake_gemini))
    with pytest.raises(ProviderError) as caught:
        complete(build_provider("gemini", config, OmegaPaths(Path("unused"))))
    assert caught.value.kind == "unavailable"  # a 5xx: the provider is down
    assert "500" in str(caught.value)
    assert GEMINI_KEY not in str(caught.value)
    assert len(fake_gemini.requests) == 1  # the SDK's own retries are off (issue 38)


def test_gemini_chat_end_to_end(fake_gemini: FakeGemini, isolated_env: Path) -> None:
    fake_gemini.script = [gemini_server.Step(text="Nice to meet you, Ana.")]
    events = chat_events(gemini_env(fake_gemini), "Hi, my name is Ana", "What is my name?")
    assert [(e["kind"], e["text"]) for e in events] == [
        ("reply", "Nice to meet you, Ana."),
        ("reply", "echo: What is my name?"),
    ]
    first, second = fake_gemini.requests
    assert first.api_key == GEMINI_KEY
    assert "You are Omega" in first.system_text
    assert second.turns == [
        ("user", "Hi, my name is Ana"),
        ("model", "Nice to meet you, Ana."),
        ("user", "What is my name?"),
    ]
    rows = audit_rows(isolated_env)
    assert [(r["status"], r["provider"]) for r in rows] == [("ok", "gemini")] * 2
    assert rows[0]["cost_usd"] is not None and rows[0]["cost_usd"] > 0


def test_gemini_refusal_gives_friendly_message_and_error_audit(
    fake_gemini: FakeGemini, isolated_env: Path
) -> None:
    # 403 is not retried; a 500 would cost google-genai's backoff twice (planner and reply).
    fake_gemini.default_status = 403
    events = chat_events(gemini_env(fake_gemini), "hello?")
    assert [(e["kind"], e["text"]) for e in events] == [("error", FRIENDLY_ERROR)]
    [row] = audit_rows(isolated_env)
    assert row["status"] == "error"
    assert "403" in row["detail"]
    assert GEMINI_KEY not in (isolated_env / "omega.log").read_text()


# ---- OpenAI-compatible ---------------------------------------------------------------------


@pytest.mark.no_store
def test_openai_rate_limit_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [OpenAIStep(status=429), OpenAIStep(text="ok")]
    config = config_for(openai=openai_section(fake_openai))
    reply, limit = complete_limited(build_provider("openai", config, OmegaPaths(Path("x"))))
    assert reply.text == "ok"
    assert len(fake_openai.requests) == 2 and limit == 4  # Omega asked again, not the SDK


@pytest.mark.parametrize("name", ["ollama", "openrouter"])
def test_openai_compatible_names_use_their_base_url(
    fake_openai: FakeOpenAI, isolated_env: Path, name: str
) -> None:
    config = config_for(**{name: openai_section(fake_openai)})
    reply = complete(build_provider(name, config, OmegaPaths(Path("unused"))))
    assert (reply.text, reply.provider) == ("echo: What is my name?", name)
    prefix = f"OMEGA_PROVIDER__{name.upper()}__"
    env = {
        "OMEGA_PROVIDER__DEFAULT": name,
        prefix + "BASE_URL": fake_openai.base_url,
        prefix + "API_KEY": OPENAI_KEY,
        prefix + "MODEL": "fake-model",
    }
    assert chat_events(env, "hello") == [{"to": "ana", "text": "echo: hello", "kind": "reply"}]
    last = fake_openai.requests[-1]
    assert last.headers.get("authorization") == f"Bearer {OPENAI_KEY}"
    assert [(r["status"], r["provider"]) for r in audit_rows(isolated_env)] == [("ok", name)]


# ---- Fallback chain ------------------------------------------------------------------------


@pytest.mark.no_store
def test_chain_is_the_default_then_the_fallbacks_without_duplicates(tmp_path: Path) -> None:
    paths = OmegaPaths(tmp_path)
    plain = Config()
    assert chain_names("openai", plain) == ["openai"]
    assert not isinstance(build_chain("openai", plain, paths), FallbackProvider)
    config = Config.model_validate(
        {"provider": {"fallback": ["openai", "anthropic", "openai", "local"]}}
    )
    assert chain_names("openai", config) == ["openai", "anthropic", "local"]
    chain = build_chain("openai", config, paths)
    assert isinstance(chain, FallbackProvider)
    assert [p.name for p in chain.providers] == ["openai", "anthropic", "local"]
    assert chain.name == "openai"
    ok, reason = chain.availability()
    assert isinstance(ok, bool) and "anthropic" in reason and "local" in reason


@pytest.mark.no_store
def test_chain_answers_from_the_fallback_with_its_own_model(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_anthropic.default_status = 500
    config = config_for(
        anthropic=anthropic_section(fake_anthropic),
        openai=openai_section(fake_openai),
        fallback=["openai"],
    )
    chain = build_chain("anthropic", config, OmegaPaths(Path("unused")))
    context = Context(SYSTEM, [ChatMessage("user", "hi")], model=PRICED_ANTHROPIC)
    with caplog.at_level(logging.WARNING, logger="omega.providers.fallback"):
        reply = complete(chain, context)
    assert (reply.text, reply.provider) == ("echo: hi", "openai")
    assert len(fake_anthropic.requests) == 1  # one attempt: the SDK's retries are off
    assert fake_anthropic.requests[0].body["model"] == PRICED_ANTHROPIC
    # The anthropic model name was meant for anthropic: openai gets its own configured model.
    assert fake_openai.requests[0].body["model"] == "fake-model"
    assert "provider anthropic failed (unavailable)" in caplog.text
    assert ANTHROPIC_KEY not in caplog.text


def test_chain_fallback_answers_the_user(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_anthropic.default_status = 500
    env = anthropic_env(
        fake_anthropic, OMEGA_PROVIDER__FALLBACK=json.dumps(["openai"]), **_openai_only(fake_openai)
    )
    events = chat_events(env, "hello?")
    assert [(e["kind"], e["text"]) for e in events] == [("reply", "echo: hello?")]
    assert fake_anthropic.requests and fake_openai.requests
    [row] = audit_rows(isolated_env)
    assert (row["status"], row["provider"]) == ("ok", "openai")
    assert "provider anthropic failed" in (isolated_env / "omega.log").read_text()


def test_the_tools_a_failed_member_ran_are_recorded_when_the_next_one_answers(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Issue 28: openai ran a tool, then failed (HTTP 400, not retried); anthropic answered. The
    # tool call happened, so it is in the records, under the chain's name.
    fake_openai.script = [
        OpenAIStep(
            match="status",
            tool_calls=[
                {
                    "id": "x1",
                    "type": "function",
                    "function": {"name": "run_shell", "arguments": '{"command": "echo ran"}'},
                }
            ],
        ),
        OpenAIStep(match="status", status=400, text="bad tool result"),
    ]
    env = openai_env(
        fake_openai,
        OMEGA_PROVIDER__FALLBACK=json.dumps(["anthropic"]),
        OMEGA_PROVIDER__ANTHROPIC__BASE_URL=fake_anthropic.base_url,
        OMEGA_PROVIDER__ANTHROPIC__API_KEY=ANTHROPIC_KEY,
        OMEGA_PROVIDER__ANTHROPIC__MODEL=PRICED_ANTHROPIC,
        OMEGA_AUTH__OWNERS='["terminal:ana"]',
    )
    events = chat_events(env, "check the disk status please")
    assert [e["kind"] for e in events] == ["reply"]
    conn = connect_db(isolated_env / "memory.db")
    rows = conn.execute("SELECT tool, ok, result_preview FROM tool_calls").fetchall()
    conn.close()
    assert rows == [("run_shell", 1, "exit code 0\nran\n")]


def test_chain_all_failing_gives_friendly_message(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_anthropic.default_status = 500
    # FakeOpenAI has no down switch: a bad key (401, never retried) for the planner and reply.
    fake_openai.script = [OpenAIStep(status=401)] * 2
    env = anthropic_env(
        fake_anthropic, OMEGA_PROVIDER__FALLBACK=json.dumps(["openai"]), **_openai_only(fake_openai)
    )
    events = chat_events(env, "hello?")
    assert [(e["kind"], e["text"]) for e in events] == [("error", FRIENDLY_ERROR)]
    [row] = audit_rows(isolated_env)
    assert row["status"] == "error"
    assert "openai HTTP 401" in row["detail"]  # the last provider's error is the one raised


def _openai_only(server: FakeOpenAI) -> dict[str, str]:
    """The openai section's env vars, without making openai the default."""
    env = openai_env(server)
    del env["OMEGA_PROVIDER__DEFAULT"]
    return env


# ---- FallbackProvider with stub members ----------------------------------------------------


class Stub:
    """A provider that answers, raises, or hangs as told."""

    def __init__(self, name: str, outcome: Exception | str, hang: float = 0.0) -> None:
        self._name = name
        self.outcome = outcome
        self.hang = hang
        self.calls: list[Context] = []
        self.prepared = False

    @property
    def name(self) -> str:
        return self._name

    def availability(self) -> tuple[bool, str]:
        return isinstance(self.outcome, str), f"stub {self._name}"

    async def prepare(self) -> None:
        self.prepared = True
        if isinstance(self.outcome, Exception):
            raise self.outcome

    async def complete(self, context: Context) -> Reply:
        self.calls.append(context)
        await asyncio.sleep(self.hang)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return Reply(text=self.outcome, provider=self._name, model="stub")


@pytest.mark.no_store
def test_fallback_tries_in_order_and_raises_the_last_error() -> None:
    first = Stub("a", ProviderError("a is down", kind="rate_limit"))
    crashing = Stub("b", RuntimeError("bug in b"))
    last = Stub("c", ProviderError("c timed out", kind="timeout"))
    chain = FallbackProvider([first, crashing, last])
    with pytest.raises(ProviderError) as caught:
        complete(chain)
    assert caught.value.kind == "timeout"
    assert str(caught.value) == "c timed out"
    assert [len(s.calls) for s in (first, crashing, last)] == [1, 1, 1]


@pytest.mark.no_store
def test_fallback_stops_at_the_first_answer() -> None:
    first = Stub("a", ProviderError("a is down"))
    second = Stub("b", "from b")
    third = Stub("c", "from c")
    reply = complete(FallbackProvider([first, second, third]))
    assert (reply.text, reply.provider) == ("from b", "b")
    assert not third.calls


@pytest.mark.no_store
def test_fallback_member_timeout_moves_on() -> None:
    slow = Stub("slow", "too late", hang=5)
    quick = Stub("quick", "in time")
    reply = complete(FallbackProvider([slow, quick], timeouts=[0.1, 1.0]))
    assert reply.provider == "quick"


@pytest.mark.no_store
def test_fallback_availability_and_prepare(caplog: pytest.LogCaptureFixture) -> None:
    down = Stub("down", ProviderError("no key", kind="unavailable"))
    up = Stub("up", "hi")
    chain = FallbackProvider([down, up])
    ok, reason = chain.availability()
    assert ok and "down" in reason and "up" in reason
    assert not FallbackProvider([down]).availability()[0]
    with caplog.at_level(logging.WARNING, logger="omega.providers.fallback"):
        asyncio.run(chain.prepare())
    assert down.prepared and up.prepared
    assert "could not prepare provider down" in caplog.text


@pytest.mark.no_store
def test_fallback_offers_the_first_providers_tools() -> None:
    class WithTools(Stub):
        def tool_names(self, context: Context | None = None) -> list[str]:
            return ["web_search"]

    assert FallbackProvider([WithTools("a", "hi"), Stub("b", "hi")]).tool_names() == ["web_search"]
    assert FallbackProvider([Stub("b", "hi"), WithTools("a", "hi")]).tool_names() == []


def test_a_dead_primary_is_waited_out_once_then_skipped(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """The primary hangs: the first call waits out its timeout, the breaker opens, and every
    later call (the reply after the planning call, the next messages) goes to the fallback at
    once instead of waiting again."""
    fake_anthropic.default_delay = 30
    env = anthropic_env(
        fake_anthropic,
        OMEGA_PROVIDER__FALLBACK=json.dumps(["openai"]),
        OMEGA_PROVIDER__TIMEOUT_SECS="1.5",
        **_openai_only(fake_openai),
    )
    events = chat_events(env, "one", "two", "three")
    assert [e["text"] for e in events] == ["echo: one", "echo: two", "echo: three"]
    asked = len(fake_anthropic.requests) + len(fake_anthropic.planner_requests)
    assert asked == 1  # the planning call of "one"; nothing after it waited on the dead primary


@pytest.mark.no_store
def test_an_open_breaker_closes_when_the_probe_is_answered() -> None:
    now = [0.0]
    primary = Stub("primary", ProviderError("down", kind="timeout"))
    backup = Stub("backup", "from backup")
    chain = FallbackProvider([primary, backup], breaker_secs=30, clock=lambda: now[0])
    context = Context(SYSTEM, [ChatMessage("user", "hi")])

    async def scenario() -> list[str]:
        said = [(await chain.complete(context)).text]  # primary fails: breaker opens
        said.append((await chain.complete(context)).text)  # skipped, no probe yet
        assert len(primary.calls) == 1 and chain.is_open(0)
        primary.outcome = "from primary"  # it comes back
        now[0] = 31.0
        said.append((await chain.complete(context)).text)  # still skipped; the probe starts
        await asyncio.sleep(0.05)  # the probe is answered in the background
        assert primary.calls[-1].prompt == "ping" and not chain.is_open(0)
        said.append((await chain.complete(context)).text)
        return said

    said = asyncio.run(scenario())
    assert said == ["from backup", "from backup", "from backup", "from primary"]


@pytest.mark.no_store
def test_an_error_that_is_not_a_dead_provider_opens_no_breaker() -> None:
    primary = Stub("primary", ProviderError("bad request", kind="error"))
    chain = FallbackProvider([primary, Stub("backup", "ok")])
    context = Context(SYSTEM, [ChatMessage("user", "hi")])
    for _ in range(2):
        assert asyncio.run(chain.complete(context)).text == "ok"
    assert len(primary.calls) == 2 and not chain.is_open(0)


# ---- Images reach the model -----------------------------------------------------------------

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _photo_message(text: str) -> str:
    image = {"kind": "image", "data": base64.b64encode(PNG).decode(), "mime_type": "image/png"}
    return jsonl({"text": text, "sender_id": "ana", "attachments": [image]})


def _photo_reply(env: dict[str, str], text: str) -> str:
    result = run_omega("chat", "--jsonl", env=env, stdin=_photo_message(text))
    assert result.returncode == 0, result.stderr
    [reply] = [e for e in result.events if e["kind"] == "reply"]
    return str(reply["text"])


def test_a_photo_reaches_an_openai_vision_model_as_an_image(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [OpenAIStep(text="A tiny red square.")]
    env = openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__VISION="true")
    assert _photo_reply(env, "What is in this photo?") == "A tiny red square."
    content = fake_openai.requests[-1].messages[-1]["content"]
    assert isinstance(content, list)
    urls = [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    texts = [p["text"] for p in content if p.get("type") == "text"]
    assert "What is in this photo?" in texts[0] and "[Attached file:" in texts[0]


def test_a_photo_reaches_anthropic_as_an_image_block(
    fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    fake_anthropic.script = [anthropic_server.Step(text="A tiny red square.")]
    assert _photo_reply(anthropic_env(fake_anthropic), "What is this?") == "A tiny red square."
    content = fake_anthropic.requests[-1].messages[-1]["content"]
    [image] = [block for block in content if block.get("type") == "image"]
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == PNG


def test_a_model_that_cannot_see_images_is_said_so_honestly(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """An OpenAI-compatible server of unknown abilities gets the path only, and the person is
    told by the code that the picture was not looked at, whatever the model says."""
    fake_openai.script = [OpenAIStep(text="Nice photo of a cat!")]
    text = _photo_reply(openai_env(fake_openai), "What is in this photo?")
    assert text.startswith("Nice photo of a cat!")
    assert "cannot see images" in text
    content = fake_openai.requests[-1].messages[-1]["content"]
    assert isinstance(content, str) and "[Attached file:" in content


@pytest.mark.no_store
def test_a_call_that_offers_no_tools_skips_the_agent_graph(
    fake_openai: FakeOpenAI, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: a tool-less call (classification, summaries, a reply without tools) is one
    model request without pydantic-ai's agent run; the request is the one the agent sends."""
    from pydantic_ai import Agent

    runs: list[int] = []
    original = Agent.run

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(Agent, "run", counted)
    config = config_for(openai=openai_section(fake_openai))
    provider = build_provider("openai", config, OmegaPaths(isolated_env))
    plain = complete(provider)
    assert (plain.text, plain.provider, runs) == ("echo: What is my name?", "openai", [])
    with_tools = complete(provider, dataclasses.replace(CONTEXT, use_tools=True))
    assert with_tools.text == "echo: What is my name?"
    # A call that may use tools but calls none is one request too (tests/integration/
    # test_first_request.py: the agent takes over only for a tool call).
    assert runs == []
    direct, offering = fake_openai.requests
    assert "tools" not in direct.body and offering.body["tools"]
    assert direct.messages == offering.messages  # the same history, prompt and instructions
    assert direct.messages[0] == {"role": "system", "content": SYSTEM}


@pytest.mark.no_store
def test_a_call_made_while_the_provider_is_being_prepared_does_not_break_its_import(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """A fresh process answers a call at once while `prepare` loads pydantic-ai on a worker
    thread: two threads importing it together met a circular import half-way (CI: "cannot
    import name 'RunContext' from partially initialized module"), and the call failed."""
    code = f"""
import asyncio
from pathlib import Path
from omega.config import Config
from omega.paths import OmegaPaths
from omega.providers import build_provider
from omega.types import ChatMessage, Context

section = {openai_section(fake_openai)!r}
provider = build_provider(
    "openai", Config.model_validate({{"provider": {{"openai": section}}}}), OmegaPaths(Path("x"))
)

async def main() -> None:
    context = Context(system_prompt="s", messages=[ChatMessage("user", "hi")])
    _, reply = await asyncio.gather(provider.prepare(), provider.complete(context))
    print(reply.text)

asyncio.run(main())
"""
    for _ in range(3):  # the window is the import itself: a few fresh processes
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout.strip() == "echo: hi"
