"""A failing memory or audit write never stops the reply; provider bugs become friendly text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.app import bootstrap, pipeline_deps
from omega.gateway.pipeline import PipelineDeps, handle_message
from omega.memory import Store
from omega.types import Context, IncomingMessage, OutgoingMessage, Reply


class Recorder:
    """An Outbox that keeps what was sent."""

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)

    async def typing(self, channel: str, target: str) -> None:
        return None


class EchoProvider:
    name = "echo"

    def availability(self) -> tuple[bool, str]:
        return True, "test"

    async def prepare(self) -> None:
        return None

    async def complete(self, context: Context) -> Reply:
        return Reply(text=f"echo: {context.prompt}", provider="echo")


class BrokenProvider(EchoProvider):
    async def complete(self, context: Context) -> Reply:
        raise KeyError("provider bug")


def deps_with(provider: object, isolated_env: Path) -> PipelineDeps:
    runtime = bootstrap(isolated_env)
    deps = pipeline_deps(runtime, Store(runtime.paths.db))
    deps.provider = provider  # type: ignore[assignment]
    return deps


def test_memory_and_audit_failures_do_not_stop_the_reply(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = deps_with(EchoProvider(), isolated_env)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    for name in ("facts", "set_fact", "audit", "store_exchange", "recent_messages"):
        monkeypatch.setattr(deps.store, name, broken)
    out = Recorder()
    asyncio.run(handle_message(deps, IncomingMessage("terminal", "u1", "hello"), out))
    assert [m.text for m in out.sent if m.kind == "reply"] == ["echo: hello"]


def test_a_provider_bug_is_a_friendly_error(isolated_env: Path) -> None:
    deps = deps_with(BrokenProvider(), isolated_env)
    out = Recorder()
    asyncio.run(handle_message(deps, IncomingMessage("terminal", "u1", "hello"), out))
    [error] = [m for m in out.sent if m.kind == "error"]
    assert error.text == "Something went wrong on my side. Please try again."
    [row] = deps.store.audit_entries()
    assert row["status"] == "error"
    assert "provider bug" in str(row["detail"])
