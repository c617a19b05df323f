"""From the consumer's queue to the inbox, one Discord message at a time: it is read (made an
IncomingMessage, its files downloaded) with a few tries, then given up, logged and told to
`dropped`, so later messages flow; one read is submitted until the store takes it, however long
the store is away (gateway events are not sent again: a message read and dropped is lost)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from omega.channels.base import Submit
from omega.types import IncomingMessage

log = logging.getLogger(__name__)

READ_ATTEMPTS = 3  # a message that cannot be read is given up after this many tries
READ_RETRY_SECS = 1.0  # the pause between those tries
STORE_BACKOFF_FIRST_SECS = 1.0  # a message read but not stored is submitted again after this,
STORE_BACKOFF_MAX_SECS = 30.0  # doubling up to this, until the store takes it

# Told of a message given up unread: its id, the tries, the last error (audited, the owner told).
Dropped = Callable[[int | str, int, str], Awaitable[None]]
# The channel's pause: returns early when the channel stops.
Pause = Callable[[float], Awaitable[None]]


async def read(
    message_id: int,
    reading: Callable[[], Awaitable[IncomingMessage | None]],
    pause: Pause,
    stop: asyncio.Event,
    dropped: Dropped | None,
) -> tuple[bool, IncomingMessage | None]:
    """Whether the message was read, and as what (None: not for Omega); one failing READ_ATTEMPTS
    times is given up (logged, told to `dropped`), one left unread at a stop is not."""
    error: Exception | None = None
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            return True, await reading()
        except Exception as exc:
            error = exc
            log.warning("discord: message %s not read (try %d): %r", message_id, attempt, exc)
        if stop.is_set():
            return False, None
        if attempt < READ_ATTEMPTS:
            await pause(READ_RETRY_SECS)
    log.error(
        "discord: message %s failed to be read %d times; dropped so later ones flow",
        message_id,
        READ_ATTEMPTS,
        exc_info=error,
    )
    await report(dropped, message_id, READ_ATTEMPTS, error)
    return False, None


async def report(
    dropped: Dropped | None, message_id: int | str, tries: int, error: BaseException | None
) -> None:
    """Tell `dropped` of a message given up unread (a failure to tell is only logged)."""
    if dropped is not None:
        try:
            await dropped(message_id, tries, repr(error)[:300])
        except Exception:
            log.exception("discord: the dropped message %s could not be reported", message_id)


async def store(
    incoming: IncomingMessage, submit: Submit, pause: Pause, stop: asyncio.Event
) -> bool:
    """Submit until the message is durable (True) or the channel stops first (False): a message
    read is never given up, the store may be away a while."""
    wait = STORE_BACKOFF_FIRST_SECS
    while True:
        try:
            await submit(incoming)  # returns once the message is durable
            return True
        except Exception:
            log.exception("discord: %s not stored; trying again in %.0f s", incoming.id, wait)
        if stop.is_set():
            return False
        await pause(wait)
        wait = min(wait * 2, STORE_BACKOFF_MAX_SECS)
