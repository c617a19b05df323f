"""Pairing: a stranger gets a one-time code, the owner approves or denies it.

A code is 8 characters from an alphabet without look-alikes (no 0/O, 1/I/L), valid one hour,
stored only as HMAC-SHA256 under a random salt of its own and compared in constant time; it
is used once. At most MAX_PENDING_PER_CHANNEL requests wait per channel (while they do, a new
one is refused: a waiting code is never pushed out), a channel issues at most the owner's
`[limits] max_pairing_codes_per_channel_per_day` codes in a day, a sender obtains at most
MAX_CODES_PER_SENDER codes a day and one at a time, and a surface that enters
MAX_WRONG_ATTEMPTS wrong codes within ATTEMPT_WINDOW is refused for that long. Of a stranger
only their channel id, the name their channel gave and their first words (capped, for the
owner; blanked once the request is settled) are kept, for at most a day. An id the owner
revoked gets no code (memory/access.py) until allowed again. Who may ask at all (only a
sender their channel proved) is gateway/strangers.py's to decide.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from omega.memory.access import audit_access, grant_in
from omega.memory.db import Database, from_db_time, to_db_time

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
VALID_FOR = timedelta(hours=1)
MAX_PENDING_PER_CHANNEL = 3
MAX_CODES_PER_SENDER = 3  # a day
CODES_PER_CHANNEL = 10  # a day: [limits] max_pairing_codes_per_channel_per_day, by default
KEPT_FOR = timedelta(days=1)
MAX_WRONG_ATTEMPTS = 5
ATTEMPT_WINDOW = timedelta(minutes=15)
FIRST_WORDS = 12  # words of the first message shown to the owner
FIRST_WORDS_CHARS = 80

_SEPARATORS = re.compile(r"[\s\-_.]+")

Offered = Literal["issued", "waiting", "limited", "full", "capped"]
Resolved = Literal["approved", "denied", "malformed", "wrong", "expired", "used", "limited"]


def new_code() -> str:
    """A fresh random code."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def parse_code(text: str) -> str | None:
    """The code typed in `text` (any case; spaces, dashes, dots and underscores ignored), or
    None when it is not one."""
    if len(text) > 64:
        return None
    code = _SEPARATORS.sub("", text).upper()
    if len(code) != CODE_LENGTH or any(char not in ALPHABET for char in code):
        return None
    return code


def code_digest(salt: str, code: str) -> str:
    """What is stored of a code: HMAC-SHA256 of it under its row's salt, as hex."""
    return hmac.new(bytes.fromhex(salt), code.encode("ascii"), hashlib.sha256).hexdigest()


def first_words(text: str) -> str:
    """The beginning of a stranger's first message, as much as the owner is shown."""
    words = " ".join(text.split()[:FIRST_WORDS])
    return words if len(words) <= FIRST_WORDS_CHARS else words[: FIRST_WORDS_CHARS - 1] + "…"


@dataclass(frozen=True)
class PairingRequest:
    """One stranger's request to talk."""

    id: int
    channel: str
    sender_id: str
    reply_target: str
    sender_name: str
    first_words: str
    status: str
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class Offer:
    """What a stranger's message earned: a new code ("issued", shown once and never kept),
    nothing new while their code waits ("waiting"), or nothing, and `why` (for the audit):
    the sender had enough or was turned away ("limited"), the channel's waiting list is full
    ("full") or the channel gave its codes of the day ("capped")."""

    outcome: Offered
    code: str = ""
    request: PairingRequest | None = None
    why: str = ""


@dataclass(frozen=True)
class Resolution:
    """What entering a code did, and the request it named (when it named one)."""

    outcome: Resolved
    request: PairingRequest | None = None


def _request(row: sqlite3.Row) -> PairingRequest:
    return PairingRequest(
        id=row["id"],
        channel=row["channel"],
        sender_id=row["sender_id"],
        reply_target=row["reply_target"],
        sender_name=row["sender_name"],
        first_words=row["first_words"],
        status=row["status"],
        created_at=from_db_time(row["created_at"]),
        expires_at=from_db_time(row["expires_at"]),
    )


def _select(
    conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()
) -> list[sqlite3.Row]:
    cursor = conn.execute(sql, params)
    cursor.row_factory = sqlite3.Row
    return list(cursor.fetchall())


def _settle(conn: sqlite3.Connection, request_id: int, status: str, now: datetime) -> None:
    """A request leaves "pending": what the stranger wrote goes with it."""
    conn.execute(
        "UPDATE pairing_requests SET status = ?, resolved_at = ?, first_words = '', "
        "sender_name = '' WHERE id = ?",
        (status, to_db_time(now), request_id),
    )


def _expire_and_prune(conn: sqlite3.Connection, now: datetime) -> None:
    for row in conn.execute(
        "SELECT id FROM pairing_requests WHERE status = 'pending' AND expires_at <= ?",
        (to_db_time(now),),
    ).fetchall():
        _settle(conn, row[0], "expired", now)
    cutoff = to_db_time(now - KEPT_FOR)
    conn.execute(
        "DELETE FROM pairing_requests WHERE created_at < ? AND status != 'pending' "
        "AND (status != 'approved' OR told_at IS NOT NULL)",
        (cutoff,),
    )
    conn.execute("DELETE FROM pairing_attempts WHERE at < ?", (cutoff,))


