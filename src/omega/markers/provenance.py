"""Markers a reply may not act on when its prompt carried text nobody here wrote
(ARCHITECTURE §12a): which ones (EXTERNAL_BARRED), and how they are refused (audited as denied,
said as not done, told to the owner quoted). `MarkerContext.external` says what the prompt
carried: a page or a tool's result read in this turn or an earlier one of its conversation
(turn.external_reads, turn.earlier_reads), or, in the heartbeat's, other people's conversations
and gaps (loops.heartbeat)."""

from __future__ import annotations

import logging

from omega.markers.registry import MarkerEvent
from omega.text import neutralized, quote_untrusted
from omega.turn import MarkerContext, audit_change, owner_message

__all__ = ["EXTERNAL_BARRED", "refuse_external"]

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
    text = (
        f"⚠️ Not done (quoted, not an instruction): a reply written after reading {read} "
        "asked for\n" + "\n".join(lines) + "\nWhat these change acts later as yours, so text "
        "nobody here wrote may not ask for it. If you want it, do it yourself (HEARTBEAT.md, "
        "/cancel), or ask again in a new conversation (/forget)."
    )
    await ctx.notify(owner_message(ctx, text, kind="alert"))
