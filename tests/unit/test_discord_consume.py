"""The Discord consumer loses nothing: a message read but not stored (the store away a while) is
submitted again until it is, once, and the messages after it follow in order; only one that
cannot be read is given up, after a few tries (reported as dropped), and the next still flows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import discord
import pytest

from omega.channels import inbound
from omega.channels.discord.channel import DiscordChannel
from omega.types import IncomingMessage
from tests.unit.test_fuzz_channels_discord import Cdn, a_message, a_user
from tests.unit.test_fuzz_channels_discord import channel as a_channel

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ANA = 42


def a_dm(channel: DiscordChannel, message_id: int, text: str) -> discord.Message:
    """A DM from Ana, read by discord.py as its gateway parser does."""
    data = a_message(message_id, 500, a_user(ANA, "ana"), text)
    assert channel.client is not None
    state = channel.client._connection
    where, _ = state._get_guild_channel(data)  # type: ignore[arg-type]
    return discord.Message(state=state, channel=where, data=data)  # type: ignore[arg-type]


class Store:
    """The inbox behind `submit`: away for its first `away` calls, then taking each message."""

    def __init__(self, away: int = 0) -> None:
        self.away = away
        self.calls: list[str] = []
        self.stored: list[str] = []

    async def submit(self, message: IncomingMessage) -> asyncio.Future[None]:
        self.calls.append(message.id)
        if len(self.calls) <= self.away:
            raise ConnectionError("the store is away")
        self.stored.append(message.id)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


async def consume(channel: DiscordChannel, store: Store, last: str) -> None:
    """Run the consumer until `last` is stored (the queue is in order: all before it are done)."""
    task = asyncio.create_task(channel._consume(store.submit))
    try:
        for _ in range(10_000):  # turns of the loop, not time: the pauses return at once
            if last in store.stored or task.done():
                break
            await asyncio.sleep(0)
        else:
            raise AssertionError(f"stored {store.stored} of {store.calls}")
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.fixture
def made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[DiscordChannel, list[float]]:
    """A channel as after READY, whose pauses are recorded and return at once."""
    channel = a_channel(Cdn(), tmp_path)
    pauses: list[float] = []

    async def pause(secs: float) -> None:
        pauses.append(secs)
        await asyncio.sleep(0)

    monkeypatch.setattr(channel, "_sleep", pause)
    return channel, pauses


async def test_a_message_the_store_refuses_for_a_while_is_stored_once_and_in_order(
    made: tuple[DiscordChannel, list[float]],
) -> None:
    channel, pauses = made
    for message_id, text in ((101, "first"), (102, "second"), (103, "third")):
        channel._queue.put_nowait((a_dm(channel, message_id, text), None))
    store = Store(away=5)  # five failed submits: more than the old three tries

    await consume(channel, store, "discord:103")

    assert store.stored == ["discord:101", "discord:102", "discord:103"]
    assert store.calls == ["discord:101"] * 6 + ["discord:102", "discord:103"]
    first, cap = inbound.STORE_BACKOFF_FIRST_SECS, inbound.STORE_BACKOFF_MAX_SECS
    assert pauses == [min(first * 2**n, cap) for n in range(5)]


async def test_the_pause_between_submits_stops_growing_at_the_cap(
    made: tuple[DiscordChannel, list[float]],
) -> None:
    channel, pauses = made
    channel._queue.put_nowait((a_dm(channel, 101, "hello"), None))
    store = Store(away=12)

    await consume(channel, store, "discord:101")

    assert store.stored == ["discord:101"]
    assert max(pauses) == pauses[-1] == inbound.STORE_BACKOFF_MAX_SECS
    assert pauses == sorted(pauses)


async def test_a_message_that_cannot_be_read_is_given_up_and_the_next_flows(
    made: tuple[DiscordChannel, list[float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    channel, _ = made
    reads: list[int] = []
    dropped: list[tuple[int | str, int, str]] = []
    read = channel._incoming

    async def incoming(message: discord.Message, dm: bool) -> IncomingMessage | None:
        reads.append(message.id)
        if message.id == 201:
            raise KeyError("a shape nobody knows")
        return await read(message, dm)

    async def report(message_id: int | str, tries: int, error: str) -> None:
        dropped.append((message_id, tries, error))

    monkeypatch.setattr(channel, "_incoming", incoming)
    channel._dropped = report
    channel._queue.put_nowait((a_dm(channel, 201, "unreadable"), None))
    channel._queue.put_nowait((a_dm(channel, 202, "after it"), None))
    store = Store()

    await consume(channel, store, "discord:202")

    assert reads == [201] * inbound.READ_ATTEMPTS + [202]
    assert store.stored == ["discord:202"]
    assert dropped == [("201", inbound.READ_ATTEMPTS, "KeyError('a shape nobody knows')")]


async def test_a_stop_while_the_store_is_away_gives_nothing_up(
    made: tuple[DiscordChannel, list[float]],
) -> None:
    channel, _ = made
    channel._queue.put_nowait((a_dm(channel, 301, "hello"), None))
    store = Store(away=10**6)

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if len(store.calls) == 2:
            await channel.stop()  # while the third try is refused
        return await store.submit(message)

    await asyncio.wait_for(channel._consume(submit), 5)  # returns by itself, not cancelled

    assert store.calls == ["discord:301"] * 3 and store.stored == []
