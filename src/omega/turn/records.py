"""Store calls that never stop a reply: a failing call is logged and the turn goes on with a
default; audit rows are written the same way."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from omega.memory.audit import AuditEntry
from omega.turn.deps import PipelineDeps
from omega.types import IncomingMessage

log = logging.getLogger(__name__)

T = TypeVar("T")


async def db_call(
    deps: PipelineDeps, what: str, default: T, fn: Callable[..., T], *args: object
) -> T:
    """A store call on the db thread; on failure log it and carry on with `default`."""
    try:
        return await deps.store.call(fn, *args)
    except Exception:
        log.exception("%s failed; carrying on without it", what)
        return default


async def record_audit(deps: PipelineDeps, entry: AuditEntry) -> None:
    """Write an audit row; a failing audit is logged, never raised."""
    await db_call(deps, "audit", None, deps.store.audit, entry)


async def audit_message(deps: PipelineDeps, message: IncomingMessage, **fields: Any) -> None:
    """Audit what happened to `message`: who sent it and what it said are filled in, the rest
    (status, event, output, usage...) comes from `fields`; never raises."""
    entry = {
        "channel": message.channel,
        "sender_id": message.sender_id,
        "sender_name": message.sender_name,
        "input_text": message.text,
        **fields,
    }
    await record_audit(deps, AuditEntry(**entry))


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started` (a perf_counter reading)."""
    return int((time.perf_counter() - started) * 1000)
