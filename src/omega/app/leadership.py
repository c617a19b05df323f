"""Channels only one replica may receive on (Telegram's one getUpdates consumer, the one
WhatsApp session): the replica holding the lease `channel:<name>` runs the channel's `run`.
A replica that is not the leader waits, and starts receiving when it takes the lease over.

Sending: where the platform takes a message from anyone with the credentials (`sends_anywhere`:
the Bot API), every replica sends itself; otherwise (the one WhatsApp session) a follower puts
the message in the store's relay queue and the leader sends it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import cast

from omega.app.fleet import Fleet
from omega.channels.base import Channel, PairingChannel, Send, Submit
from omega.memory.wakeups import relay_topic, wait_for
from omega.types import OutgoingMessage

log = logging.getLogger(__name__)

RELAY_EVERY_SECS = 0.5  # how often the leader looks for messages other replicas relayed
Rebuild = Callable[[], Channel]


class LedChannel:
    """`inner`'s receiving under the lease `channel:<name>`; its sending everywhere.

    Every replica can answer on a led channel (itself or through the leader's relay), so the
    inbox lets any replica claim its messages (`answers_from_any_replica`).
    A channel stopped because its lease was lost cannot be run again: `rebuild` (the
    plug-in's factory) makes a fresh one to wait with; without it, this replica no longer
    receives on that channel (another does)."""

    answers_from_any_replica = True

    def __init__(
        self,
        inner: Channel,
        fleet: Fleet,
        rebuild: Rebuild | None = None,
        *,
        sends_anywhere: bool = False,
    ) -> None:
        self.inner = inner
        self._fleet = fleet
        self._rebuild = rebuild
        self._sends_anywhere = sends_anywhere
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
            try:
                self.inner = self._replace(self._rebuild())
            except Exception:
                log.exception("channel %s: could not be made again after a lost lease", self.name)
                return

    def _replace(self, fresh: Channel) -> Channel:
        return fresh

    async def _lead(self, submit: Submit, lost: asyncio.Event) -> None:
        inner = self.inner
        runner = asyncio.create_task(inner.run(submit))
        lost_waiter = asyncio.create_task(lost.wait())
        pump = None if self._sends_anywhere else asyncio.create_task(self._pump(inner))
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
            if pump is not None:
                pump.cancel()
            if not runner.done():
                runner.cancel()

    async def _pump(self, inner: Channel) -> None:
        """While leading: send what the other replicas relayed, oldest first. Each message
        leaves the queue only once sent; one this leader took and could not send (it failed,
        or this replica died) is sent by a leader once its lease runs out."""
        store = self._fleet.store
        woken = store.wake_event(relay_topic(self.name))  # PostgreSQL: relayed at once
        while True:
            try:
                relayed = await store.call(store.relay_take, self.name, self._fleet.id)
            except Exception:
                log.exception("channel %s: reading the relay failed", self.name)
                relayed = []
            for row_id, message in relayed:
                try:
                    await inner.send(message)
                except Exception:
                    log.exception("channel %s: a relayed message could not be sent", self.name)
                    continue  # stays taken: sent again when its lease runs out
                try:
                    await store.call(store.relay_done, row_id)
                except Exception:  # sent: at worst it is sent once more, same id
                    log.exception("channel %s: could not mark a relayed message sent", self.name)
            if not relayed:
                await wait_for(woken, RELAY_EVERY_SECS)

    async def send(self, message: OutgoingMessage) -> None:
        """Send through the channel; a follower of a channel only the leader can send on
        relays the message to it through the store."""
        if self.leading or self._sends_anywhere:
            await self.inner.send(message)
            return
        store = self._fleet.store
        await store.call(store.relay_put, self.name, message, self._fleet.id)

    async def send_typing(self, target: str) -> None:
        """Typing through the channel (not relayed: by then it would be late)."""
        if self.leading or self._sends_anywhere:
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
        """Start pairing through the inner channel, on the leader only: a follower starting
        a session of its own would fight the leader's."""
        if not self.leading:
            store = self._fleet.store
            leases = await store.call(store.leases)
            holder = next((x.holder for x in leases if x.name == f"channel:{self.name}"), "")
            where = f"Omega replica {holder}" if holder else "another Omega replica"
            return (
                f"The {self.name} session is run by {where}, not by the one that got this "
                f"message; pairing happens there. Send /{self.name} again in a moment, or stop "
                "the other replicas first."
            )
        return await cast(PairingChannel, self.inner).request_pairing(channel, target, phone)

    def _replace(self, fresh: Channel) -> Channel:
        if self._send is not None and isinstance(fresh, PairingChannel):
            fresh.attach(self._send)
        return fresh


def lead(
    inner: Channel, fleet: Fleet, rebuild: Rebuild | None = None, *, sends_anywhere: bool = False
) -> LedChannel:
    """`inner` under its lease, keeping what the gateway looks for (pairing)."""
    kind = LedPairingChannel if isinstance(inner, PairingChannel) else LedChannel
    return kind(inner, fleet, rebuild, sends_anywhere=sends_anywhere)
