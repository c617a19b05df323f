"""Whether other replicas share this database now, and this replica's share of the messages
while they do: beside them, a replica answering its share leaves a new sender's message to
the fleet's polls (senders.py), and one poll claims only what keeps it near its share
(inbox_poll.py); alone, it claims everything."""

from __future__ import annotations

import asyncio

from omega.turn import PipelineDeps

PEERS_CHECK_SECS = 5.0  # how often the poll loop looks at which replicas are alive
POLL_BATCH = 16  # what one poll claims at most


class Peers:
    """What this replica knows of the others, read at most every PEERS_CHECK_SECS."""

    def __init__(self, deps: PipelineDeps) -> None:
        self.deps = deps
        self.alive = False  # other replicas share this database
        # With other replicas alive, a replica answering this many messages leaves a new
        # sender's message to the fleet's polls instead of claiming it at once (alone, it
        # claims everything): half of what it may ask of its provider at once.
        self.share = max(1, deps.config.limits.max_concurrent_provider_calls // 2)
        self._checked = -PEERS_CHECK_SECS

    async def look(self) -> None:
        """Whether other replicas are alive now (read at most every PEERS_CHECK_SECS)."""
        now = asyncio.get_running_loop().time()
        if now - self._checked < PEERS_CHECK_SECS:
            return
        self._checked = now
        store = self.deps.store
        ttl = self.deps.config.store.lease_seconds
        alive = [r for r in await store.call(store.replicas, ttl) if r.alive]
        self.alive = len(alive) > 1

    def poll_share(self, load: int) -> int:
        """How many messages one poll claims, with `load` messages in hand here: alone, a
        batch; beside other replicas, what keeps this one near its share (at least one, so the
        fleet always makes progress)."""
        if not self.alive:
            return POLL_BATCH
        return max(1, 2 * self.share - load)
