"""Replicas through the real gateway and pipeline (issue 30): a live replica's claim is never
taken; an expired one is, by the poll, and the kept reply is re-sent without asking the
provider again; a replica of this host that died is taken over at once at start; a message
typed into another replica's terminal is left to it; a stopped turn gives its claim back."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import pytest

from omega.gateway import answering, pipeline
from omega.gateway.gateway import Gateway
from omega.memory import Store
from omega.replica import replica_name
from omega.types import IncomingMessage, OutgoingMessage
from tests.conftest import MakeDeps
from tests.fakes.providers import DIRECT, ScriptedProvider

ELSEWHERE = "another-host/4026531836/4242/0badcafe"  # a live replica on another machine


class SharedChannel:
    """A channel any replica can send on (a bot API), recording what it sent."""

    name = "telegram"
    answers_from_any_replica = True

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []
        self.got = asyncio.Event()

    async def run(self, submit: object) -> None:
        await asyncio.Event().wait()

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)
        self.got.set()

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None


class LocalChannel(SharedChannel):
    """The terminal: its answers leave only from the process it was typed into."""

    name = "terminal"
    answers_from_any_replica = False


def kept_by(store: Store, replica: str, message: IncomingMessage, reply: str) -> None:
    """`replica` received and claimed the message, answered it, and stopped before sending."""
    assert store.inbox_put(message, replica)
    [claim] = store.inbox_claim(replica, 60, [message.channel], 10)
    assert store.inbox_start(replica, claim.message.id, 60) == 1
    assert store.inbox_store_reply(message.id, [message.answer(reply)])


def expire(store: Store) -> None:
    with store.transaction() as conn:
        conn.execute("UPDATE inbox SET lease_until = '2000-01-01T00:00:00.000000Z'")


async def serve_until(gateway: Gateway, done: asyncio.Event) -> None:
    stop = asyncio.Event()
    serving = asyncio.create_task(gateway.serve(stop, grace=5))
    try:
        await asyncio.wait_for(done.wait(), 20)
    finally:
        stop.set()
        await serving


def test_a_live_claim_is_left_alone_and_an_expired_one_is_finished_by_the_poll(
    make_deps: MakeDeps,
) -> None:
    provider = ScriptedProvider(default="never asked", plan=DIRECT)
    deps = make_deps(
        provider, OMEGA_OMEGA__INBOX_POLL_SECS="0.05", OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS="[42]"
    )
    store = deps.store
    kept_by(
        store,
        ELSEWHERE,
        IncomingMessage("telegram", "42", "book it", id="t-1", assurance="platform"),
        "Booked.",
    )
    typed = IncomingMessage("terminal", "me", "hello", id="j-1", assurance="local")
    assert store.inbox_put(typed, ELSEWHERE)
    channel, terminal = SharedChannel(), LocalChannel()

    async def run() -> None:
        gateway = Gateway(deps, [channel, terminal])
        assert await gateway.replay_inbox() == 0  # the other replica is alive
        expire(store)  # ... until its lease runs out
        await serve_until(gateway, channel.got)

    asyncio.run(run())
    assert [(m.kind, m.text, m.id) for m in channel.sent] == [("reply", "Booked.", "t-1#1")]
    assert provider.answered == []  # the provider was not asked again
    rows = {row["id"]: row["status"] for row in store.query("SELECT id, status FROM inbox")}
    # The terminal message waits for the replica it was typed into.
    assert rows == {"t-1": "done", "j-1": "pending"} and terminal.sent == []


def test_a_replica_of_this_host_that_died_is_taken_over_at_once(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(default="never asked", plan=DIRECT)
    deps = make_deps(provider)
    gone = subprocess.Popen(["true"])  # a pid that has just ended
    gone.wait()
    namespace = replica_name().split("/")[1]
    died = f"{socket.gethostname()}/{namespace}/{gone.pid}/deadbeef"
    kept_by(
        deps.store,
        died,
        IncomingMessage("terminal", "me", "book", id="j-1", assurance="local"),
        "Booked.",
    )
    terminal = LocalChannel()

    async def run() -> int:
        gateway = Gateway(deps, [terminal])
        replayed = await gateway.replay_inbox()  # no wait for the 60 s lease
        await gateway.drain()
        return replayed

    assert asyncio.run(run()) == 1
    assert [(m.kind, m.text) for m in terminal.sent] == [("reply", "Booked.")]
    assert provider.answered == []


def test_a_turn_stopped_by_shutdown_gives_its_claim_back(
    make_deps: MakeDeps, isolated_env: Path
) -> None:
    provider = ScriptedProvider(default="late", plan=DIRECT, delay=30)
    deps = make_deps(provider, OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS="[42]")
    channel = SharedChannel()

    async def run() -> None:
        gateway = Gateway(deps, [channel])
        await gateway.submit(
            IncomingMessage("telegram", "42", "slow one", id="t-1", assurance="platform")
        )
        stop = asyncio.Event()
        serving = asyncio.create_task(gateway.serve(stop, grace=0.2))
        await asyncio.sleep(0.3)
        stop.set()
        await serving
        workers = list(gateway.senders.workers.values())
        for worker in workers:  # the process ends: its tasks are cancelled
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    asyncio.run(run())
    [(holder, lease, attempts)] = deps.store.query(
        "SELECT claimed_by, lease_until, attempts FROM inbox WHERE id = 't-1'"
    )
    assert (holder, lease, attempts) == (None, None, 0)


def test_a_senders_queued_messages_are_taken_up_at_once_without_the_poll(
    make_deps: MakeDeps,
) -> None:
    provider = ScriptedProvider(default="ok", plan=DIRECT, delay=0.2)
    deps = make_deps(provider, OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS="[42]")
    channel = SharedChannel()

    async def run() -> None:
        gateway = Gateway(deps, [channel])  # not serving: no poll runs
        handled = [
            await gateway.submit(
                IncomingMessage("telegram", "42", f"number {n}", id=f"t-{n}", assurance="platform")
            )
            for n in range(3)
        ]
        await asyncio.wait_for(asyncio.gather(*handled), 10)

    asyncio.run(run())
    replies = [m.reply_to for m in channel.sent if m.kind == "reply"]
    assert replies == ["t-0", "t-1", "t-2"]


def test_a_message_after_the_answer_went_out_is_not_told_to_wait(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a sender's answer is out, their next message is not told "Got it, I'll get to this
    next" while the turn's bookkeeping finishes (CI, PostgreSQL: a Discord reply arrived with
    a stray acknowledgement); one sent while the answer is still coming is."""
    provider = ScriptedProvider(default="ok", plan=DIRECT)
    deps = make_deps(provider, OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS="[42]")
    deps.store.set_fact("42", "welcomed", "yes")
    channel = SharedChannel()
    answered_first = asyncio.Event()
    bookkeeping_done = asyncio.Event()
    real_handle = pipeline.handle_message

    async def slow_after_the_answer(deps: object, message: IncomingMessage, out: object) -> None:
        await real_handle(deps, message, out)  # type: ignore[arg-type]
        if message.id == "t-0":  # the answer is out; the turn's last steps take a while
            answered_first.set()
            await bookkeeping_done.wait()

    monkeypatch.setattr(answering, "handle_message", slow_after_the_answer)

    async def run() -> None:
        gateway = Gateway(deps, [channel])
        first = await gateway.submit(
            IncomingMessage("telegram", "42", "one", id="t-0", assurance="platform")
        )
        await asyncio.wait_for(answered_first.wait(), 10)
        assert [m.reply_to for m in channel.sent] == ["t-0"]
        second = await gateway.submit(
            IncomingMessage("telegram", "42", "two", id="t-1", assurance="platform")
        )
        bookkeeping_done.set()
        await asyncio.wait_for(asyncio.gather(first, second), 10)

    asyncio.run(run())
    assert [(m.kind, m.reply_to) for m in channel.sent] == [("reply", "t-0"), ("reply", "t-1")]
