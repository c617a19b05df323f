""" "Got it, I'll get to this next" is said only when an earlier message of the sender's is
still unanswered: never to a message the poll or the sender's worker took up between its
arrival in the inbox and its dispatch (a race the PostgreSQL run lost once: a piped chat's
second line was acknowledged after the first line's answer was out)."""

from __future__ import annotations

import asyncio

from omega.gateway.gateway import Gateway
from omega.gateway.senders import Senders
from omega.types import IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.channel import RecordingTerminal
from tests.fakes.providers import DIRECT, ScriptedProvider


def typed(number: int, text: str) -> IncomingMessage:
    return IncomingMessage("terminal", "me", text, id=f"j-{number}", assurance="local")


def run_race(make_deps: MakeDeps, monkeypatch: object, *, answered_first: bool) -> list[str]:
    """Two lines, the second taken up by the poll before its own dispatch runs (and, with
    `answered_first`, answered before it); the kinds of what the terminal was sent."""
    provider = ScriptedProvider(default="done", plan=DIRECT)
    deps = make_deps(provider)
    deps.store.set_fact("me", "welcomed", "true")  # acknowledgements apply
    terminal = RecordingTerminal()
    real_dispatch = Senders.dispatch

    async def poll_wins(self: Senders, message: IncomingMessage, durable: bool) -> None:
        if message.id == "j-2":  # the poll claims it first, as it may on PostgreSQL
            await self.take_all(await self.claims.claim(16))
            if answered_first:
                await self.drain()
        await real_dispatch(self, message, durable)

    async def run() -> None:
        gateway = Gateway(deps, [terminal])
        await (await gateway.submit(typed(1, "first")))
        assert [m.kind for m in terminal.sent] == ["reply"]
        with monkeypatch.context() as patch:  # type: ignore[attr-defined]
            patch.setattr(Senders, "dispatch", poll_wins)
            await (await gateway.submit(typed(2, "second")))
        await gateway.drain()

    asyncio.run(run())
    return [m.kind for m in terminal.sent]


def test_a_message_the_poll_took_up_before_its_dispatch_is_not_acknowledged(
    make_deps: MakeDeps, monkeypatch: object
) -> None:
    assert run_race(make_deps, monkeypatch, answered_first=False) == ["reply", "reply"]


def test_a_message_answered_before_its_dispatch_is_not_acknowledged(
    make_deps: MakeDeps, monkeypatch: object
) -> None:
    assert run_race(make_deps, monkeypatch, answered_first=True) == ["reply", "reply"]


def test_a_message_behind_an_unanswered_one_is_still_acknowledged(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(default="done", plan=DIRECT, delay=0.5)
    deps = make_deps(provider)
    deps.store.set_fact("me", "welcomed", "true")
    terminal = RecordingTerminal()

    async def run() -> None:
        gateway = Gateway(deps, [terminal])
        first = await gateway.submit(typed(1, "first"))
        second = await gateway.submit(typed(2, "second"))
        await asyncio.gather(first, second)

    asyncio.run(run())
    kinds = [m.kind for m in terminal.sent]
    assert kinds == ["ack", "reply", "reply"]
