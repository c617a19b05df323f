"""Wake-ups between replicas (memory.wakeups): on PostgreSQL a committed inbox row or relayed
message wakes the other replicas' waiting loops at once (LISTEN/NOTIFY), a rolled-back one
does not; on SQLite there is nothing to listen to and the poll stays."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from omega.memory import Store
from omega.memory.wakeups import INBOX, relay_topic, wait_for
from omega.types import IncomingMessage, OutgoingMessage
from tests.postgres import PostgresServer


@pytest.fixture
def two_replicas(postgres_server: PostgresServer) -> Iterator[tuple[Store, Store]]:
    url = postgres_server.new_database()
    first, second = Store(url), Store(url)
    try:
        yield first, second
    finally:
        first.close()
        second.close()
        postgres_server.drop(url)


def test_a_committed_inbox_row_wakes_the_other_replica_and_a_rolled_back_one_does_not(
    two_replicas: tuple[Store, Store],
) -> None:
    writer, waiter = two_replicas

    async def scenario() -> tuple[bool, bool, bool]:
        inbox = waiter.wake_event(INBOX)
        relay = waiter.wake_event(relay_topic("whatsapp"))
        assert inbox is not None and relay is not None
        await asyncio.to_thread(_listening, waiter)
        inbox.clear()  # the first LISTEN wakes every topic once (what came while connecting)
        relay.clear()
        # A write that rolls back notifies nobody ...
        with pytest.raises(RuntimeError), writer.transaction() as conn:
            writer._notify(conn, INBOX)
            raise RuntimeError("rolled back")
        # ... while a committed relay row (after it, in commit order) does.
        await asyncio.to_thread(
            writer.relay_put, "whatsapp", OutgoingMessage("whatsapp", "351", "hi"), "r1"
        )
        relayed = await wait_for(relay, 10.0)
        woken_by_rollback = inbox.is_set()
        message = IncomingMessage("telegram", "42", "hello", id="m1", assurance="platform")
        await asyncio.to_thread(writer.inbox_put, message, "r1")
        return relayed, woken_by_rollback, await wait_for(inbox, 10.0)

    relayed, woken_by_rollback, woken = asyncio.run(scenario())
    assert relayed and woken
    assert not woken_by_rollback


def _listening(store: Store) -> None:
    listener = store._listener
    assert listener is not None
    assert listener.listening.wait(10.0)


@pytest.mark.sqlite_only
def test_sqlite_has_no_wake_ups_and_the_wait_is_the_poll(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        assert store.wake_event(INBOX) is None
        assert asyncio.run(wait_for(None, 0.01)) is False
    finally:
        store.close()


@pytest.mark.no_store
@pytest.mark.parametrize("turns", [0, 1, 2])
def test_a_loop_waiting_for_a_wake_up_stops_when_cancelled_as_it_is_woken(turns: int) -> None:
    """The inbox poll (`while True` around `wait_for`) is cancelled when intake stops; a
    notification arriving in that instant (a few loop turns either side) once swallowed the
    cancellation under Python 3.11's `asyncio.wait_for`, and `omega chat` never ended."""

    async def scenario() -> bool:
        woken = asyncio.Event()

        async def poll() -> None:
            while True:
                await wait_for(woken, 10.0)

        task = asyncio.create_task(poll())
        await asyncio.sleep(0)  # the poll waits
        woken.set()  # the listener thread's call_soon_threadsafe(event.set)
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=2.0)
        return task in done and task.cancelled()

    assert asyncio.run(scenario())
