"""A mail read but not stored (the store away for a moment) is read again once the store takes
it, and only then marked seen and passed: a store failure used to end the e-mail channel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.channels.email import channel as email_channel
from omega.types import IncomingMessage
from tests.fakes.imap_server import FakeImap
from tests.unit.test_email_channel import _channel, _config, _connect_first, _mail, imap

__all__ = ["imap"]  # the fixture

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_a_mail_the_store_refuses_for_a_while_is_stored_then_seen(
    imap: FakeImap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(email_channel, "RETRY_SECS", (0.0,))  # no waiting between tries
    config = _config(imap)
    _connect_first(config, tmp_path)
    imap.deliver(_mail("first", "<a1@example.org>"))
    channel = _channel(config, tmp_path)
    calls: list[str] = []
    seen_while_away: list[list[int]] = []

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        calls.append(message.id)
        if len(calls) <= 3:
            seen_while_away.append(imap.seen())
            raise RuntimeError("the store is away")  # not a mailbox error
        await channel.stop()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    asyncio.run(asyncio.wait_for(channel.run(submit), 30))  # returns: not raised
    ident = f"email:{imap.uidvalidity}:1"
    assert calls == [ident] * 4
    assert seen_while_away == [[], [], []]
    assert channel.state.last_uid == 1 and imap.seen() == [1]
