"""The durable inbox (exactly-once handling and delivery), denial throttling and the alerts
kept for the owner."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast, get_args

from omega.logs import redact
from omega.memory import wakeups
from omega.memory.db import Database, from_db_time, to_db_time, utc_now
from omega.text import scrub
from omega.types import (
    Assurance,
    Attachment,
    IncomingMessage,
    OutgoingKind,
    OutgoingMessage,
)


@dataclass(frozen=True)
class OwnerAlert:
    """A message for the owner kept until a channel where the owner is known is running."""

    id: int
    created_at: str
    kind: str
    text: str


def inbox_message(message_id: str, payload: str) -> IncomingMessage:
    """The incoming message kept in an inbox row's payload."""
    data = json.loads(payload)
    attachments = [
        Attachment(
            kind=a["kind"],
            data=base64.b64decode(a["data"]),
            name=a.get("name", ""),
            mime_type=a.get("mime_type", ""),
        )
        for a in data.pop("attachments", [])
    ]
    # A row kept by an Omega before senders carried an assurance (or an unknown value) is
    # unverified: fail closed.
    if data.get("assurance") not in get_args(Assurance):
        data["assurance"] = "unverified"
    return IncomingMessage(id=message_id, attachments=attachments, **data)


_OUTGOING_KINDS: frozenset[str] = frozenset(get_args(OutgoingKind))
# How many handled message ids the inbox remembers (to answer a re-delivered message once).
INBOX_DONE_KEPT = 10_000


def _outgoing_kind(value: str) -> OutgoingKind:
    return cast(OutgoingKind, value) if value in _OUTGOING_KINDS else "reply"


