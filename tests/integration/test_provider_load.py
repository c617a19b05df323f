"""Many callers, one provider (issue 27): the adaptive limit backs off on 429 and waits out
`retry-after`, and no burst opens more sockets than the provider's pool, through
`omega chat --jsonl` with the scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio

import pytest

from omega.providers.api import ApiProvider, ApiSettings
from omega.types import ChatMessage, Context
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step

EVERYONE = {"OMEGA_CHANNEL__TERMINAL__ALLOWED_USERS": '["*"]', "OMEGA_PROVIDER__CLASSIFY": "false"}


def test_429s_halve_the_limit_and_retry_after_pauses_new_calls(fake_openai: FakeOpenAI) -> None:
    """Ceiling 8: the first eight calls are refused with 429, once each (issue 38: the SDK does
    not retry on its own, the limiter sees each refusal at once); the limit halves to 4 and
    nothing is asked for retry-after's 1 s; then all sixteen people are answered, the eight
    refused ones asked again by Omega, a few at a time."""
    fake_openai.script = [Step(status=429, text="slow down", retry_after=1)] * 8 + [
        Step(text="Hi.", hang_secs=0.5)
    ] * 16
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_LIMITS__MAX_CONCURRENT_PROVIDER_CALLS="8", **EVERYONE),
        stdin=jsonl(*({"text": "hello", "sender_id": f"p{i}"} for i in range(16))),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    errors = [e for e in result.events if e["kind"] == "error"]
    replies = [e for e in result.events if e["kind"] == "reply"]
    assert not errors and len(replies) == 16
    hellos = [r for r in fake_openai.requests if r.last_user_text == "hello"]
    refused, answered = hellos[:8], hellos[8:]
    assert len(answered) == 16
    # Halved to 4, then one more after each window of answers: never the ceiling again here.
    assert fake_openai.max_in_flight <= 6
    # Nothing is answered before the first refusal's retry-after has passed.
    assert min(r.at for r in answered) - min(r.at for r in refused) >= 0.9


def test_a_thousand_senders_never_open_more_sockets_than_the_pool(
    fake_openai: FakeOpenAI,
) -> None:
    """The finding: 1,000 senders at once opened 318 sockets. With the default ceiling (64)
    every one is answered and the provider never sees more than 64 sockets open at once."""
    # Long enough for more than 64 to be asked at once: the provider then sees exactly the
    # ceiling (fewer would mean the load never tested it). 1 s, not 2: the run takes half.
    fake_openai.default_delay = 1.0
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, **EVERYONE),
        stdin=jsonl(*({"text": "hello", "sender_id": f"p{i}"} for i in range(1000))),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert len([e for e in result.events if e["kind"] == "reply"]) == 1000
    assert 1 < fake_openai.max_open_connections <= 64
    assert fake_openai.max_in_flight == 64


@pytest.mark.no_store
async def test_the_pool_alone_bounds_the_sockets(fake_openai: FakeOpenAI) -> None:
    """Forty calls at once straight to the provider (no limiter in front): its one pool
    opens five sockets at most."""
    fake_openai.default_delay = 0.2
    provider = ApiProvider(
        ApiSettings(
            name="openai",
            model="fake-model",
            api_key="sk-test",
            base_url=fake_openai.base_url,
            max_connections=5,
        )
    )
    context = Context("", [ChatMessage("user", "hi")], use_tools=False)
    replies = await asyncio.gather(*(provider.complete(context) for _ in range(40)))
    assert [r.text for r in replies] == ["echo: hi"] * 40
    assert fake_openai.max_open_connections <= 5
    assert fake_openai.connections <= 5  # kept alive and reused, not reopened
