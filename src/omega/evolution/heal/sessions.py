"""Self-healing sessions in the store: every change is one transaction.

A SELF_HEAL is claimed (one per message), counted, saved and given its verification task in one
write transaction, so concurrent markers (replies, plan steps, scheduled checks, replicas) queue
on the store's write lock and each sees the one before it: there is never more than one live
(open or escalated) session, which the partial unique index of migration 025 also holds.

The cap counts SELF_HEAL iterations over the last 24 hours across sessions, not per session: a
session's iteration is the larger of its own count and the iterations counted in the window
(since the owner's last `/selfheal clear`), plus one. SELF_HEAL_RESOLVED closes a session but
resets nothing, so the model cannot lift the cap by claiming success; only the owner clearing a
session starts the count again. Ending a session (resolved, escalated, cleared) cancels its
pending verification tasks in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from omega.memory.db import to_db_time, utc_now
from omega.memory.store import Store

MAX_ITERATIONS = 10
WINDOW = timedelta(hours=24)
_COLUMNS = "id, anomaly, verification, iteration, attempts, status, started_at"


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


@dataclass
class Iteration:
    """What one SELF_HEAL did: `refused` is "duplicate" (the message already gave its event)
    or "escalated" (the live session waits for the owner), else `after` is the session saved,
    with the verification task scheduled (`task_id`) or, past the cap, the checks cancelled."""

    before: SelfHealingState | None
    after: SelfHealingState | None = None
    refused: str = ""
    task_id: str = ""
    cancelled: list[str] = field(default_factory=list)


def _state(row: Sequence[Any]) -> SelfHealingState:
    """A session from a row of `_COLUMNS` (positional: the same on both engines)."""
    return SelfHealingState(
        id=int(row[0]),
        anomaly=str(row[1]),
        verification=str(row[2]),
        iteration=int(row[3]),
        attempts=[str(a) for a in json.loads(row[4])],
        status=str(row[5]),
        started_at=str(row[6]),
    )


def _live(conn: sqlite3.Connection) -> SelfHealingState | None:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM self_heal_sessions WHERE status IN ('open', 'escalated') "
        "ORDER BY id DESC LIMIT 1"
    ).fetchall()
    return _state(rows[0]) if rows else None


def _claim(conn: sqlite3.Connection, message_id: str, marker: str) -> bool:
    """Record the message's one self-heal event; False when it already gave one."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO self_heal_events (message_id, marker, created_at) VALUES (?, ?, ?)",
        (message_id, marker, utc_now()),
    )
    return cursor.rowcount == 1


def _checks_scope(session_id: int) -> str:
    return f"self_heal:{session_id}"


def remember_check(store: Store, session_id: int, task_id: str) -> None:
    """Keep a verification task with its session (one key per task: no lost update)."""
    store.state_put(_checks_scope(session_id), task_id, True)


def cancel_checks(store: Store, session_id: int) -> list[str]:
    """Cancel the session's verification tasks still pending; the ids cancelled."""
    scope = _checks_scope(session_id)
    with store.transaction():
        task_ids = store.state_keys(scope)
        cancelled = store.cancel_pending(task_ids)
        for task_id in task_ids:
            store.state_delete(scope, task_id)
    return cancelled


class SelfHealStore:
    """The self_heal_sessions and self_heal_events tables; safe from any thread."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def current(self) -> SelfHealingState | None:
        """The open or escalated session, if any."""
        rows = self.store.query(
            f"SELECT {_COLUMNS} FROM self_heal_sessions WHERE status IN ('open', 'escalated') "
            "ORDER BY id DESC LIMIT 1"
        )
        return _state(rows[0]) if rows else None

    def claim_event(self, message_id: str, marker: str) -> bool:
        """True the first time a message produces a self-heal event; False after that."""
        with self.store.transaction() as conn:
            return _claim(conn, message_id, marker)

    def _counted(self, conn: sqlite3.Connection) -> int:
        cutoff = to_db_time(datetime.now(UTC) - WINDOW)
        cleared = conn.execute(
            "SELECT MAX(updated_at) FROM self_heal_sessions WHERE status = 'cleared'"
        ).fetchall()
        if cleared and cleared[0][0] is not None:
            cutoff = max(cutoff, str(cleared[0][0]))
        rows = conn.execute(
            "SELECT COUNT(*) FROM self_heal_events WHERE marker = 'SELF_HEAL' "
            "AND session_id IS NOT NULL AND created_at > ?",
            (cutoff,),
        ).fetchall()
        return int(rows[0][0])

    def iterate(
        self,
        message_id: str,
        description: str,
        verification: str,
        schedule: Callable[[SelfHealingState], str],
    ) -> Iteration:
        """One SELF_HEAL from `message_id`, all in one transaction: claim the event, count the
        iteration into the live session (or a new one), save it, and either schedule its
        check (`schedule(session)` returns the task id) or, past the cap, escalate and cancel
        the session's pending checks."""
        with self.store.transaction() as conn:
            if not _claim(conn, message_id, "SELF_HEAL"):
                return Iteration(None, refused="duplicate")
            before = _live(conn)
            if before is not None and before.status == "escalated":
                return Iteration(before, refused="escalated")
            state = SelfHealingState(**asdict(before)) if before else None
            state = state or SelfHealingState(anomaly=description, verification=verification)
            state.iteration = max(state.iteration, self._counted(conn)) + 1
            state.verification = verification
            state.attempts.append(f"{state.iteration}: {description}")
            if state.iteration > MAX_ITERATIONS:
                state.status = "escalated"
            self._save(conn, state)
            conn.execute(
                "UPDATE self_heal_events SET session_id = ? WHERE message_id = ?",
                (state.id, message_id),
            )
            if state.status == "escalated":
                return Iteration(before, state, cancelled=cancel_checks(self.store, state.id))
            task_id = schedule(state)
            remember_check(self.store, state.id, task_id)
            return Iteration(before, state, task_id=task_id)

    def save(self, state: SelfHealingState) -> SelfHealingState:
        """Insert or update a session; returns it with its id."""
        with self.store.transaction() as conn:
            return self._save(conn, state)

    def _save(self, conn: sqlite3.Connection, state: SelfHealingState) -> SelfHealingState:
        now = utc_now()
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

    def close(self, status: str, only_open: bool) -> tuple[SelfHealingState | None, list[str]]:
        """Close the live session (resolved or cleared) and cancel its pending checks, in one
        transaction: the session as it was before (None when there is none to close, or
        `only_open` and it is escalated) and the ids of the checks cancelled."""
        with self.store.transaction() as conn:
            state = _live(conn)
            if state is None or (only_open and state.status != "open"):
                return None, []
            self._save(conn, SelfHealingState(**{**asdict(state), "status": status}))
            return state, cancel_checks(self.store, state.id)
