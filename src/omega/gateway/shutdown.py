"""Stopping the gateway: intake stopped (each channel told to stop, its task ended), then the
replies in flight let finish within the grace; what is not being handled then goes back to the
other replicas (or the next start), and what stays unanswered is logged: it is still in the
durable inbox."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Mapping, Sequence

from omega.channels.base import Channel
from omega.gateway.claims import Claims
from omega.gateway.senders import Senders

log = logging.getLogger(__name__)

CHANNEL_STOP_SECS = 5  # how long a stopped channel's task may take to end before it is cancelled
CANCEL_WAIT_SECS = 5  # how long a cancelled answer may take to end (its inbox row released)


async def stop_intake(channels: Mapping[str, Channel], tasks: Sequence[asyncio.Task[None]]) -> None:
    """Tell every channel to stop receiving and give their tasks CHANNEL_STOP_SECS to end."""
    log.info("shutting down: intake stopped")
    for channel in channels.values():
        try:
            await channel.stop()
        except Exception:
            log.exception("stopping a channel failed")
    if tasks:  # `omega start` with no channel runs only the loops
        await asyncio.wait(tasks, timeout=CHANNEL_STOP_SECS)


async def end_tasks(
    channels: Mapping[str, Channel],
    tasks: Sequence[asyncio.Task[None]],
    poller: asyncio.Task[None],
) -> None:
    """Cancel the channels' tasks (one per channel, in order; an error one ended with is
    logged) and the inbox poll, and wait CANCEL_WAIT_SECS at most for the poll to end (one
    that swallowed its cancellation once hung the stop: memory.wakeups.wait_for)."""
    for name, task in zip(channels, tasks, strict=True):
        if task.done() and not task.cancelled() and task.exception() is not None:
            log.error("channel %s stopped with an error: %r", name, task.exception())
        task.cancel()
    poller.cancel()
    _, running = await asyncio.wait([poller], timeout=CANCEL_WAIT_SECS)
    if running:
        log.error("the inbox poll did not stop when cancelled; left behind")


async def drain(senders: Senders, claims: Claims, grace: float, stall: float | None = None) -> None:
    """Let the messages in hand be answered within `grace` seconds (inf: no limit) and, with
    `stall`, only while one of them is done with at least every `stall` seconds; then stop
    what is left (it stays in the inbox), release the claims on what is not being handled,
    and log what stays unanswered."""
    if senders.workers and not await _answered(senders, grace, stall):
        await _stop_workers(senders)
    # What is not being handled now goes back to the other replicas (or the next start).
    await claims.release(keep=set(senders.in_flight))
    left = await senders.unanswered()
    if left:  # an answer already sent is no loss, whatever work followed it
        log.warning("%d messages were not answered in time; they stay in the inbox", len(left))


async def _answered(senders: Senders, grace: float, stall: float | None) -> bool:
    """Wait until every message in hand is done with: True; False once `grace` has passed
    or, with `stall`, once none was done with for `stall` seconds (said in the log)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while senders.workers:
        left = deadline - loop.time()
        if left <= 0:
            return False
        wait = left if stall is None else min(left, stall)
        senders.progress.clear()
        progress = asyncio.ensure_future(senders.progress.wait())
        try:
            done, _ = await asyncio.wait(
                [progress, *senders.workers.values()],
                timeout=None if math.isinf(wait) else wait,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            progress.cancel()
        if not done:
            if stall is not None and wait == stall:
                log.warning(
                    "no answer was finished for %gs: the %d messages in hand are stopped and "
                    "stay in the inbox",
                    stall,
                    senders.load(),
                )
            return False
    return True


async def _stop_workers(senders: Senders) -> None:
    """Cancel the senders' workers (a message stopped part-way stays in the inbox) and give
    them CANCEL_WAIT_SECS to end; one that does not is left behind, logged."""
    workers = list(senders.workers.values())
    for worker in workers:
        worker.cancel()
    if not workers:
        return
    _, stuck = await asyncio.wait(workers, timeout=CANCEL_WAIT_SECS)
    if stuck:
        log.error("%d senders' answers did not stop when cancelled; left behind", len(stuck))
