"""Stopping the gateway: intake stopped (each channel told to stop, its task ended), then the
replies in flight let finish within the grace; what is not being handled then goes back to the
other replicas (or the next start), and what stays unanswered is logged: it is still in the
durable inbox."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Mapping, Sequence

from omega.channels.base import Channel
from omega.gateway.claims import Claims
from omega.gateway.senders import Senders

log = logging.getLogger(__name__)

CHANNEL_STOP_SECS = 5  # how long a stopped channel's task may take to end before it is cancelled


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
    logged) and the inbox poll, and wait for the poll to end."""
    for name, task in zip(channels, tasks, strict=True):
        if task.done() and not task.cancelled() and task.exception() is not None:
            log.error("channel %s stopped with an error: %r", name, task.exception())
        task.cancel()
    poller.cancel()
    await asyncio.gather(poller, return_exceptions=True)


async def drain(senders: Senders, claims: Claims, grace: float) -> None:
    """Let the messages in hand be answered within `grace` seconds (inf: no limit), release
    the claims on what is not being handled then, and log what stays unanswered."""
    if senders.workers:  # (wait_for(..., 0) times out even on nothing to wait for)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(senders.drain(), None if math.isinf(grace) else grace)
    # What is not being handled now goes back to the other replicas (or the next start).
    await claims.release(keep=set(senders.in_flight))
    left = await senders.unanswered()
    if left:  # an answer already sent is no loss, whatever work followed it
        log.warning("%d messages were not answered in time; they stay in the inbox", len(left))
