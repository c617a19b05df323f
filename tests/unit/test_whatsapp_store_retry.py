"""A WhatsApp message read but not stored (the store away for a moment) is tried again until
the store takes it, never dropped: WhatsApp does not deliver it again by itself. It is marked
read only once stored."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.channels.inbound import STORE_BACKOFF_MAX_SECS
from omega.channels.whatsapp.channel import WhatsAppChannel
from omega.config.channels import WhatsAppConfig
from omega.types import IncomingMessage
from tests.fakes.whatsapp_client import OWNER_JID, FakeWhatsApp, self_message

pytestmark = pytest.mark.no_store


def _channel(tmp_path: Path) -> tuple[WhatsAppChannel, list[float]]:
    channel = WhatsAppChannel(WhatsAppConfig(), FakeWhatsApp(), tmp_path / "session")
    channel.account = OWNER_JID
    pauses: list[float] = []

    async def sleep(secs: float) -> None:  # no waiting: the pauses are recorded
        pauses.append(secs)

    channel._sleep = sleep  # type: ignore[method-assign]
    return channel, pauses


async def test_a_message_the_store_refuses_for_a_while_is_stored_once_it_can(
    tmp_path: Path,
) -> None:
    channel, pauses = _channel(tmp_path)
    stored: list[str] = []
    refusals = iter(range(12))

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if next(refusals, None) is not None:
            raise OSError("the store is away")
        stored.append(message.text)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)  # stored: the reply's own future does not matter here
        return done

    channel._submit = submit
    await channel._received(self_message("remember the milk", "M1").message)
    await channel._received(self_message("and the bread", "M2").message)
    assert stored == ["remember the milk", "and the bread"]
    assert pauses[:6] == [1.0, 2.0, 4.0, 8.0, 16.0, STORE_BACKOFF_MAX_SECS]
    assert len(pauses) == 12 and max(pauses) == STORE_BACKOFF_MAX_SECS


async def test_a_stop_while_the_store_is_away_ends_the_tries(tmp_path: Path) -> None:
    channel, pauses = _channel(tmp_path)

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if len(pauses) == 3:
            channel._stop.set()
        raise OSError("the store is away")

    channel._submit = submit
    await channel._received(self_message("never stored", "M1").message)
    assert len(pauses) == 3  # the refusal that came with the stop is not waited on
