"""Self-healing (spec 000): the gateway, not the model, runs the lifecycle.

`SELF_HEAL: description | verification` starts or continues a healing session. The session,
its iteration count and its escalation live in memory.db, out of the model's reach;
self-healing.json is rewritten from it after every change as the spec's readable view and is
never read back. Up to 10 iterations, each notified to the owner and followed by a verification
action task 2 minutes later; past the cap, an escalation alert and no more tasks, kept until the
owner clears it (`/selfheal clear`). One incoming message (a reply, the steps of a plan, one
scheduled task however often it is retried) gives at most one self-heal event.
`SELF_HEAL_RESOLVED` closes an open (not escalated) session, deletes the view and tells the owner.
Every verification task a session scheduled is kept with it (the store's `state`, scope
`self_heal:<session id>`): resolving, escalating or clearing the session cancels those still
pending, audited, so no check runs (and asks the provider) for a session that is over.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.memory.db import utc_now
from omega.memory.store import Store
from omega.schedule import timezone_name
from omega.turn import MarkerContext, audit_change, owner_message

log = logging.getLogger(__name__)
MAX_ITERATIONS = 10
VERIFY_AFTER = timedelta(minutes=2)


@dataclass
class SelfHealingState:
    """A healing session, as self-healing.json shows it."""

    anomaly: str
    verification: str
    iteration: int = 0
    max_iterations: int = MAX_ITERATIONS
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    attempts: list[str] = field(default_factory=list)
    status: str = "open"
    id: int = 0


class SelfHealStore:
    """The self_heal_sessions and self_heal_events tables; safe from any thread."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def current(self) -> SelfHealingState | None:
        """The open or escalated session, if any."""
        rows = self.store.query(
            "SELECT * FROM self_heal_sessions WHERE status IN ('open', 'escalated') "
            "ORDER BY id DESC LIMIT 1"
        )
        if not rows:
            return None
        row = rows[0]
        return SelfHealingState(
            anomaly=row["anomaly"],
            verification=row["verification"],
            iteration=int(row["iteration"]),
            started_at=row["started_at"],
            attempts=[str(a) for a in json.loads(row["attempts"])],
            status=row["status"],
            id=int(row["id"]),
        )

    def claim_event(self, message_id: str, marker: str) -> bool:
        """True the first time a message produces a self-heal event; False after that."""
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO self_heal_events (message_id, marker, created_at) "
                "VALUES (?, ?, ?)",
                (message_id, marker, utc_now()),
            )
            return cursor.rowcount == 1

    def save(self, state: SelfHealingState) -> SelfHealingState:
        """Insert or update a session; returns it with its id."""
        now = utc_now()
        with self.store.transaction() as conn:
            if state.id:
                conn.execute(
                    "UPDATE self_heal_sessions SET verification = ?, iteration = ?, "
                    "attempts = ?, status = ?, updated_at = ? WHERE id = ?",
                    (
                        state.verification,
                        state.iteration,
                        json.dumps(state.attempts[-50:]),
                        state.status,
                        now,
                        state.id,
                    ),
                )
                return state
            cursor = conn.execute(
                "INSERT INTO self_heal_sessions (anomaly, verification, iteration, attempts, "
                "status, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    state.anomaly,
                    state.verification,
                    state.iteration,
                    json.dumps(state.attempts),
                    state.status,
                    state.started_at,
                    now,
                ),
            )
            state.id = int(cursor.lastrowid or 0)
            return state

    def close(self, status: str, only_open: bool) -> SelfHealingState | None:
        """Close the current session (resolved or cleared); returns it as it was before, or
        None when there is none to close."""
        state = self.current()
        if state is None or (only_open and state.status != "open"):
            return None
        self.save(SelfHealingState(**{**asdict(state), "status": status}))
        return state


def _checks_scope(session_id: int) -> str:
    return f"self_heal:{session_id}"


def remember_check(store: Store, session_id: int, task_id: str) -> None:
    """Keep a verification task with its session (one key per task: no lost update)."""
    store.state_put(_checks_scope(session_id), task_id, True)


