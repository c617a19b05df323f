"""`/confirm <code>`: the owner does, as their own, what a reply of theirs was refused for having
read text nobody here wrote (markers.provenance). The code was shown only to them, in the
alert that quoted the markers; it works once and for a day, and does exactly the markers kept
under it, against the conversation whose reply wrote them. Nothing a reply says can send a
command: only a message the owner sends can."""

from __future__ import annotations

import dataclasses
import logging
import re
from datetime import UTC, datetime
from typing import Any, cast, get_args

from omega.markers.handlers import apply_markers
from omega.markers.provenance import CONFIRM_SCOPE, EXTERNAL_BARRED, confirmable_until
from omega.markers.registry import MarkerEvent, ParseResult
from omega.memory.audit import AuditStatus
from omega.turn import (
    Outbox,
    PipelineDeps,
    Role,
    audit_message,
    db_call,
    load_turn,
    marker_context,
)
from omega.types import Assurance, IncomingMessage

__all__ = ["USAGE", "confirm_refused"]

log = logging.getLogger(__name__)

USAGE = "Usage: /confirm <code>, with the code my alert gave you."
_CODE = re.compile(r"[0-9a-f]{8}")


async def confirm_refused(
    deps: PipelineDeps, message: IncomingMessage, role: Role, out: Outbox, args: str
) -> str:
    """Apply the refused markers kept under the code in `args` as the owner's (the code is
    used up even when a marker then fails); the text to answer with."""
    if role != "owner":  # the command table says so too: this is the last word
        return "Only my owner can do that."
    code = args.split()[0].lower() if args.split() else ""
    if not _CODE.fullmatch(code):
        return USAGE
    take = deps.store.state_take
    record = await db_call(deps, "take a confirmation", None, take, CONFIRM_SCOPE, code)
    until = confirmable_until(record) if isinstance(record, dict) else None
    if until is None or datetime.now(UTC) > until:
        await _audit(deps, message, "denied", f"code {code}: unknown, used or expired")
        return (
            "No refused request waits under that code (used, more than a day old, or never "
            "given): nothing done."
        )
    try:
        original = _message_of(record["message"])
        events = tuple(_events_of(record["markers"]))
    except (KeyError, TypeError, ValueError) as exc:
        log.error("confirmation %s unreadable: %s", code, exc)
        await _audit(deps, message, "denied", f"code {code}: unreadable ({exc})")
        return "That code's request could not be read back: nothing done."
    turn = await load_turn(deps, original)
    # The reply was the owner's (a code is only made for theirs) and the owner confirms it now.
    ctx = dataclasses.replace(
        marker_context(deps, original, turn, out, cause="confirmed"), role="owner"
    )
    outcome = await apply_markers(ParseResult(text="", events=events), ctx)
    detail = f"code {code}, read before: {record.get('read', '')}\n" + "\n".join(
        [f"applied: {a}" for a in outcome.applied] + [f"failed: {f}" for f in outcome.failed]
    )
    await _audit(deps, message, "ok", detail)
    lines = [f"- done: {a}" for a in outcome.applied] + [f"- not done: {f}" for f in outcome.failed]
    return "As you confirmed:\n" + "\n".join(lines or ["- nothing to do"])


def _message_of(kept: dict[str, Any]) -> IncomingMessage:
    """The message the refused reply answered, as kept (its id and time are new)."""
    assurance = str(kept.get("assurance", "unverified"))
    return IncomingMessage(
        channel=str(kept["channel"]),
        sender_id=str(kept["sender_id"]),
        text=str(kept.get("text", "")),
        sender_name=str(kept.get("sender_name", "")),
        is_group=bool(kept.get("is_group", False)),
        reply_target=str(kept.get("reply_target", "")),
        origin_id=str(kept.get("origin_id", "")),
        thread=str(kept.get("thread", "")),
        assurance=cast(Assurance, assurance) if assurance in get_args(Assurance) else "unverified",
    )


def _events_of(kept: list[list[str]]) -> list[MarkerEvent]:
    """The kept markers; only those the provenance rule bars (what else could a code hold)."""
    events = []
    for name, *fields in kept:
        if name not in EXTERNAL_BARRED:
            raise ValueError(f"{name} is not a marker a code may confirm")
        values = tuple(str(f) for f in fields)
        events.append(MarkerEvent(str(name), values, f"{name}: {' | '.join(values)}"))
    return events


async def _audit(
    deps: PipelineDeps, message: IncomingMessage, status: AuditStatus, detail: str
) -> None:
    """The confirmation (or its refusal) in the audit log, under the owner who sent it."""
    await audit_message(
        deps,
        message,
        status=status,
        input_text=message.text[:500],
        event="marker_confirmed",
        detail=detail[:8000],
    )
