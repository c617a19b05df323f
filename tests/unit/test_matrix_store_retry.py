"""A Matrix message read but not stored (the store away for a moment) is submitted again until
the store takes it: a store failure used to end the channel (only network errors were retried).
The sync token is saved only after every event of its sync was stored: a stop while the store
is away leaves the old token, so the next sync brings the event again. An event that cannot be
read is skipped, and audited and told to the owner."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from omega.channels import inbound
from omega.channels.matrix.channel import MatrixChannel, StoppedError
from omega.types import IncomingMessage
from tests.unit.test_fuzz_channels_matrix import ANA, DIRECT
from tests.unit.test_fuzz_channels_matrix import channel as a_channel

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

OLD, NEW = "s1_old", "s2_new"


def _text(event_id: str, body: str) -> dict[str, Any]:
    content = {"msgtype": "m.text", "body": body}
    return {"type": "m.room.message", "sender": ANA, "event_id": event_id, "content": content}


def _made(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[MatrixChannel, list[float]]:
    """A channel whose one sync since OLD brings `events` in the direct room (the next sync
    ends the loop), its pauses recorded, returning at once."""
    made = a_channel(tmp_path)
    made.state.next_batch = OLD
    syncs = 0

    async def sync(**kwargs: Any) -> Any:
        nonlocal syncs
        syncs += 1
        if syncs > 1:
            raise StoppedError
        assert kwargs["since"] == OLD
        timeline = SimpleNamespace(
            events=[SimpleNamespace(source=e) for e in events], limited=False, prev_batch=""
        )
        rooms = SimpleNamespace(invite={}, join={DIRECT: SimpleNamespace(timeline=timeline)})
        return SimpleNamespace(rooms=rooms, next_batch=NEW)

    made.client.sync = sync  # type: ignore[method-assign]
    pauses: list[float] = []

    async def pause(secs: float) -> None:
        pauses.append(secs)

    made._sleep = pause  # type: ignore[method-assign]
    return made, pauses


class Store:
    """The inbox behind `submit`: away for its first `away` calls (a stop at `stop_at`)."""

    def __init__(self, made: MatrixChannel, away: int, stop_at: int = 0) -> None:
        self.made, self.away, self.stop_at = made, away, stop_at
        self.calls = 0
        self.stored: list[str] = []

    async def submit(self, message: IncomingMessage) -> asyncio.Future[None]:
        self.calls += 1
        if self.calls == self.stop_at:
            await self.made.stop()
        if self.calls <= self.away:
            raise RuntimeError("the store is away")  # not a network error
        self.stored.append(message.text)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


async def _sync(made: MatrixChannel, store: Store) -> None:
    try:
        with pytest.raises(StoppedError):
            await made._sync_forever(store.submit)
    finally:
        await made.client.close()


async def test_a_message_the_store_refuses_for_a_while_is_stored_then_the_token_saved(
    tmp_path: Path,
) -> None:
    made, pauses = _made(tmp_path, [_text("$1", "remember the milk"), _text("$2", "and bread")])
    store = Store(made, away=8)
    await _sync(made, store)
    assert store.stored == ["remember the milk", "and bread"]
    first, cap = inbound.STORE_BACKOFF_FIRST_SECS, inbound.STORE_BACKOFF_MAX_SECS
    assert pauses[:6] == [first, first * 2, first * 4, first * 8, first * 16, cap]
    assert len(pauses) == 8
    assert made.state.next_batch == NEW


async def test_a_stop_while_the_store_is_away_keeps_the_old_sync_token(tmp_path: Path) -> None:
    made, _ = _made(tmp_path, [_text("$1", "never stored")])
    store = Store(made, away=1000, stop_at=3)
    await _sync(made, store)
    assert store.stored == []
    assert made.state.next_batch == OLD  # the next start syncs from here: the event again
    assert not made.state.path.exists()


async def test_an_event_that_cannot_be_read_is_skipped_and_reported(tmp_path: Path) -> None:
    made, _ = _made(tmp_path, [_text("$p", "poison"), _text("$2", "fine")])
    real = made._content

    async def content(content: Any) -> Any:
        if content.get("body") == "poison":
            raise KeyError("a shape nobody foresaw")
        return await real(content)

    made._content = content  # type: ignore[method-assign]
    reported: list[tuple[Any, ...]] = []

    async def dropped(ident: int | str, tries: int, error: str) -> None:
        reported.append((ident, tries, error))

    made.dropped = dropped
    store = Store(made, away=0)
    await _sync(made, store)
    assert store.stored == ["fine"]
    assert reported == [("$p", 1, "KeyError('a shape nobody foresaw')")]
    assert made.state.next_batch == NEW