class Pairing(Database):
    """Pairing requests and the codes the owner enters."""

    def pairing_offer(
        self,
        channel: str,
        sender_id: str,
        reply_target: str,
        sender_name: str,
        text: str,
        now: datetime,
        codes_per_channel: int = CODES_PER_CHANNEL,
    ) -> Offer:
        """Give a stranger a code unless one of theirs waits, they had enough today, their
        channel gave `codes_per_channel` codes in the last day or MAX_PENDING_PER_CHANNEL
        requests wait on it already (then nobody else's code is pushed out)."""
        with self._tx() as conn:
            _expire_and_prune(conn, now)
            mine = _select(
                conn,
                "SELECT * FROM pairing_requests WHERE channel = ? AND sender_id = ? "
                "AND created_at >= ? ORDER BY id",
                (channel, sender_id, to_db_time(now - KEPT_FOR)),
            )
            if any(row["status"] == "pending" for row in mine):
                return Offer("waiting")
            turned_away = conn.execute(
                "SELECT 1 FROM access_grants WHERE channel = ? AND sender_id = ? "
                "AND role = 'revoked'",
                (channel, sender_id),
            ).fetchone()
            if turned_away:
                return Offer("limited", why="the owner revoked this id")
            if any(row["status"] == "denied" for row in mine):
                return Offer("limited", why="the owner denied this sender within a day")
            if len(mine) >= MAX_CODES_PER_SENDER:
                return Offer("limited", why=f"{len(mine)} codes to this sender within a day")
            # Every row of the last day is a code issued (settled rows are kept a day).
            given = conn.execute(
                "SELECT COUNT(*) FROM pairing_requests WHERE channel = ? AND created_at >= ?",
                (channel, to_db_time(now - KEPT_FOR)),
            ).fetchone()[0]
            if given >= codes_per_channel:
                return Offer("capped", why=f"{channel} gave {given} codes within a day")
            waiting = conn.execute(
                "SELECT COUNT(*) FROM pairing_requests WHERE channel = ? AND status = 'pending'",
                (channel,),
            ).fetchone()[0]
            if waiting >= MAX_PENDING_PER_CHANNEL:
                return Offer("full", why=f"{waiting} requests on {channel} wait for the owner")
            code, salt = new_code(), secrets.token_hex(16)
            cursor = conn.execute(
                "INSERT INTO pairing_requests (channel, sender_id, reply_target, sender_name, "
                "first_words, salt, code_hash, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    channel,
                    sender_id,
                    reply_target,
                    sender_name[:100],
                    first_words(text),
                    salt,
                    code_digest(salt, code),
                    to_db_time(now),
                    to_db_time(now + VALID_FOR),
                ),
            )
            (row,) = _select(
                conn, "SELECT * FROM pairing_requests WHERE id = ?", (cursor.lastrowid,)
            )
            audit_access(conn, "pairing:requested", channel, sender_id, "a code was issued")
            return Offer("issued", code, _request(row))

    def pairing_pending(self, now: datetime) -> list[PairingRequest]:
        """The requests waiting for the owner, oldest first (expired ones are settled)."""
        with self._tx() as conn:
            _expire_and_prune(conn, now)
            rows = _select(
                conn,
                "SELECT * FROM pairing_requests WHERE status = 'pending' ORDER BY created_at, id",
            )
        return [_request(row) for row in rows]

    def pairing_resolve(self, text: str, approve: bool, actor: str, now: datetime) -> Resolution:
        """Approve (the sender becomes an allowed person of their channel) or deny the
        request whose code is `text`. Every code entered counts for `actor`; one who entered
        too many wrong ones lately is refused, even a right code."""
        with self._tx() as conn:
            _expire_and_prune(conn, now)
            wrong = conn.execute(
                "SELECT COUNT(*) FROM pairing_attempts WHERE actor = ? AND ok = 0 AND at >= ?",
                (actor, to_db_time(now - ATTEMPT_WINDOW)),
            ).fetchone()[0]
            if wrong >= MAX_WRONG_ATTEMPTS:
                audit_access(conn, "pairing:refused", actor, actor, "too many wrong codes")
                return Resolution("limited")
            result = self._match(conn, parse_code(text), approve, actor, now)
            conn.execute(
                "INSERT INTO pairing_attempts (actor, at, ok) VALUES (?, ?, ?)",
                (actor, to_db_time(now), int(result.outcome in ("approved", "denied"))),
            )
            return result

    @staticmethod
    def _match(
        conn: sqlite3.Connection, code: str | None, approve: bool, actor: str, now: datetime
    ) -> Resolution:
        if code is None:
            return Resolution("malformed")
        found = None
        for row in _select(conn, "SELECT * FROM pairing_requests ORDER BY id"):
            # Every row is compared, in constant time, whether or not one matched already.
            if hmac.compare_digest(code_digest(row["salt"], code), row["code_hash"]):
                found = row
        if found is None:
            return Resolution("wrong")
        request = _request(found)
        if request.status == "expired":
            return Resolution("expired", request)
        if request.status != "pending":
            return Resolution("used", request)
        if approve:
            _settle(conn, request.id, "approved", now)
            grant_in(conn, request.channel, request.sender_id, "person", f"pairing ({actor})")
        else:
            _settle(conn, request.id, "denied", now)
        event = "pairing:approved" if approve else "pairing:denied"
        audit_access(conn, event, request.channel, request.sender_id, f"by {actor}")
        return Resolution("approved" if approve else "denied", request)

    def pairing_untold(self, now: datetime) -> list[PairingRequest]:
        """Approved requests whose person was not told yet, claimed: each is returned once."""
        if not self._query(
            "SELECT 1 FROM pairing_requests WHERE status = 'approved' AND told_at IS NULL LIMIT 1"
        ):
            return []  # the usual case, without a write transaction
        with self._tx() as conn:
            rows = _select(
                conn,
                "SELECT * FROM pairing_requests WHERE status = 'approved' AND told_at IS NULL "
                "ORDER BY id",
            )
            conn.executemany(
                "UPDATE pairing_requests SET told_at = ? WHERE id = ?",
                [(to_db_time(now), row["id"]) for row in rows],
            )
        return [_request(row) for row in rows]
