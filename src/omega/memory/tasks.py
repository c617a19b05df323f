"""Scheduled tasks: reminders and actions, their claiming, retries and recurrence anchor."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from omega.errors import OmegaError
from omega.memory import wakeups
from omega.memory.db import Database, from_db_time, to_db_time, utc_now


@dataclass(frozen=True)
class Task:
    """A scheduled reminder or action."""

    id: str
    channel: str
    sender_id: str
    reply_target: str
    description: str
    task_type: Literal["reminder", "action"]
    due_at: datetime
    repeat: str
    timezone: str
    status: str
    retry_count: int = 0
    anchor_local: datetime | None = None  # first occurrence, naive wall-clock in `timezone`
    origin_id: str = ""  # the creator's channel id when `sender_id` is their person key
    creator_role: str = ""  # the creator's role when they made it ("" before migration 013)
    # Where it was made (migration 021): the message's thread and whether it came from a group
    # room; an action runs in that conversation (IncomingMessage.conversation).
    thread: str = ""
    is_group: bool = False

    def answers_at(self, channel: str, target: str) -> bool:
        """Whether the task answers at `target` on `channel` (a room's tasks are the ones
        made there: only they are shown in it)."""
        return (self.channel, self.reply_target) == (channel, target)


def _anchor(due_at: datetime, timezone: str) -> str:
    """The wall-clock time of an occurrence in the task's zone (what repeats keep)."""
    try:
        zone: tzinfo = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        zone = UTC
    return due_at.astimezone(zone).replace(tzinfo=None).isoformat(timespec="seconds")


# Why an action cut short by a crash is not marked done (`interrupt_task`).
INTERRUPTED = "Omega stopped while it was running: it may not have run"


def _task(row: sqlite3.Row) -> Task:
    anchor = row["anchor_local"]
    return Task(
        anchor_local=datetime.fromisoformat(anchor) if anchor else None,
        id=row["id"],
        channel=row["channel"],
        sender_id=row["sender_id"],
        reply_target=row["reply_target"],
        description=row["description"],
        task_type=row["task_type"],
        due_at=from_db_time(row["due_at"]),
        repeat=row["repeat"],
        timezone=row["timezone"],
        status=row["status"],
        retry_count=row["retry_count"],
        origin_id=row["origin_id"],
        creator_role=row["creator_role"],
        thread=row["thread"],
        is_group=bool(row["is_group"]),
    )


class TaskLookupError(OmegaError, LookupError):
    """No task, or more than one, matches an id prefix."""


