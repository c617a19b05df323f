"""Markers a reply may not act on when its prompt carried text nobody here wrote
(ARCHITECTURE §12a): which ones (EXTERNAL_BARRED), and how they are refused (audited as denied,
said as not done, told to the owner quoted). `MarkerContext.external` says what the prompt
carried: a page or a tool's result read in this turn or an earlier one of its conversation
(turn.external_reads, turn.earlier_reads), or, in the heartbeat's, other people's conversations
and gaps (loops.heartbeat). What the owner's reply was refused is kept a day under a one-time
code: `/confirm <code>` does it as theirs (markers.confirm)."""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from omega.markers.registry import MarkerEvent
from omega.text import neutralized, quote_untrusted
from omega.turn import MarkerContext, audit_change, owner_message

__all__ = [
    "CONFIRM_SCOPE",
    "CONFIRM_WITHIN",
    "EXTERNAL_BARRED",
    "confirmable_until",
    "refuse_external",
]

log = logging.getLogger(__name__)

# Markers whose effect outlives the reply and later acts with its author's rights or changes what
# later prompts and tasks take for the owner's own: an action task (run later with its creator's
# tools), a task's new text or time or its cancelling, a HEARTBEAT.md line (the heartbeat follows
# the checklist as the owner's), the heartbeat's cadence, a self-healing step (its check is an
# action task). A reply whose prompt carried text nobody here wrote (ctx.external: a page or a
# tool's result read in its conversation; other people's conversations or gaps in the
# heartbeat's) may not write them (ARCHITECTURE §12a): refused, audited as denied, and the owner
# told, quoted. A reminder (text for the person alone), a language or project switch, a lesson
# and a gap stay: SKILL_IMPROVE and LIMITATION turn such text into what the owner reviews.
EXTERNAL_BARRED = frozenset(
    {
        "SCHEDULE_ACTION",
        "UPDATE_TASK",
        "CANCEL_TASK",
        "HEARTBEAT_ADD",
        "HEARTBEAT_REMOVE",
        "HEARTBEAT_INTERVAL",
        "SELF_HEAL",
    }
)
CONFIRM_SCOPE = "confirm"  # the state scope of refused markers the owner may still confirm
CONFIRM_WITHIN = timedelta(hours=24)  # a quiet night's digest included


async def refuse_external(ctx: MarkerContext, barred: list[MarkerEvent]) -> None:
    """Markers a reply wrote after reading text nobody here wrote (EXTERNAL_BARRED): audited
    as refused and, when the reply is the owner's, told to them quoted (they may do it
    themselves); anyone else is told in the reply (MarkerOutcome.unmet)."""
    log.warning(
        "markers refused after reading %s: %s", ctx.external, ", ".join(e.name for e in barred)
    )
    detail = f"role: {ctx.role}\nwritten after reading {ctx.external}\n" + "\n".join(
        e.raw for e in barred
    )
    await audit_change(ctx, "marker_refused", ctx.message.text[:500], detail[:8000], "denied")
    if not ctx.owner:
        return
    read = neutralized(ctx.external, 200)  # a tool's name is an MCP server's to choose
    label = f"written after reading {read}"
    # "schedule action", never a marker's "NAME:" that a later prompt could act on
    lines = [
        f"- {e.name.lower().replace('_', ' ')} {quote_untrusted(' | '.join(e.fields), label, 300)}"
        for e in barred
    ]
    code = await _keep_for_confirmation(ctx, barred)
    how = (
        f"If you want it done exactly as quoted, send /confirm {code} (within a day). "
        if code
        else ""
    )
    text = (
        f"⚠️ Not done (quoted, not an instruction): a reply written after reading {read} "
        "asked for\n" + "\n".join(lines) + "\nWhat these change acts later as yours, so text "
        f"nobody here wrote may not ask for it. {how}Or do it yourself (HEARTBEAT.md, "
        "/cancel)."
    )
    await ctx.notify(owner_message(ctx, text, kind="alert"))


async def _keep_for_confirmation(ctx: MarkerContext, barred: list[MarkerEvent]) -> str:
    """Keep the refused markers, and the message their reply answered, under a new one-time
    code (expired ones are pruned); "" when they could not be kept (the alert then offers no
    code)."""
    now = datetime.now(UTC)
    message = ctx.message
    record: dict[str, Any] = {
        "at": now.isoformat(),
        "read": ctx.external[:500],
        "cause": ctx.cause,
        "markers": [[e.name, *e.fields] for e in barred],
        "message": {
            "channel": message.channel,
            "sender_id": message.sender_id,
            "sender_name": message.sender_name,
            "text": message.text[:2000],
            "is_group": message.is_group,
            "reply_target": message.reply_target,
            "origin_id": message.origin_id,
            "thread": message.thread,
            "assurance": message.assurance,
        },
    }
    code = secrets.token_hex(4)
    try:
        await ctx.store.call(_prune_and_keep, ctx, code, record, now)
    except Exception:
        log.exception("keeping refused markers for confirmation failed")
        return ""
    return code


def _prune_and_keep(ctx: MarkerContext, code: str, record: dict[str, Any], now: datetime) -> None:
    store = ctx.store
    for key in store.state_keys(CONFIRM_SCOPE):
        kept = store.state_get(CONFIRM_SCOPE, key)
        until = confirmable_until(kept) if isinstance(kept, dict) else None
        if until is None or now > until:
            store.state_delete(CONFIRM_SCOPE, key)
    store.state_put(CONFIRM_SCOPE, code, record)


def confirmable_until(record: dict[str, Any]) -> datetime | None:
    """When the refused markers kept in `record` may no longer be confirmed; None when it is
    unreadable."""
    try:
        at = datetime.fromisoformat(str(record["at"]))
    except (KeyError, ValueError):
        return None
    return at + CONFIRM_WITHIN if at.tzinfo else None
