"""What the notification gate holds for a person's digest (their quiet hours, their daily cap)
and how many unasked messages each person got on each of their days.

Durable and delivered once: a held message stays in `held_messages` until the digest carrying
it went out. A replica takes the due rows under a lease (`take_held`, one write transaction, so
two replicas never take the same row) and marks them sent (`held_sent`); one that dies between
the two leaves them taken, and once the lease runs out the next replica sends them (at least
once: the digest's id names its rows, so a receiver can drop a repeat)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal, cast, get_args

from omega.logs import redact
from omega.memory.db import Database, from_db_time, to_db_time
from omega.text import scrub
from omega.types import OutgoingKind, OutgoingMessage, Priority

HELD_LEASE_SECS = 120.0  # how long taken rows are the taker's to send
KEEP_SENT = timedelta(days=30)  # sent rows are kept this long (for the record), then pruned
HoldReason = Literal["quiet", "cap"]
_COLUMNS = "id, person, channel, target, kind, priority, text, reason, created_at"


@dataclass(frozen=True)
class HeldMessage:
    """One message the gate held: for whom, where it goes, what it said, and why."""

    id: int
    person: str
    channel: str
    target: str
    kind: OutgoingKind
    priority: Priority
    text: str
    reason: HoldReason
    created_at: datetime


def _kind(value: str) -> OutgoingKind:
    return cast(OutgoingKind, value) if value in get_args(OutgoingKind) else "alert"


def _priority(value: str) -> Priority:
    return cast(Priority, value) if value in get_args(Priority) else "normal"


class HeldMessages(Database):
    """The held_messages and unasked_counts tables."""

    def hold_message(
        self,
        person: str,
        message: OutgoingMessage,
        reason: HoldReason,
        now: datetime,
        release_at: datetime,
    ) -> int:
        """Keep `message` (held at `now`) for `person`'s digest, due at `release_at`; return
        its id."""
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT INTO held_messages (person, channel, target, kind, priority, text, "
                "reason, created_at, release_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    person,
                    message.channel,
                    message.target,
                    message.kind,
                    message.priority,
                    redact(scrub(message.text)),
                    reason,
                    to_db_time(now),
                    to_db_time(release_at),
                ),
            )
            return int(cursor.lastrowid or 0)

    def count_unasked(self, person: str, day: date, cap: int) -> bool:
        """Count one more unasked message for `person` on their `day`, unless `cap` were
        passed: True when counted (it may go out), False when the cap is reached."""
        key = day.isoformat()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT sent FROM unasked_counts WHERE person = ? AND day = ?", (person, key)
            ).fetchone()
            if row is not None and int(row[0]) >= cap:
                return False
            conn.execute(
                "INSERT INTO unasked_counts (person, day, sent) VALUES (?, ?, 1) "
                "ON CONFLICT (person, day) DO UPDATE SET sent = unasked_counts.sent + 1",
                (person, key),
            )
            # Yesterday's counts are all a cap reads; older ones go.
            old = (day - timedelta(days=3)).isoformat()
            conn.execute("DELETE FROM unasked_counts WHERE day < ?", (old,))
            return True

    def take_held(
        self, taker: str, now: datetime, lease_s: float = HELD_LEASE_SECS
    ) -> list[HeldMessage]:
        """Take every held message due at `now` that nobody holds (or whose taker's lease ran
        out), oldest first, for `lease_s` seconds; `held_sent` them once their digest went out."""
        moment = to_db_time(now)
        where = (
            "WHERE sent_at IS NULL AND release_at <= ? "
            "AND (taken_until IS NULL OR taken_until <= ?)"
        )
        if not self._query(f"SELECT 1 FROM held_messages {where} LIMIT 1", (moment, moment)):
            return []  # nothing due: no write transaction (the loop looks every minute)
        until = to_db_time(now + timedelta(seconds=lease_s))
        with self._tx() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM held_messages {where} ORDER BY id LIMIT 500",
                (moment, moment),
            ).fetchall()
            conn.executemany(
                "UPDATE held_messages SET taken_by = ?, taken_until = ? WHERE id = ?",
                [(taker, until, row[0]) for row in rows],
            )
            conn.execute(
                "DELETE FROM held_messages WHERE sent_at IS NOT NULL AND sent_at < ?",
                (to_db_time(now - KEEP_SENT),),
            )
        return [
            HeldMessage(
                int(row[0]),
                str(row[1]),
                str(row[2]),
                str(row[3]),
                _kind(str(row[4])),
                _priority(str(row[5])),
                str(row[6]),
                cast(HoldReason, row[7]),
                from_db_time(str(row[8])),
            )
            for row in rows
        ]

    def held_sent(self, ids: list[int], now: datetime) -> None:
        """The digest carrying these held messages went out: they are done."""
        with self._tx() as conn:
            conn.executemany(
                "UPDATE held_messages SET sent_at = ? WHERE id = ?",
                [(to_db_time(now), held_id) for held_id in ids],
            )

    def release_held_now(self, person: str, now: datetime) -> int:
        """Make `person`'s messages held for their quiet hours due now (they turned them off);
        return how many."""
        with self._tx() as conn:
            return conn.execute(
                "UPDATE held_messages SET release_at = ? "
                "WHERE person = ? AND reason = 'quiet' AND sent_at IS NULL",
                (to_db_time(now), person),
            ).rowcount

    def held_waiting(self, person: str | None = None) -> int:
        """How many held messages wait for a digest (of `person`, or everyone's)."""
        sql = "SELECT COUNT(*) FROM held_messages WHERE sent_at IS NULL"
        rows = self._query(sql + " AND person = ?", (person,)) if person else self._query(sql)
        return int(rows[0][0]) if rows else 0

    def next_held_release(self) -> datetime | None:
        """When the next held message may be taken (due, and any taker's lease over), None
        when none waits."""
        rows = self._query(
            "SELECT MIN(CASE WHEN taken_until > release_at THEN taken_until ELSE release_at END) "
            "FROM held_messages WHERE sent_at IS NULL"
        )
        return from_db_time(str(rows[0][0])) if rows and rows[0][0] else None
