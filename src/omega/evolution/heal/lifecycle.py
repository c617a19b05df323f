"""Self-healing (spec 000): the gateway, not the model, runs the lifecycle.

`SELF_HEAL: description | verification` starts or continues a healing session. The session,
its iteration count and its escalation live in memory.db, out of the model's reach;
self-healing.json is rewritten from it after every change as the spec's readable view and is
never read back. Up to 10 iterations, each notified to the owner and followed by a verification
action task 2 minutes later; past the cap, an escalation alert and no more tasks, kept until the
owner clears it (`/selfheal clear`). The cap counts iterations over the last 24 hours across
sessions (heal/sessions.py): resolving a session does not reset it, only the owner's clear does.
One incoming message (a reply, the steps of a plan, one scheduled task however often it is
retried) gives at most one self-heal event.
`SELF_HEAL_RESOLVED` closes an open (not escalated) session, deletes the view and tells the owner.
Every verification task a session scheduled is kept with it (the store's `state`, scope
`self_heal:<session id>`): resolving, escalating or clearing the session cancels those still
pending, in the transaction that ends it, audited, so no check runs (and asks the provider) for
a session that is over. Each change is one store transaction (heal/sessions.py): concurrent
markers cannot open a second session or lose an iteration.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.evolution.heal.sessions import MAX_ITERATIONS as MAX_ITERATIONS  # its old address
from omega.evolution.heal.sessions import SelfHealingState, SelfHealStore
from omega.memory.store import Store
from omega.schedule import timezone_name
from omega.turn import MarkerContext, audit_change, owner_message

log = logging.getLogger(__name__)
VERIFY_AFTER = timedelta(minutes=2)


async def _checks_ended(
    ctx: MarkerContext, state: SelfHealingState, cancelled: list[str], why: str
) -> None:
    """The session is over (`why`) and its pending checks were cancelled: audit them."""
    if cancelled:
        ctx.state.tasks_changed.set()
        listed = "\n".join(f"cancelled task {task_id}" for task_id in cancelled)
        await audit_change(ctx, "self_heal:checks_cancelled", f"{why}: {state.anomaly}", listed)


def _text(state: SelfHealingState | None) -> str:
    if state is None:
        return ""
    view = asdict(state)
    view.pop("id")
    return json.dumps(view, indent=2) + "\n"


def write_view(path: Path, state: SelfHealingState | None) -> None:
    """Rewrite self-healing.json from the database (owner-only; deleted when no session)."""
    if state is None:
        path.unlink(missing_ok=True)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".self-healing-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_text(state))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def follow_up(anomaly: str, verification: str) -> str:
    """The verification task: check the fix, then resolve or keep healing."""
    return (
        f"Self-healing verification for: {anomaly}. Read self-healing.json in your data "
        f"directory for the history. Run this verification: {verification}. If it passes, "
        "reply with SELF_HEAL_RESOLVED on its own line. If it fails, diagnose and fix, then "
        "emit SELF_HEAL: <what you changed> | <the verification to run next>."
    )


def _diff(before: SelfHealingState | None, after: SelfHealingState | None) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(
            _text(before).splitlines(keepends=True),
            _text(after).splitlines(keepends=True),
            fromfile="a/self-heal",
            tofile="b/self-heal",
        )
    )


async def _claim(ctx: MarkerContext, marker: str) -> None:
    repo = SelfHealStore(ctx.store)
    if not await ctx.store.call(repo.claim_event, ctx.message.id, marker):
        await audit_change(ctx, "self_heal:refused", marker, "one self-heal event per message")
        raise PermissionError("only one self-heal event per message is accepted")


async def self_heal(ctx: MarkerContext, description: str, verification: str) -> str:
    """One SELF_HEAL marker: count the iteration, notify, schedule or escalate."""
    repo = SelfHealStore(ctx.store)
    target = owner_message(ctx, "")

    def schedule(state: SelfHealingState) -> str:
        task_id, _ = ctx.store.create_task(
            channel=target.channel,
            sender_id=target.target,
            reply_target=target.target,
            description=follow_up(state.anomaly, verification),
            due_at=datetime.now(UTC) + VERIFY_AFTER,
            task_type="action",
            timezone=timezone_name(ctx.timezone),
        )
        return task_id

    done = await ctx.store.call(repo.iterate, ctx.message.id, description, verification, schedule)
    if done.refused == "duplicate":
        await audit_change(ctx, "self_heal:refused", "SELF_HEAL", "one self-heal event per message")
        raise PermissionError("only one self-heal event per message is accepted")
    if done.after is None:
        await audit_change(ctx, "self_heal:refused", description, "escalated; waiting for owner")
        raise PermissionError("self-healing is escalated; only the owner can clear it")
    state = done.after
    write_view(ctx.paths.self_healing, state)
    await audit_change(
        ctx, "self_heal", f"{description} | {verification}", _diff(done.before, state)
    )
    if state.status == "escalated":
        await _checks_ended(ctx, state, done.cancelled, "escalated")
        await ctx.notify(
            owner_message(
                ctx,
                f"🚨 SELF-HEALING ESCALATION: {state.anomaly} is still not fixed after "
                f"{MAX_ITERATIONS} iterations in 24 hours. I stopped trying; the history is in "
                f"{ctx.paths.self_healing}. Clear it with /selfheal clear.",
                kind="alert",
                priority="urgent",
            )
        )
        log.error("self-healing escalated after %d iterations: %s", MAX_ITERATIONS, state.anomaly)
        return "escalated"
    ctx.state.tasks_changed.set()
    await ctx.notify(
        owner_message(
            ctx,
            f"🔧 SELF-HEALING ({state.iteration}/{MAX_ITERATIONS}): {state.anomaly}\n"
            f"Tried: {description}",
            kind="alert",
        )
    )
    return f"iteration {state.iteration}"


async def self_heal_resolved(ctx: MarkerContext) -> str:
    """SELF_HEAL_RESOLVED: close an open session (its pending checks cancelled), delete the
    view and tell the owner."""
    repo = SelfHealStore(ctx.store)
    before = await ctx.store.call(repo.current)
    if before is None:
        return "no healing in progress"
    await _claim(ctx, "SELF_HEAL_RESOLVED")
    if before.status == "escalated":
        await audit_change(ctx, "self_heal:refused", "SELF_HEAL_RESOLVED", "escalated")
        raise PermissionError("self-healing is escalated; only the owner can clear it")
    closed, cancelled = await ctx.store.call(repo.close, "resolved", True)
    if closed is None:  # another message resolved it, or it escalated, meanwhile
        return "no healing in progress"
    await _checks_ended(ctx, closed, cancelled, "resolved")
    write_view(ctx.paths.self_healing, None)
    await audit_change(ctx, "self_heal_resolved", "SELF_HEAL_RESOLVED", _diff(closed, None))
    await ctx.notify(
        owner_message(ctx, f"✅ Self-healing complete: {closed.anomaly}", kind="alert")
    )
    return "resolved"


def clear_escalation(store: Store, path: Path) -> tuple[SelfHealingState | None, list[str]]:
    """The owner clears the current session (escalated or open), cancelling its pending
    checks; this also starts the 24-hour iteration count again. The session as it was (None
    when there is none) and the ids of the checks cancelled."""
    cleared, cancelled = SelfHealStore(store).close("cleared", only_open=False)
    if cleared is not None:
        write_view(path, None)
    return cleared, cancelled
