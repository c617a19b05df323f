"""One attempt at answering an inbox message: the answer kept with its row re-sent (after a
restart), else the pipeline run; then the row finished, or released when Omega stops
part-way (a shutdown is no failed attempt)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from omega.gateway.delivery import finished_rows, send_stored
from omega.gateway.pipeline import handle_message
from omega.turn import Outbox, PipelineDeps
from omega.types import IncomingMessage

log = logging.getLogger(__name__)


async def answer(deps: PipelineDeps, message: IncomingMessage, out: Outbox) -> None:
    """Answer `message` through `out` and finish its inbox row (with the error, if the answer
    failed); raises only CancelledError, after releasing the row."""
    error = ""
    finished = finished_rows()
    try:
        stored = await deps.store.call(deps.store.inbox_stored_reply, message.id)
    except Exception:
        log.exception("could not read the stored reply of message %s", message.id)
        stored = None
    try:
        if stored is not None:
            # Answered before Omega stopped, not yet marked sent: send the very same answer
            # again; provider, tools and markers are not run a second time.
            log.info("re-sending the stored reply to message %s", message.id)
            await send_stored(deps, message.id, out, *stored)
        else:
            await handle_message(deps, message, out)
    except asyncio.CancelledError:
        # Shutdown, not a crash: this attempt does not count against the message.
        with contextlib.suppress(Exception):
            deps.store.inbox_release(message.id)
        raise
    except Exception as exc:  # the pipeline guards itself; this is the last net
        log.exception("message %s failed", message.id)
        error = repr(exc)[:500]
    if not error and message.id in finished:
        return  # marked done as its answer went out
    try:
        await deps.store.call(deps.store.inbox_finish, message.id, error)
    except Exception:
        log.exception("could not mark message %s finished", message.id)
