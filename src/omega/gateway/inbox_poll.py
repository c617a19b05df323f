"""Taking up inbox messages this replica did not receive: at start, those an earlier run (or a
dead replica of this host) left unfinished; while serving, what other replicas received or
left behind when they died, claimed at once when woken, else every `[omega] inbox_poll_secs`."""

from __future__ import annotations

import logging

from omega.gateway.claims import Claims
from omega.gateway.peers import Peers
from omega.gateway.senders import Senders
from omega.memory.wakeups import INBOX, wait_for
from omega.turn import PipelineDeps

log = logging.getLogger(__name__)


async def replay_inbox(deps: PipelineDeps, claims: Claims, senders: Senders) -> int:
    """Take up messages left unfinished by an earlier run (or by a replica of this host
    that died), in arrival order; a live replica's claims are left to it. Return how
    many were queued.

    A message that was being handled when Omega died MAX_ATTEMPTS times is not tried again:
    it is marked failed, its sender is told, and the owner is alerted."""
    store = deps.store
    await store.call(store.inbox_prune)
    await claims.adopt_dead()
    replayed = 0
    while claimed := await claims.claim(limit=100):
        taken = await senders.take_all(claimed)
        for message_id in taken:
            log.info("replaying unfinished message %s", message_id)
        replayed += len(taken)
    return replayed


async def poll(
    deps: PipelineDeps, claims: Claims, senders: Senders, peers: Peers, every: float
) -> None:
    """Take up what other replicas received (or left behind when they died), and settle
    the submitted messages that another replica answered: at once when woken (a new or
    released inbox row on PostgreSQL), else every `every` seconds. Runs until cancelled."""
    woken = deps.store.wake_event(INBOX)  # PostgreSQL: another replica's new row wakes us
    while True:
        await wait_for(woken, every)
        try:
            await peers.look()
            await senders.take_all(await claims.claim(peers.poll_share(senders.load())))
            await senders.settle_elsewhere()
        except Exception:
            log.exception("looking for inbox messages failed")