class Inbox(Database):
    """The durable inbox, denials and owner alerts."""

    #
    # A row is 'pending' from arrival until its answer went out, then 'done' with its payload
    # emptied (only the id is kept, a bounded record, so a channel that delivers the same id
    # twice is answered once), or 'failed'. The answer is stored with the row before it is
    # sent (`inbox_store_reply`): a restart re-sends it instead of asking the provider again.

    def inbox_put(self, message: IncomingMessage, received_by: str = "") -> bool:
        """Persist an incoming message before it is processed (`received_by`: the replica that
        accepted it); False when its id is already known (pending, done or failed): a
        duplicate that must not be handled again."""
        payload = json.dumps(
            {
                "channel": message.channel,
                "sender_id": message.sender_id,
                "sender_name": message.sender_name,
                "text": message.text,
                "is_group": message.is_group,
                "reply_target": message.reply_target,
                "thread": message.thread,
                # How the channel knew the sender travels with the message: a replay (on this
                # replica or another) decides its rights exactly as the first attempt did.
                "assurance": message.assurance,
                "assurance_detail": message.assurance_detail,
                "received_at": message.received_at,
                "attachments": [
                    {
                        "kind": a.kind,
                        "name": a.name,
                        "mime_type": a.mime_type,
                        "data": base64.b64encode(a.data).decode("ascii"),
                    }
                    for a in message.attachments
                ],
            }
        )
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT INTO inbox (id, channel, sender_id, payload, received_at, received_by) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (message.id, message.channel, message.sender_id, payload, utc_now(), received_by),
            )
            if cursor.rowcount == 1:
                self._notify(conn, wakeups.INBOX)  # another replica may take it at once
            return cursor.rowcount == 1

    def inbox_has(self, message_id: str) -> bool:
        """Whether the inbox holds the message (pending, done or failed): it was admitted.
        (A refused sender's message is never put in it.)"""
        return bool(self._query("SELECT 1 FROM inbox WHERE id = ?", (message_id,)))

    def inbox_begin(self, message_id: str) -> int:
        """Count one more attempt at handling a message (before it starts); return the count."""
        with self._tx() as conn:
            conn.execute("UPDATE inbox SET attempts = attempts + 1 WHERE id = ?", (message_id,))
            row = conn.execute("SELECT attempts FROM inbox WHERE id = ?", (message_id,)).fetchone()
        return int(row[0]) if row else 0

    def inbox_release(self, message_id: str) -> None:
        """Take back an attempt that was stopped by a shutdown, not by a crash, and its claim
        (another replica, or the next start, takes the message up)."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE inbox SET attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, "
                "claimed_by = NULL, lease_until = NULL WHERE id = ? AND status = 'pending'",
                (message_id,),
            )

    def inbox_store_reply(
        self, message_id: str, messages: Sequence[OutgoingMessage], cleanup: Sequence[str] = ()
    ) -> bool:
        """Keep the answer to a pending message (and files to remove once it is sent) before
        it is sent; False when there is no such pending row (a scheduled task, say)."""
        reply = json.dumps(
            {
                "messages": [
                    {
                        "channel": m.channel,
                        "target": m.target,
                        "text": scrub(m.text),
                        "kind": m.kind,
                        "photo": base64.b64encode(m.photo).decode("ascii")
                        if m.photo is not None
                        else None,
                    }
                    for m in messages
                ],
                "cleanup": list(cleanup),
            }
        )
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE inbox SET reply = ?, replied_at = ? WHERE id = ? AND status = 'pending'",
                (reply, utc_now(), message_id),
            )
            return cursor.rowcount == 1

    def inbox_stored_reply(self, message_id: str) -> tuple[list[OutgoingMessage], list[str]] | None:
        """The answer kept for a pending message and the files to remove after sending it;
        None when none was kept (the message has not been answered yet)."""
        rows = self._query(
            "SELECT reply FROM inbox WHERE id = ? AND status = 'pending' AND reply IS NOT NULL",
            (message_id,),
        )
        if not rows:
            return None
        data = json.loads(rows[0]["reply"])
        messages = [
            OutgoingMessage(
                channel=m["channel"],
                target=m["target"],
                text=m["text"],
                kind=_outgoing_kind(m["kind"]),
                photo=base64.b64decode(m["photo"]) if m.get("photo") is not None else None,
            )
            for m in data.get("messages", [])
        ]
        return messages, [str(p) for p in data.get("cleanup", [])]

    def inbox_finish(self, message_id: str, error: str = "") -> None:
        """A handled message is done (only its id is kept, see `inbox_prune`); one that failed
        stays, marked with its (redacted) error. A row already settled is left as it is."""
        with self._tx() as conn:
            if error:
                conn.execute(
                    "UPDATE inbox SET status = 'failed', finished_at = ?, last_error = ?, "
                    "reply = NULL, claimed_by = NULL, lease_until = NULL "
                    "WHERE id = ? AND status = 'pending'",
                    (utc_now(), redact(scrub(error)), message_id),
                )
            else:
                conn.execute(
                    "UPDATE inbox SET status = 'done', finished_at = ?, payload = '{}', "
                    "reply = NULL, claimed_by = NULL, lease_until = NULL "
                    "WHERE id = ? AND status = 'pending'",
                    (utc_now(), message_id),
                )
                self._prune_done(conn)

    def _prune_done(self, conn: sqlite3.Connection) -> None:
        """Keep the ids of at most INBOX_DONE_KEPT handled messages (the newest)."""
        conn.execute(
            "DELETE FROM inbox WHERE status = 'done' AND seq <= ("
            " SELECT seq FROM inbox WHERE status = 'done' ORDER BY seq DESC LIMIT 1 OFFSET ?)",
            (INBOX_DONE_KEPT,),
        )

    def inbox_prune(self, older_than_days: float = 30) -> int:
        """Delete failed and handled rows older than this (and handled ones past the newest
        INBOX_DONE_KEPT); return how many went."""
        cutoff = to_db_time(datetime.now(UTC) - timedelta(days=older_than_days))
        with self._tx() as conn:
            count = conn.execute(
                "DELETE FROM inbox WHERE status != 'pending' AND finished_at < ?", (cutoff,)
            ).rowcount
            self._prune_done(conn)
            return count

    def last_heard(self, routes: Sequence[tuple[str, str]]) -> datetime | None:
        """When the latest message the inbox still holds from any of these (channel, sender id)
        came in; None when it holds none."""
        latest: datetime | None = None
        for channel, sender_id in routes:
            rows = self._query(
                "SELECT MAX(received_at) AS heard FROM inbox WHERE channel = ? AND sender_id = ?",
                (channel, sender_id),
            )
            if rows and rows[0]["heard"]:
                heard = from_db_time(str(rows[0]["heard"]))
                latest = heard if latest is None else max(latest, heard)
        return latest

    def inbox_pending(self) -> list[IncomingMessage]:
        """Messages received but never finished, in arrival order."""
        rows = self._query("SELECT id, payload FROM inbox WHERE status = 'pending' ORDER BY seq")
        return [inbox_message(row["id"], row["payload"]) for row in rows]

    def denial_due(self, channel: str, sender_id: str, every_secs: float) -> tuple[bool, int]:
        """Whether a sender who is not allowed should be answered (and audited) now: True at
        most once per `every_secs` per sender. Returns (due, messages dropped silently since
        the last answered denial). Records of senders quiet that long are forgotten."""
        now = datetime.now(UTC)
        cutoff = to_db_time(now - timedelta(seconds=every_secs))
        with self._tx() as conn:
            row = conn.execute(
                "SELECT last_at, dropped FROM denials WHERE channel = ? AND sender_id = ?",
                (channel, sender_id),
            ).fetchone()
            if row is not None and row[0] >= cutoff:
                conn.execute(
                    "UPDATE denials SET dropped = dropped + 1 WHERE channel = ? AND sender_id = ?",
                    (channel, sender_id),
                )
                return False, int(row[1]) + 1
            conn.execute("DELETE FROM denials WHERE last_at < ?", (cutoff,))
            conn.execute(
                "INSERT INTO denials (channel, sender_id, last_at, dropped) VALUES (?, ?, ?, 0) "
                "ON CONFLICT (channel, sender_id) DO UPDATE SET last_at = excluded.last_at, "
                "dropped = 0",
                (channel, sender_id, to_db_time(now)),
            )
            return True, int(row[1]) if row is not None else 0

    def keep_owner_alert(self, text: str, kind: str = "alert") -> int:
        """Keep a message for the owner until a channel can take it; return its id."""
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT INTO owner_alerts (created_at, kind, text) VALUES (?, ?, ?)",
                (utc_now(), kind, redact(scrub(text))),
            )
            return int(cursor.lastrowid or 0)

    def pending_owner_alerts(self, limit: int = 100) -> list[OwnerAlert]:
        """Alerts not yet delivered, oldest first."""
        rows = self._query(
            "SELECT id, created_at, kind, text FROM owner_alerts WHERE status = 'pending' "
            "ORDER BY id LIMIT ?",
            (limit,),
        )
        return [OwnerAlert(row["id"], row["created_at"], row["kind"], row["text"]) for row in rows]

    def owner_alert_delivered(self, alert_id: int, channel: str, target: str) -> None:
        """Record where a kept alert finally went."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE owner_alerts SET status = 'delivered', delivered_at = ?, channel = ?, "
                "target = ? WHERE id = ?",
                (utc_now(), channel, target, alert_id),
            )
