"""A Slack message read but not stored (the store away for a moment) is submitted again until
the store takes it, and only then acknowledged: Slack delivers an unacknowledged event three
more times at most, minutes apart, so leaving it to Slack lost it in a longer outage. One that
cannot be read is given up after a few tries, audited and told to the owner, and acknowledged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from omega.channels import inbound
from omega.channels.health import HealthReporter
from omega.channels.slack.channel import SlackChannel
from omega.channels.slack.config import SlackConfig
from omega.channels.slack.state import SlackState
from omega.types import IncomingMessage

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

TEAM = "T0TEAM0001"
ANA = "U0ANA00001"


def _channel(tmp_path: Path) -> tuple[SlackChannel, list[float], list[tuple[Any, ...]]]:
    dropped: list[tuple[Any, ...]] = []

    async def report(ident: int | str, tries: int, error: str) -> None:
        dropped.append((ident, tries, error))

    config = SlackConfig(enabled=True, allowed_users=[ANA])
    state = SlackState.load(tmp_path / "slack.state.json")
    health = HealthReporter(None, lambda: "")
    channel = SlackChannel(config, "xoxb-1", "xapp-1", state, health, report)
    channel.team, channel.bot_user_id = TEAM, "U0OMEGA001"
    channel._names[ANA] = "Ana"  # no users.info call
    pauses: list[float] = []

    async def sleep(secs: float) -> None:  # no waiting: the pauses are recorded
        pauses.append(secs)

    channel._sleep = sleep  # type: ignore[method-assign]
    return channel, pauses, dropped


def _dm(ts: str, text: str) -> dict[str, Any]:
    event = {"type": "message", "user": ANA, "channel": "D0ANA00001", "ts": ts, "text": text}
    return {"team_id": TEAM, "event": event | {"channel_type": "im"}}


class Store:
    """The inbox behind `submit`: away for its first `away` calls."""

    def __init__(self, away: int = 0) -> None:
        self.away = away
        self.calls = 0
        self.stored: list[str] = []

    async def submit(self, message: IncomingMessage) -> asyncio.Future[None]:
        self.calls += 1
        if self.calls <= self.away:
            raise ConnectionError("the store is away")
        self.stored.append(message.text)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


async def test_a_message_the_store_refuses_for_a_while_is_stored_before_the_ack(
    tmp_path: Path,
) -> None:
    channel, pauses, dropped = _channel(tmp_path)
    store = Store(away=12)
    channel._submit = store.submit
    await channel._on_event(_dm("1.000001", "remember the milk"))  # returns: Bolt acks
    await channel._on_event(_dm("1.000002", "and the bread"))
    assert store.stored == ["remember the milk", "and the bread"]
    first, cap = inbound.STORE_BACKOFF_FIRST_SECS, inbound.STORE_BACKOFF_MAX_SECS
    assert pauses[:6] == [first, first * 2, first * 4, first * 8, first * 16, cap]
    assert len(pauses) == 12 and max(pauses) == cap
    assert dropped == []


async def test_a_stop_while_the_store_is_away_leaves_the_event_unacknowledged(
    tmp_path: Path,
) -> None:
    channel, pauses, _ = _channel(tmp_path)
    store = Store(away=1000)

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if store.calls == 3:
            await channel.stop()
        return await store.submit(message)

    channel._submit = submit
    with pytest.raises(inbound.Stopped):  # Bolt answers no ack: Slack sends it again
        await channel._on_event(_dm("1.000001", "never stored"))
    assert store.stored == [] and len(pauses) == 3


async def test_a_message_that_cannot_be_read_is_given_up_reported_and_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel, pauses, dropped = _channel(tmp_path)
    store = Store()
    channel._submit = store.submit
    real = channel._incoming

    async def incoming(found: Any) -> IncomingMessage:
        if "poison" in found.text:
            raise KeyError("a shape nobody knows")
        return await real(found)

    monkeypatch.setattr(channel, "_incoming", incoming)
    await channel._on_event(_dm("1.000001", "poison"))  # returns: acknowledged, not retried
    await channel._on_event(_dm("1.000002", "fine"))
    assert store.stored == ["fine"]
    tries = inbound.READ_ATTEMPTS
    assert dropped == [
        (f"slack:{TEAM}:D0ANA00001:1.000001", tries, "KeyError('a shape nobody knows')")
    ]
    assert pauses == [inbound.READ_RETRY_SECS] * (tries - 1)
