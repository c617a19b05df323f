"""This replica's share of the inbox: its name, the channels it may answer on, its claims and
their leases (the store's `inbox_claim` family), and which other replicas are known dead.

Several `omega start` processes on one database are replicas. Each one claims the messages
it will handle; a claim is a lease, renewed while the turn runs, that another replica takes
over when it runs out. A replica on this machine that died is known at once (its process is
gone) and is taken over at the next start without waiting for its leases to run out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Mapping

from omega.channels.base import Channel
from omega.memory import Claim, Store
from omega.replica import known_dead, replica_name

log = logging.getLogger(__name__)

SenderKey = tuple[str, str]


def answers_anywhere(channel: Channel) -> bool:
    """Whether any replica can send this channel's answers (a bot API reached over the
    network), rather than only the process that received the message (the terminal, the
    web page's open connection). Channels say so with `answers_from_any_replica = True`."""
    return getattr(channel, "answers_from_any_replica", False) is True


class Claims:
    """This replica's claims: taken, renewed while a turn runs, released at shutdown."""

    def __init__(self, store: Store, channels: Mapping[str, Channel], lease_s: float) -> None:
        self.store = store
        self.replica = replica_name()
        self.lease_s = lease_s
        self.shared = [name for name, ch in channels.items() if answers_anywhere(ch)]
        self.local = [name for name in channels if name not in self.shared]
        self.held: set[str] = set()  # ids claimed by this replica and not yet settled

    async def claim(self, limit: int = 16, sender: SenderKey | None = None) -> list[Claim]:
        """Claim what this replica may handle now (see `Store.inbox_claim`); [] on errors."""
        store = self.store
        try:
            claims = await store.call(
                store.inbox_claim,
                self.replica,
                self.lease_s,
                self.shared,
                limit,
                local_channels=self.local,
                sender=sender,
            )
        except Exception:
            log.exception("could not claim inbox messages")
            return []
        self.held.update(c.message.id for c in claims)
        return claims

    async def start(self, message_id: str) -> int | None:
        """Count an attempt at a held message (renewing its lease): the attempts so far, or
        None when another replica took it over (this one must not handle it)."""
        store = self.store
        return await store.call(store.inbox_start, self.replica, message_id, self.lease_s)

    def settled(self, message_id: str) -> None:
        """The message is finished, released or lost: no longer this replica's to renew."""
        self.held.discard(message_id)

    @contextlib.contextmanager
    def kept(self, message_id: str) -> Iterator[None]:
        """Renew the message's lease every third of it while the block runs (a turn that
        takes minutes is never taken over while this replica lives)."""
        task = asyncio.ensure_future(self._renew(message_id))
        try:
            yield
        finally:
            task.cancel()

    async def _renew(self, message_id: str) -> None:
        store = self.store
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                held = await store.call(store.inbox_renew, self.replica, [message_id], self.lease_s)
            except Exception:
                log.exception("could not renew the claim on message %s", message_id)
                continue
            if not held:
                log.warning("message %s: its claim was lost (already answered?)", message_id)
                return

    async def adopt_dead(self) -> int:
        """Take over the claims and received messages of replicas of this host that died."""
        store = self.store
        dead = [name for name in await store.call(store.inbox_replicas) if known_dead(name)]
        adopted = await store.call(store.inbox_adopt, self.replica, dead)
        if dead:
            log.info("took over from %d stopped replicas (%d messages)", len(dead), adopted)
        return adopted

    async def release(self, keep: set[str]) -> None:
        """Release every claim of this replica but those in `keep` (still being handled)."""
        store = self.store
        try:
            released = await store.call(store.inbox_unclaim, self.replica, sorted(keep))
        except Exception:
            log.exception("could not release this replica's claims")
            return
        self.held &= keep
        if released:
            log.info("released %d claimed messages for the other replicas", released)