class Tasks(Database):
    """Scheduled reminders and actions."""

    def create_task(
        self,
        *,
        channel: str,
        sender_id: str,
        reply_target: str,
        description: str,
        due_at: datetime,
        repeat: str = "once",
        task_type: str = "reminder",
        timezone: str = "UTC",
        anchor_local: datetime | None = None,
        origin_id: str = "",
        creator_role: str = "",
        thread: str = "",
        is_group: bool = False,
    ) -> tuple[str, bool]:
        """Schedule a task; return (id, created). An identical pending task is not duplicated.

        `anchor_local` is the wall-clock time repeats keep (naive, in `timezone`); without it,
        the due time read in `timezone` is the anchor. `creator_role` is the role its creator
        had (turn.privileges): edits need at least that role and an action never runs with more.
        `thread` and `is_group` are those of the message that made it: its conversation."""
        due = to_db_time(due_at)
        anchor = (
            anchor_local.replace(tzinfo=None).isoformat(timespec="seconds")
            if anchor_local is not None
            else _anchor(due_at, timezone)
        )
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id FROM scheduled_tasks WHERE sender_id = ? AND channel = ? AND "
                "description = ? AND due_at = ? AND task_type = ? AND status = 'pending'",
                (sender_id, channel, description, due, task_type),
            ).fetchone()
            if row:
                return str(row[0]), False
            task_id = uuid.uuid4().hex
            conn.execute(
                "INSERT INTO scheduled_tasks (id, channel, sender_id, reply_target, description, "
                "task_type, due_at, anchor_local, repeat, timezone, created_at, origin_id, "
                "creator_role, thread, is_group) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    task_id,
                    channel,
                    sender_id,
                    reply_target,
                    description,
                    task_type,
                    due,
                    anchor,
                    repeat,
                    timezone,
                    utc_now(),
                    origin_id,
                    creator_role,
                    thread,
                    int(is_group),
                ),
            )
            return task_id, True

    def pending_tasks(self, sender_id: str) -> list[Task]:
        """The sender's pending tasks, soonest first."""
        rows = self._query(
            "SELECT * FROM scheduled_tasks WHERE sender_id = ? AND status = 'pending' "
            "ORDER BY due_at",
            (sender_id,),
        )
        return [_task(row) for row in rows]

    def _task_by_prefix(self, conn: sqlite3.Connection, sender_id: str, prefix: str) -> str:
        # Exact prefix match on the id (no LIKE, so no wildcards), pending tasks of this sender.
        prefix = prefix.strip().lower()
        if not prefix:
            raise TaskLookupError("no task id given")
        rows = conn.execute(
            "SELECT id FROM scheduled_tasks WHERE sender_id = ? AND status = 'pending' "
            "AND substr(id, 1, ?) = ?",
            (sender_id, len(prefix), prefix),
        ).fetchall()
        if not rows:
            raise TaskLookupError(f"no pending task starts with {prefix!r}")
        if len(rows) > 1:
            raise TaskLookupError(f"{len(rows)} tasks start with {prefix!r}; give more of the id")
        return str(rows[0][0])

    def find_pending_task(self, sender_id: str, prefix: str) -> Task:
        """The one pending task of this sender whose id starts with `prefix`."""
        with self._tx() as conn:
            task_id = self._task_by_prefix(conn, sender_id, prefix)
        task = self.task(task_id)
        if task is None:  # cancelled between the two reads
            raise TaskLookupError(f"no pending task starts with {prefix!r}")
        return task

    def cancel_task(self, sender_id: str, prefix: str) -> Task:
        """Cancel the one pending task of this sender whose id starts with `prefix`."""
        with self._tx() as conn:
            task_id = self._task_by_prefix(conn, sender_id, prefix)
            conn.execute("UPDATE scheduled_tasks SET status = 'cancelled' WHERE id = ?", (task_id,))
            conn.row_factory = sqlite3.Row
            try:
                row = conn.execute("SELECT * FROM scheduled_tasks WHERE id = ?", (task_id,))
                return _task(row.fetchone())
            finally:
                conn.row_factory = None

    def cancel_pending(self, task_ids: list[str]) -> list[str]:
        """Cancel those of `task_ids` that are still pending (by full id, whoever made them:
        the caller owns them, e.g. a self-healing session's checks); the ids cancelled."""
        cancelled: list[str] = []
        with self._tx() as conn:
            for task_id in task_ids:
                cursor = conn.execute(
                    "UPDATE scheduled_tasks SET status = 'cancelled' "
                    "WHERE id = ? AND status = 'pending'",
                    (task_id,),
                )
                if cursor.rowcount == 1:
                    cancelled.append(task_id)
            if cancelled:
                self._notify(conn, wakeups.TASKS)
        return cancelled

    def update_task(
        self,
        sender_id: str,
        prefix: str,
        *,
        description: str = "",
        due_at: datetime | None = None,
        repeat: str = "",
        anchor_local: datetime | None = None,
        timezone: str = "",
    ) -> Task:
        """Change the given fields of one pending task (matched by exact id prefix)."""
        with self._tx() as conn:
            task_id = self._task_by_prefix(conn, sender_id, prefix)
            if description:
                conn.execute(
                    "UPDATE scheduled_tasks SET description = ? WHERE id = ?",
                    (description, task_id),
                )
            if due_at is not None:
                conn.execute(
                    "UPDATE scheduled_tasks SET due_at = ? WHERE id = ?",
                    (to_db_time(due_at), task_id),
                )
            if repeat:
                conn.execute(
                    "UPDATE scheduled_tasks SET repeat = ? WHERE id = ?", (repeat, task_id)
                )
            if anchor_local is not None:
                conn.execute(
                    "UPDATE scheduled_tasks SET anchor_local = ? WHERE id = ?",
                    (anchor_local.replace(tzinfo=None).isoformat(timespec="seconds"), task_id),
                )
            if timezone:
                conn.execute(
                    "UPDATE scheduled_tasks SET timezone = ? WHERE id = ?", (timezone, task_id)
                )
            conn.row_factory = sqlite3.Row
            try:
                row = conn.execute("SELECT * FROM scheduled_tasks WHERE id = ?", (task_id,))
                return _task(row.fetchone())
            finally:
                conn.row_factory = None

    def due_tasks(self, now: datetime, limit: int = 100) -> list[Task]:
        """Pending tasks due at or before `now`, oldest first."""
        rows = self._query(
            "SELECT * FROM scheduled_tasks WHERE status = 'pending' AND due_at <= ? "
            "ORDER BY due_at LIMIT ?",
            (to_db_time(now), limit),
        )
        return [_task(row) for row in rows]

    def next_due_at(self) -> datetime | None:
        """When the soonest pending task is due (None when nothing is pending)."""
        rows = self._query(
            "SELECT MIN(due_at) AS due FROM scheduled_tasks WHERE status = 'pending'"
        )
        due = rows[0]["due"] if rows else None
        return from_db_time(due) if due else None

    def claim_task(self, task_id: str, due_at: datetime | None = None) -> bool:
        """Mark a pending task as being delivered; False if someone else has it or it changed.

        With `due_at` (the occurrence the caller read), only that occurrence is claimed: a
        scheduler that read a repeating task before another one fired it and moved it to its
        next time cannot fire it again (one conditional UPDATE: one winner per occurrence)."""
        sql = "UPDATE scheduled_tasks SET status = 'delivering' WHERE id = ? AND status = 'pending'"
        params: tuple[object, ...] = (task_id,)
        if due_at is not None:
            sql += " AND due_at = ?"
            params += (to_db_time(due_at),)
        with self._tx() as conn:
            return conn.execute(sql, params).rowcount == 1

    def finish_task(self, task_id: str, next_due: datetime | None) -> None:
        """After delivery: a one-shot task is done; a repeating one waits for `next_due`."""
        with self._tx() as conn:
            if next_due is None:
                conn.execute(
                    "UPDATE scheduled_tasks SET status = 'delivered', delivered_at = ?, "
                    "last_error = NULL WHERE id = ? AND status = 'delivering'",
                    (utc_now(), task_id),
                )
            else:
                conn.execute(
                    "UPDATE scheduled_tasks SET status = 'pending', due_at = ?, retry_count = 0, "
                    "delivered_at = ?, last_error = NULL WHERE id = ? AND status = 'delivering'",
                    (to_db_time(next_due), utc_now(), task_id),
                )

    def retry_task(self, task_id: str, error: str, retry_at: datetime, give_up: bool) -> None:
        """A failed delivery: back to pending at `retry_at` (never delivered), or failed."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE scheduled_tasks SET status = ?, due_at = ?, retry_count = retry_count + 1, "
                "last_error = ? WHERE id = ? AND status = 'delivering'",
                ("failed" if give_up else "pending", to_db_time(retry_at), error[:1000], task_id),
            )

    def reopen_task(self, task_id: str) -> None:
        """A reminder whose delivery was cut short (Omega died after claiming it): pending
        again at once, so it is delivered at least once (with its stable id, a receiver can
        drop a repeat)."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE scheduled_tasks SET status = 'pending' WHERE id = ? "
                "AND status = 'delivering'",
                (task_id,),
            )
            self._notify(conn, wakeups.TASKS)

    def interrupt_task(self, task_id: str, next_due: datetime | None) -> None:
        """An action cut short by a crash: never counted as done (it may not have run, and it
        may act in the world, so it is not run again by itself): a one-shot is failed with
        the reason, a repeating one waits for its next time with the reason kept."""
        with self._tx() as conn:
            if next_due is None:
                conn.execute(
                    "UPDATE scheduled_tasks SET status = 'failed', last_error = ? "
                    "WHERE id = ? AND status = 'delivering'",
                    (INTERRUPTED, task_id),
                )
            else:
                conn.execute(
                    "UPDATE scheduled_tasks SET status = 'pending', due_at = ?, retry_count = 0, "
                    "last_error = ? WHERE id = ? AND status = 'delivering'",
                    (to_db_time(next_due), INTERRUPTED, task_id),
                )

    def rerun_candidate(self, sender_id: str, prefix: str) -> Task:
        """The one action task of this sender `rerun_task` would run (to check rights first)."""
        rows = self._query(
            "SELECT * FROM scheduled_tasks WHERE sender_id = ? AND task_type = 'action' "
            "AND status IN ('pending', 'failed') AND substr(id, 1, ?) = ?",
            (sender_id, len(prefix), prefix),
        )
        if not rows:
            raise TaskLookupError(f"no action task starts with {prefix!r}")
        if len(rows) > 1:
            raise TaskLookupError(f"{len(rows)} tasks start with {prefix!r}; give more of the id")
        return _task(rows[0])

    def rerun_task(self, sender_id: str, prefix: str) -> Task:
        """Run one of this sender's action tasks again now (one that may not have run, or a
        repeating one ahead of its time): pending, due now."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT id FROM scheduled_tasks WHERE sender_id = ? AND task_type = 'action' "
                "AND status IN ('pending', 'failed') AND substr(id, 1, ?) = ?",
                (sender_id, len(prefix), prefix),
            ).fetchall()
            if not rows:
                raise TaskLookupError(f"no action task starts with {prefix!r}")
            if len(rows) > 1:
                raise TaskLookupError(
                    f"{len(rows)} tasks start with {prefix!r}; give more of the id"
                )
            conn.execute(
                "UPDATE scheduled_tasks SET status = 'pending', due_at = ?, retry_count = 0, "
                "last_error = NULL WHERE id = ?",
                (utc_now(), rows[0][0]),
            )
            self._notify(conn, wakeups.TASKS)
        task = self.task(str(rows[0][0]))
        if task is None:  # removed between the two statements
            raise TaskLookupError(f"no action task starts with {prefix!r}")
        return task

    def interrupted_tasks(self) -> list[Task]:
        """Tasks claimed by a run that died before its bookkeeping."""
        rows = self._query("SELECT * FROM scheduled_tasks WHERE status = 'delivering'")
        return [_task(row) for row in rows]

    def task(self, task_id: str) -> Task | None:
        """One task by its full id."""
        rows = self._query("SELECT * FROM scheduled_tasks WHERE id = ?", (task_id,))
        return _task(rows[0]) if rows else None
