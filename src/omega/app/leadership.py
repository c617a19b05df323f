"""Channels only one replica may receive on (Telegram's one getUpdates consumer, the one
WhatsApp session): the replica holding the lease `channel:<name>` runs the channel's `run`;
every replica sends through it (the Bot API takes a message from anyone holding the token).
A replica that is not the leader waits, and starts receiving when it takes the lease over."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import cast

from omega.app.fleet import Fleet
from omega.channels.base import Channel, PairingChannel, Send, Submit
from omega.types import OutgoingMessage

log = logging.getLogger(__name__)

Rebuild = Callable[[], Channel]


class LedChannel:
    """`inner`'s receiving under the lease `channel:<name>`; its sending everywhere.

    A channel stopped because its lease was lost cannot be run again: `rebuild` (the
    plug-in's factory) makes a fresh one to wait with; without it, this replica no longer
    receives on that channel (another does)."""

    def __init__(self, inner: Channel, fleet: Fleet, rebuild: Rebuild | None = None) -> None:
        self.inner = inner
        self._fleet = fleet
        self._rebuild = rebuild
        self._stop = asyncio.Event()
        self.leading = False  # receiving now

    @property
    def name(self) -> str:
        """The inner channel's name."""
        return self.inner.name

    async def run(self, submit: Submit) -> None:
        """Receive while holding the lease; wait for it otherwise; until `stop`."""
        lease = f"channel:{self.name}"
        while not self._stop.is_set():
            ended = await self._fleet.hold(lease, self._stop, lambda lost: self._lead(submit, lost))
            if ended or self._stop.is_set():
                return  # the channel's input ended (or Omega stops)
            if self._rebuild is None:
                log.warning("channel %s: lease lost; this replica no longer receives", self.name)
                return
            self.inner = self._replace(self._rebuild())

    def _replace(self, fresh: Channel) -> Channel:
        return fresh

    async def _lead(self, submit: Submit, lost: asyncio.Event) -> None:
        inner = self.inner
        runner = asyncio.create_task(inner.run(submit))
        lost_waiter = asyncio.create_task(lost.wait())
        self.leading = True
        log.info("channel %s: this replica receives", self.name)
        try:
            await asyncio.wait([runner, lost_waiter], return_when=asyncio.FIRST_COMPLETED)
            if not runner.done():
                await inner.stop()
                await runner
        finally:
            self.leading = False
            lost_waiter.cancel()
            if not runner.done():
                runner.cancel()

    async def send(self, message: OutgoingMessage) -> None:
        """Send through the channel, leader or not."""
        await self.inner.send(message)

    async def send_typing(self, target: str) -> None:
        """Typing through the channel, leader or not."""
        await self.inner.send_typing(target)

    async def stop(self) -> None:
        """Stop receiving, or waiting to."""
        self._stop.set()
        await self.inner.stop()


class LedPairingChannel(LedChannel):
    """A led channel that pairs itself to an account (WhatsApp): pairing goes to the channel
    this replica has (on the leader, the session that receives)."""

    _send: Send | None = None

    def attach(self, send: Send) -> None:
        """Where the channel sends what is not a reply."""
        self._send = send
        cast(PairingChannel, self.inner).attach(send)

    async def request_pairing(self, channel: str, target: str, phone: str = "") -> str:
        """Start pairing through the inner channel."""
        return await cast(PairingChannel, self.inner).request_pairing(channel, target, phone)

    def _replace(self, fresh: Channel) -> Channel:
        if self._send is not None and isinstance(fresh, PairingChannel):
            fresh.attach(self._send)
        return fresh


def lead(inner: Channel, fleet: Fleet, rebuild: Rebuild | None = None) -> LedChannel:
    """`inner` under its lease, keeping what the gateway looks for (pairing)."""
    if isinstance(inner, PairingChannel):
        return LedPairingChannel(inner, fleet, rebuild)
    return LedChannel(inner, fleet, rebuild)
