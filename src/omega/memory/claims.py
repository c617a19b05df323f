"""Claims on the shared inbox: N replicas of Omega on one database each handle their share,
one sender's messages strictly in order, and a replica that dies leaves its claims to expire.

A pending row is claimed with a lease (`claimed_by`, `lease_until`). Only the oldest pending
message of a sender is claimable, and only while no message of that sender holds a live claim;
finishing (or releasing) a message clears its claim, and the sender's next message becomes
claimable. On SQLite the write transaction (BEGIN IMMEDIATE) serializes claimers; on PostgreSQL
the select also locks the rows it picks (FOR UPDATE SKIP LOCKED), so claimers never wait on
each other, and the update checks the lease again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from omega.memory import wakeups
from omega.memory.db import Database, to_db_time, utc_now
from omega.memory.inbox import inbox_message
from omega.types import IncomingMessage


@dataclass(frozen=True)
class Claim:
    """A message this replica now holds, and how many attempts at it were already started."""

    message: IncomingMessage
    attempts: int


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def _lease_end(lease_s: float) -> str:
    return to_db_time(datetime.now(UTC) + timedelta(seconds=lease_s))


class InboxClaims(Database):
    """Claiming, renewing and releasing pending inbox rows (see the module docstring)."""

    def inbox_claim(
        self,
        replica: str,
        lease_s: float,
        channels: Sequence[str],
        limit: int = 16,
        *,
        local_channels: Sequence[str] = (),
        sender: tuple[str, str] | None = None,
    ) -> list[Claim]:
        """Claim up to `limit` pending messages for `lease_s` seconds: of each sender only the
        oldest pending one, and only when no message of that sender holds a live claim.

        `channels`: those this replica can answer on whoever received the message;
        `local_channels`: those whose answers only leave from the replica that received the
        message (only its own are claimed). `sender` (channel, sender id): that sender only."""
        now = utc_now()
        reach: list[str] = []
        params: list[object] = [now]
        if channels:
            reach.append(f"i.channel IN ({_marks(channels)})")
            params.extend(channels)
        if local_channels:
            reach.append(f"(i.channel IN ({_marks(local_channels)}) AND i.received_by = ?)")
            params.extend([*local_channels, replica])
        if not reach:
            return []
        only_sender = ""
        if sender is not None:
            only_sender = " AND i.channel = ? AND i.sender_id = ?"
            params.extend(sender)
        params.extend([now, limit])
        lock = " FOR UPDATE OF i SKIP LOCKED" if self.dialect == "postgresql" else ""
        sql = (
            "SELECT i.seq, i.id, i.payload, i.attempts FROM inbox i "
            "WHERE i.status = 'pending' AND (i.lease_until IS NULL OR i.lease_until <= ?) "
            f"AND ({' OR '.join(reach)}){only_sender} "
            # The sender's oldest pending message only: the next waits until it is finished.
            "AND NOT EXISTS (SELECT 1 FROM inbox o WHERE o.status = 'pending' "
            " AND o.channel = i.channel AND o.sender_id = i.sender_id AND o.seq < i.seq) "
            # ... and never beside a live claim of the same sender.
            "AND NOT EXISTS (SELECT 1 FROM inbox c WHERE c.status = 'pending' "
            " AND c.channel = i.channel AND c.sender_id = i.sender_id AND c.seq <> i.seq "
            " AND c.claimed_by IS NOT NULL AND c.lease_until > ?) "
            f"ORDER BY i.seq LIMIT ?{lock}"
        )
        if not self._query(sql.removesuffix(lock), tuple(params)):
            return []  # nothing to claim: no write transaction (replicas poll this often)
        until = _lease_end(lease_s)
        claimed: list[Claim] = []
        with self._tx() as conn:
            for seq, message_id, payload, attempts in conn.execute(sql, params).fetchall():
                taken = conn.execute(
                    "UPDATE inbox SET claimed_by = ?, lease_until = ? WHERE seq = ? "
                    "AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?)",
                    (replica, until, seq, now),
                ).rowcount
                if taken == 1:
                    claimed.append(Claim(inbox_message(message_id, payload), int(attempts)))
        return claimed

    def inbox_start(self, replica: str, message_id: str, lease_s: float) -> int | None:
        """Count one more attempt at a message this replica holds and renew its lease; the
        attempts so far, or None when the claim was lost (another replica took it over)."""
        with self._tx() as conn:
            taken = conn.execute(
                "UPDATE inbox SET attempts = attempts + 1, lease_until = ? "
                "WHERE id = ? AND claimed_by = ? AND status = 'pending'",
                (_lease_end(lease_s), message_id, replica),
            ).rowcount
            if taken != 1:
                return None
            row = conn.execute("SELECT attempts FROM inbox WHERE id = ?", (message_id,)).fetchone()
        return int(row[0])

    def inbox_renew(self, replica: str, message_ids: Sequence[str], lease_s: float) -> list[str]:
        """Extend the leases of messages this replica holds; the ids it still holds."""
        if not message_ids:
            return []
        ids = list(message_ids)
        with self._tx() as conn:
            conn.execute(
                "UPDATE inbox SET lease_until = ? WHERE claimed_by = ? AND status = 'pending' "
                f"AND id IN ({_marks(ids)})",
                (_lease_end(lease_s), replica, *ids),
            )
            rows = conn.execute(
                "SELECT id FROM inbox WHERE claimed_by = ? AND status = 'pending' "
                f"AND id IN ({_marks(ids)})",
                (replica, *ids),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def inbox_unclaim(self, replica: str, keep: Sequence[str] = ()) -> int:
        """Release this replica's claims (but those in `keep`); return how many."""
        keeping = f" AND id NOT IN ({_marks(keep)})" if keep else ""
        with self._tx() as conn:
            released = int(
                conn.execute(
                    "UPDATE inbox SET claimed_by = NULL, lease_until = NULL "
                    f"WHERE claimed_by = ? AND status = 'pending'{keeping}",
                    (replica, *keep),
                ).rowcount
            )
            if released:
                self._notify(conn, wakeups.INBOX)  # the other replicas take them up now
            return released

    def inbox_replicas(self) -> list[str]:
        """The replicas that hold a claim or received a message still pending."""
        rows = self._query(
            "SELECT claimed_by FROM inbox WHERE status = 'pending' AND claimed_by IS NOT NULL "
            "UNION SELECT received_by FROM inbox WHERE status = 'pending' AND received_by <> ''"
        )
        return sorted(str(row[0]) for row in rows)

    def inbox_adopt(self, replica: str, dead: Sequence[str]) -> int:
        """Take over from replicas known to be dead (and from rows kept before replicas had
        names): their claims are released at once and what they received becomes this
        replica's to answer. Return how many rows changed."""
        gone = [name for name in dead if name and name != replica]
        changed = 0
        with self._tx() as conn:
            if gone:
                changed += conn.execute(
                    "UPDATE inbox SET claimed_by = NULL, lease_until = NULL "
                    f"WHERE status = 'pending' AND claimed_by IN ({_marks(gone)})",
                    gone,
                ).rowcount
            changed += conn.execute(
                "UPDATE inbox SET received_by = ? WHERE status = 'pending' "
                f"AND received_by IN ({_marks(['', *gone])})",
                (replica, "", *gone),
            ).rowcount
        return changed

    def inbox_settled(self, message_ids: Sequence[str]) -> set[str]:
        """Of these ids, those no longer pending (answered, failed, or never kept)."""
        if not message_ids:
            return set()
        ids = list(message_ids)
        rows = self._query(
            f"SELECT id FROM inbox WHERE status = 'pending' AND id IN ({_marks(ids)})", tuple(ids)
        )
        return set(ids) - {str(row[0]) for row in rows}
