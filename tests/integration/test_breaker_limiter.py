"""Issue 38, through the real FallbackProvider chain built from config (`make_deps`, as
`omega start` builds it): every way a provider is down opens the breaker, so the next message
does not touch it; a 4xx does not; each member has its own limiter (a fallback's 429 backs off
the fallback, not the first provider) and the probes go through it; a probe is cheap."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from omega.paths import OmegaPaths
from omega.providers.fallback import FallbackProvider
from omega.turn import PipelineDeps, ask_provider
from omega.types import ChatMessage, Context
from tests.conftest import MakeDeps
from tests.fakes.openai_server import FakeOpenAI, Step

KEY = "sk-test-secret-key-0123456789"
ASK = Context("You are a test assistant.", [ChatMessage("user", "hello")], sender_id="ana")


class ResettingPort:
    """A port that accepts each connection, counts it and resets it at once (RST): a provider
    whose connections are reset."""

    def __init__(self) -> None:
        self.accepts = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.accepts += 1
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    def close(self) -> None:
        self._sock.close()


def closed_port() -> int:
    """A port nothing listens on: connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def resetting() -> Iterator[ResettingPort]:
    port = ResettingPort()
    yield port
    port.close()


def chain_env(primary_url: str, fallback: FakeOpenAI, **extra: str) -> dict[str, str]:
    """openai first (at `primary_url`), ollama (the scripted server) as its fallback."""
    return {
        "OMEGA_PROVIDER__DEFAULT": "openai",
        "OMEGA_PROVIDER__OPENAI__BASE_URL": primary_url,
        "OMEGA_PROVIDER__OPENAI__API_KEY": KEY,
        "OMEGA_PROVIDER__OPENAI__MODEL": "primary-model",
        "OMEGA_PROVIDER__OLLAMA__BASE_URL": fallback.base_url,
        "OMEGA_PROVIDER__OLLAMA__MODEL": "fallback-model",
        "OMEGA_PROVIDER__FALLBACK": json.dumps(["ollama"]),
        "OMEGA_PROVIDER__TIMEOUT_SECS": "10",
        **extra,
    }


def chain(deps: PipelineDeps) -> FallbackProvider:
    assert isinstance(deps.provider, FallbackProvider)
    return deps.provider


def test_a_reset_primary_is_skipped_on_the_next_message(
    make_deps: MakeDeps, fake_openai: FakeOpenAI, resetting: ResettingPort
) -> None:
    deps = make_deps(**chain_env(f"http://127.0.0.1:{resetting.port}/v1", fake_openai))

    async def two_messages() -> list[int]:
        seen = []
        for _ in range(2):
            reply = await ask_provider(deps, ASK)
            assert (reply.text, reply.provider) == ("echo: hello", "ollama")
            seen.append(resetting.accepts)
        return seen

    first, second = asyncio.run(two_messages())
    assert first == 1  # one attempt: no SDK retries
    assert second == first  # the second message did not touch the primary
    assert chain(deps).is_open(0)


def test_a_refused_primary_opens_the_breaker(make_deps: MakeDeps, fake_openai: FakeOpenAI) -> None:
    deps = make_deps(**chain_env(f"http://127.0.0.1:{closed_port()}/v1", fake_openai))

    async def two_messages() -> None:
        await ask_provider(deps, ASK)
        assert chain(deps).is_open(0)  # refused: the primary is down, the next skip it
        reply = await ask_provider(deps, ASK)
        assert reply.provider == "ollama"

    asyncio.run(two_messages())
    assert len(fake_openai.requests) == 2


@pytest.mark.parametrize(("status", "opens"), [(500, True), (502, True), (401, False)])
def test_5xx_open_the_breaker_and_4xx_do_not(
    make_deps: MakeDeps, fake_openai: FakeOpenAI, status: int, opens: bool
) -> None:
    with FakeOpenAI() as primary:
        primary.default_status = status
        deps = make_deps(**chain_env(primary.base_url, fake_openai))
        reply = asyncio.run(ask_provider(deps, ASK))
        assert reply.provider == "ollama"
        assert chain(deps).is_open(0) is opens
        assert len(primary.requests) == 1


