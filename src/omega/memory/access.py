"""Who the owner let in at run time: allowed people and owners kept in memory.db.

The config's allow-lists and `[auth] owners` stay the seed and the override (turn/auth.py
merges both); these rows are what `omega people allow|revoke`, pairing and the web page change
without a restart. Nothing here is cached: every message reads its sender's row again, so a
revocation holds from the next message on. Every change writes an audit row.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

from omega.logs import redact
from omega.memory.db import Database, utc_now
from omega.text import scrub

GrantRole = Literal["person", "owner"]  # 'revoked' rows grant nothing


@dataclass(frozen=True)
class Grant:
    """One channel id let in at run time."""

    channel: str
    sender_id: str
    role: GrantRole
    granted_by: str
    granted_at: str


def _grant(row: sqlite3.Row) -> Grant:
    role: GrantRole = "owner" if row["role"] == "owner" else "person"
    return Grant(row["channel"], row["sender_id"], role, row["granted_by"], row["granted_at"])


def audit_access(
    conn: sqlite3.Connection, event: str, channel: str, sender_id: str, detail: str
) -> None:
    """One audit_log row for a change of who may talk to Omega, inside the caller's
    transaction (so the change and its record are one)."""
    conn.execute(
        "INSERT INTO audit_log (created_at, channel, sender_id, status, detail, event) "
        "VALUES (?, ?, ?, 'ok', ?, ?)",
        (utc_now(), channel, redact(scrub(sender_id))[:200], redact(scrub(detail))[:2000], event),
    )


class Access(Database):
    """Allowed people and owners added at run time."""

    def granted_role(self, channel: str, sender_id: str) -> GrantRole | None:
        """The role memory.db gives this channel id, None when it gives none."""
        rows = self._query(
            "SELECT role FROM access_grants WHERE channel = ? AND sender_id = ?",
            (channel, sender_id),
        )
        role = rows[0]["role"] if rows else None
        return "owner" if role == "owner" else "person" if role == "person" else None

    def grants(self, channel: str | None = None) -> list[Grant]:
        """Every run-time grant (of one channel when given), by channel and id."""
        sql = "SELECT * FROM access_grants WHERE role != 'revoked'"
        params: tuple[object, ...] = ()
        if channel is not None:
            sql, params = sql + " AND channel = ?", (channel,)
        return [_grant(row) for row in self._query(sql + " ORDER BY channel, sender_id", params)]

    def grant_access(self, channel: str, sender_id: str, role: GrantRole, by: str) -> bool:
        """Let `channel:sender_id` in with `role` (audited); False when it already had it."""
        with self._tx() as conn:
            return grant_in(conn, channel, sender_id, role, by)

    def revoke_access(self, channel: str, sender_id: str, by: str) -> tuple[bool, int]:
        """Take a run-time grant back, turn the id away from pairing too, and cancel the
        pending tasks that channel id made (audited); return (whether there was a grant, how
        many tasks were cancelled)."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT role FROM access_grants WHERE channel = ? AND sender_id = ?",
                (channel, sender_id),
            ).fetchone()
            gone = int(row is not None and row[0] != "revoked")
            conn.execute(
                "INSERT INTO access_grants (channel, sender_id, role, granted_by, granted_at) "
                "VALUES (?, ?, 'revoked', ?, ?) ON CONFLICT (channel, sender_id) DO UPDATE SET "
                "role = excluded.role, granted_by = excluded.granted_by, "
                "granted_at = excluded.granted_at",
                (channel, sender_id, by, utc_now()),
            )
            # A task made from this channel id: its own id as sender, or as origin when the
            # task is kept under a linked person's key (memory/people.py).
            cancelled = conn.execute(
                "UPDATE scheduled_tasks SET status = 'cancelled' WHERE status = 'pending' AND "
                "channel = ? AND (origin_id = ? OR (origin_id = '' AND sender_id = ?))",
                (channel, sender_id, sender_id),
            ).rowcount
            audit_access(
                conn,
                "access:revoked",
                channel,
                sender_id,
                f"by {by}; {'a grant was removed' if gone else 'no run-time grant'}; "
                f"{cancelled} pending task(s) cancelled",
            )
            return gone > 0, cancelled


def grant_in(
    conn: sqlite3.Connection, channel: str, sender_id: str, role: GrantRole, by: str
) -> bool:
    """`Access.grant_access` inside the caller's transaction (pairing approves with it)."""
    row = conn.execute(
        "SELECT role FROM access_grants WHERE channel = ? AND sender_id = ?",
        (channel, sender_id),
    ).fetchone()
    if row is not None and row[0] == role:
        return False
    conn.execute(
        "INSERT INTO access_grants (channel, sender_id, role, granted_by, granted_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, sender_id) DO UPDATE SET "
        "role = excluded.role, granted_by = excluded.granted_by, granted_at = excluded.granted_at",
        (channel, sender_id, role, by, utc_now()),
    )
    audit_access(conn, "access:allowed", channel, sender_id, f"role {role}, by {by}")
    return True
