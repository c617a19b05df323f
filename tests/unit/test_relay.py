"""The relay to a channel's leader is durable until sent (memory.relay, app.leadership): a
leader that takes messages and dies before sending them leaves them to the next leader once
its lease runs out, sent with the same stable id; a sent message leaves the queue; one that
keeps failing is dropped after MAX_RELAY_ATTEMPTS instead of blocking the queue."""

from __future__ import annotations

import asyncio
from pathlib import Path

from omega.app.fleet import Fleet
from omega.app.leadership import LedChannel
from omega.channels.base import Submit
from omega.memory import Store
from omega.memory.relay import MAX_RELAY_ATTEMPTS
from omega.types import OutgoingMessage


def test_a_taken_message_stays_queued_until_sent_and_a_dead_takers_lease_runs_out(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        message = OutgoingMessage("whatsapp", "351900000000", "see you at 8", id="m1#reply")
        store.relay_put("whatsapp", message, "follower")
        ((row, taken),) = store.relay_take("whatsapp", "old-leader", lease_s=60.0)
        assert taken.id == "m1#reply" and taken.text == "see you at 8"
        assert store.relay_take("whatsapp", "new-leader") == []  # the old lease still holds
        assert store.relay_waiting("whatsapp") == 1  # taken is not gone
        # The old leader died before sending: once its lease ran out, the next leader sends
        # the same message (its stable id lets a receiver drop a repeat).
        _lease_over(store)
        ((again, resent),) = store.relay_take("whatsapp", "new-leader")
        assert again == row and resent.id == "m1#reply"
        store.relay_done(again)
        assert store.relay_waiting("whatsapp") == 0
        assert store.relay_take("whatsapp", "anyone", lease_s=0.0) == []
    finally:
        store.close()


def _lease_over(store: Store) -> None:
    """Move every taken message's lease into the past (as time passing would)."""
    with store.transaction() as conn:
        conn.execute("UPDATE channel_relay SET taken_until = '2000-01-01T00:00:00+00:00'")


def test_a_message_that_keeps_failing_is_dropped_not_blocking_the_queue(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        store.relay_put("whatsapp", OutgoingMessage("whatsapp", "1", "bad"), "f")
        for _ in range(MAX_RELAY_ATTEMPTS):
            assert len(store.relay_take("whatsapp", "leader", lease_s=0.0)) == 1
        assert store.relay_take("whatsapp", "leader", lease_s=0.0) == []
        assert store.relay_waiting("whatsapp") == 0
    finally:
        store.close()


class Wire:
    """A channel whose first send fails (the session dropped), then records what it sends."""

    name = "whatsapp"

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []
        self.failures = 1
        self.got = asyncio.Event()

    async def run(self, submit: Submit) -> None:
        await asyncio.Event().wait()

    async def send(self, message: OutgoingMessage) -> None:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the session dropped")
        self.sent.append(message)
        self.got.set()

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None


def test_the_leaders_pump_sends_what_a_dead_leader_took_and_keeps_what_failed(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "memory.db")
    wire = Wire()
    led = LedChannel(wire, Fleet(store, 3.0, "new-leader"))

    async def scenario() -> None:
        store.relay_put("whatsapp", OutgoingMessage("whatsapp", "1", "first", id="a"), "f")
        store.relay_take("whatsapp", "dead-leader", lease_s=0.0)  # took it, died, lease over
        store.relay_put("whatsapp", OutgoingMessage("whatsapp", "2", "second", id="b"), "f")
        pump = asyncio.create_task(led._pump(wire))
        try:
            await asyncio.wait_for(wire.got.wait(), 10)
            for _ in range(500):  # the sent one leaves the queue right after its send
                if await store.call(store.relay_waiting, "whatsapp") == 1:
                    break
                await asyncio.sleep(0.01)
        finally:
            pump.cancel()

    try:
        asyncio.run(scenario())
        # "first" failed on the wire (taken, kept for after its lease); "second" went out.
        assert [m.id for m in wire.sent] == ["b"]
        assert store.relay_waiting("whatsapp") == 1
        assert store.relay_take("whatsapp", "later", lease_s=0.0) == []  # under its lease
    finally:
        store.close()