def test_a_429_backs_off_the_member_that_gave_it(
    make_deps: MakeDeps, fake_openai: FakeOpenAI, resetting: ResettingPort
) -> None:
    """The primary is down (skipped); the fallback answers 429 with retry-after 1 s: the
    fallback's own limiter halves and pauses, the primary's is untouched, and Omega asks the
    fallback again after that second."""
    deps = make_deps(
        **chain_env(
            f"http://127.0.0.1:{resetting.port}/v1",
            fake_openai,
            OMEGA_LIMITS__MAX_CONCURRENT_PROVIDER_CALLS="8",
        )
    )
    fake_openai.script = [Step(text="first")]

    async def scenario() -> tuple[int, int, float]:
        await ask_provider(deps, ASK)  # opens the primary's breaker
        fake_openai.script = [Step(status=429, retry_after=1), Step(text="after the wait")]
        started = time.perf_counter()
        reply = await ask_provider(deps, ASK)
        took = time.perf_counter() - started
        assert reply.text == "after the wait"
        fallback = deps.state.provider_limiter("ollama", 8)
        primary = deps.state.provider_limiter("openai", 8)
        return fallback.limit, primary.limit, took

    fallback_limit, primary_limit, took = asyncio.run(scenario())
    assert fallback_limit == 4 and primary_limit == 8
    assert took >= 0.9


def test_the_probe_goes_through_the_members_limiter_and_is_cheap(
    make_deps: MakeDeps, fake_openai: FakeOpenAI
) -> None:
    with FakeOpenAI() as primary:
        primary.default_status = 500
        deps = make_deps(
            **chain_env(
                primary.base_url,
                fake_openai,
                OMEGA_PROVIDER__BREAKER_SECS="0.2",
                OMEGA_LIMITS__MAX_CONCURRENT_PROVIDER_CALLS="8",
            )
        )

        async def scenario() -> None:
            await ask_provider(deps, ASK)  # a 500: the breaker opens
            assert chain(deps).is_open(0) and len(primary.requests) == 1
            # The primary asked to wait (a retry-after): its probe waits too.
            deps.state.provider_limiter("openai", 8).overloaded(retry_after=2)
            await asyncio.sleep(0.3)
            await ask_provider(deps, ASK)  # the probe is due, but the limiter holds it
            await asyncio.sleep(0.8)
            assert len(primary.requests) == 1
            # Once the wait is over the probe is sent: a few tokens, no tools, one message.
            primary.default_status = 200
            for _ in range(50):
                if not chain(deps).is_open(0):
                    break
                await asyncio.sleep(0.1)
            assert not chain(deps).is_open(0)

        asyncio.run(scenario())
        probe = primary.requests[-1].body
        assert int(probe.get("max_completion_tokens") or probe["max_tokens"]) <= 5
        assert "tools" not in probe
        assert len(probe["messages"]) == 2  # the instruction and "ping"


@pytest.mark.no_store
@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic", "gemini"])
def test_the_sdk_clients_do_not_retry_on_their_own(name: str) -> None:
    from omega.providers.api import ApiProvider, ApiSettings

    provider = ApiProvider(
        ApiSettings(name=name, model="m", api_key="k", base_url="http://127.0.0.1:9/v1")
    )
    client = provider._model("m").client  # type: ignore[attr-defined]
    if name == "gemini":
        options = client._api_client._http_options.retry_options
        assert options is not None and options.attempts == 1
    else:
        assert client.max_retries == 0


@pytest.mark.no_store
def test_one_500_is_asked_once(fake_openai: FakeOpenAI) -> None:
    """Issue 38: the SDK made three attempts at a 5xx before Omega heard of it."""
    from omega.providers import build_provider
    from omega.providers.base import ProviderError
    from tests.integration.test_api_providers import config_for, openai_section

    fake_openai.default_status = 500
    config = config_for(openai=openai_section(fake_openai))
    provider = build_provider("openai", config, deps_paths())
    with pytest.raises(ProviderError) as caught:
        asyncio.run(provider.complete(ASK))
    assert caught.value.kind == "unavailable"
    assert len(fake_openai.requests) == 1


def deps_paths() -> OmegaPaths:
    return OmegaPaths(Path("unused"))
