"""A message from a platform that does not keep it for long (Slack's three redeliveries, a
Matrix sync that must not stop), on its way to the inbox: read with a few tries, then given up,
logged and told to `dropped` (audited, the owner told) so later ones flow; once read, submitted
until the store takes it, however long the store is away, or the channel stops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from omega.channels.base import Submit
from omega.errors import OmegaError
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


class Stopped(OmegaError):  # noqa: N818 - a signal, not a failure
    """The channel stopped before the message was read or stored: it is left unconfirmed."""


async def read(
    channel: str,
    ident: str,
    reading: Callable[[], Awaitable[IncomingMessage | None]],
    pause: Pause,
    stop: asyncio.Event,
    dropped: Dropped | None,
) -> tuple[bool, IncomingMessage | None]:
    """Whether the message was read, and as what (None: not for Omega); one failing
    READ_ATTEMPTS times is given up (logged, told to `dropped`). Raises Stopped at a stop."""
    error: Exception | None = None
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            return True, await reading()
        except Exception as exc:
            error = exc
            log.warning("%s: message %s not read (try %d): %r", channel, ident, attempt, exc)
        if stop.is_set():
            raise Stopped
        if attempt < READ_ATTEMPTS:
            await pause(READ_RETRY_SECS)
    log.error(
        "%s: message %s unreadable; dropped so later ones flow", channel, ident, exc_info=error
    )
    await report(channel, dropped, ident, READ_ATTEMPTS, error)
    return False, None


async def report(
    channel: str, dropped: Dropped | None, ident: int | str, tries: int, error: BaseException | None
) -> None:
    """Tell `dropped` of a message given up unread (a failure to tell is only logged)."""
    if dropped is not None:
        try:
            await dropped(ident, tries, repr(error)[:300])
        except Exception:
            log.exception("%s: the dropped message %s could not be reported", channel, ident)


async def store(
    channel: str, incoming: IncomingMessage, submit: Submit, pause: Pause, stop: asyncio.Event
) -> None:
    """Submit until the message is durable; raises Stopped when the channel stops first (a
    message read is never given up: the store may be away a while)."""
    wait = STORE_BACKOFF_FIRST_SECS
    while True:
        try:
            await submit(incoming)  # returns once the message is durable
            return
        except Exception:
            log.exception("%s: %s not stored; trying again in %.0f s", channel, incoming.id, wait)
        if stop.is_set():
            raise Stopped
        await pause(wait)
        wait = min(wait * 2, STORE_BACKOFF_MAX_SECS)