def cancel_checks(store: Store, session_id: int) -> list[str]:
    """Cancel the session's verification tasks still pending; the ids cancelled."""
    scope = _checks_scope(session_id)
    task_ids = store.state_keys(scope)
    cancelled = store.cancel_pending(task_ids)
    for task_id in task_ids:
        store.state_delete(scope, task_id)
    return cancelled


async def _end_checks(ctx: MarkerContext, state: SelfHealingState, why: str) -> None:
    """The session is over (`why`): its pending checks are cancelled and audited."""
    cancelled = await ctx.store.call(cancel_checks, ctx.store, state.id)
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
    await _claim(ctx, "SELF_HEAL")
    repo = SelfHealStore(ctx.store)
    before = await ctx.store.call(repo.current)
    if before is not None and before.status == "escalated":
        await audit_change(ctx, "self_heal:refused", description, "escalated; waiting for owner")
        raise PermissionError("self-healing is escalated; only the owner can clear it")
    state = SelfHealingState(**asdict(before)) if before else None
    state = state or SelfHealingState(anomaly=description, verification=verification)
    state.iteration += 1
    state.verification = verification
    state.attempts.append(f"{state.iteration}: {description}")
    escalated = state.iteration > MAX_ITERATIONS
    if escalated:
        state.status = "escalated"
    state = await ctx.store.call(repo.save, state)
    write_view(ctx.paths.self_healing, state)
    await audit_change(ctx, "self_heal", f"{description} | {verification}", _diff(before, state))
    if escalated:
        await _end_checks(ctx, state, "escalated")
        await ctx.notify(
            owner_message(
                ctx,
                f"🚨 SELF-HEALING ESCALATION: {state.anomaly} is still not fixed after "
                f"{MAX_ITERATIONS} iterations. I stopped trying; the history is in "
                f"{ctx.paths.self_healing}. Clear it with /selfheal clear.",
                kind="alert",
                priority="urgent",
            )
        )
        log.error("self-healing escalated after %d iterations: %s", MAX_ITERATIONS, state.anomaly)
        return "escalated"
    await ctx.notify(
        owner_message(
            ctx,
            f"🔧 SELF-HEALING ({state.iteration}/{MAX_ITERATIONS}): {state.anomaly}\n"
            f"Tried: {description}",
            kind="alert",
        )
    )
    target = owner_message(ctx, "")
    task_id, _ = await ctx.store.call(
        ctx.store.create_task,
        channel=target.channel,
        sender_id=target.target,
        reply_target=target.target,
        description=follow_up(state.anomaly, verification),
        due_at=datetime.now(UTC) + VERIFY_AFTER,
        task_type="action",
        timezone=timezone_name(ctx.timezone),
    )
    await ctx.store.call(remember_check, ctx.store, state.id, task_id)
    ctx.state.tasks_changed.set()
    return f"iteration {state.iteration}"


async def self_heal_resolved(ctx: MarkerContext) -> str:
    """SELF_HEAL_RESOLVED: close an open session, delete the view and tell the owner."""
    repo = SelfHealStore(ctx.store)
    before = await ctx.store.call(repo.current)
    if before is None:
        return "no healing in progress"
    await _claim(ctx, "SELF_HEAL_RESOLVED")
    if before.status == "escalated":
        await audit_change(ctx, "self_heal:refused", "SELF_HEAL_RESOLVED", "escalated")
        raise PermissionError("self-healing is escalated; only the owner can clear it")
    await ctx.store.call(repo.close, "resolved", True)
    await _end_checks(ctx, before, "resolved")
    write_view(ctx.paths.self_healing, None)
    await audit_change(ctx, "self_heal_resolved", "SELF_HEAL_RESOLVED", _diff(before, None))
    await ctx.notify(
        owner_message(ctx, f"✅ Self-healing complete: {before.anomaly}", kind="alert")
    )
    return "resolved"


def clear_escalation(store: Store, path: Path) -> tuple[SelfHealingState | None, list[str]]:
    """The owner clears the current session (escalated or open): the session as it was (None
    when there is none) and the ids of its pending checks, now cancelled."""
    cleared = SelfHealStore(store).close("cleared", only_open=False)
    if cleared is None:
        return None, []
    write_view(path, None)
    return cleared, cancel_checks(store, cleared.id)
