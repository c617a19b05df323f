"""Messages a replica hands to the replica leading a channel that only the leader can send on
(one WhatsApp session): a queue per channel in the database, taken oldest first.

Durable until sent: the leader takes messages under a lease (`relay_take`) and deletes each
once it went out (`relay_done`). A leader that dies between taking and sending leaves them
taken; when the lease runs out the next leader sends them again (at least once: the message
keeps its stable id, so a receiver can drop a repeat). One that fails MAX_RELAY_ATTEMPTS
times is dropped, logged, instead of blocking the queue."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from datetime import UTC, datetime, timedelta

from omega.memory import wakeups
from omega.memory.db import Database, to_db_time, utc_now
from omega.types import OutgoingMessage

log = logging.getLogger(__name__)

RELAY_LEASE_SECS = 60.0  # how long a taken message is the taker's to send
MAX_RELAY_ATTEMPTS = 5


def encode_message(message: OutgoingMessage) -> str:
    """An outgoing message as JSON text (its photo in base64)."""
    photo = base64.b64encode(message.photo).decode() if message.photo is not None else None
    return json.dumps(
        {
            "channel": message.channel,
            "target": message.target,
            "text": message.text,
            "kind": message.kind,
            "photo": photo,
            "id": message.id,
            "reply_to": message.reply_to,
        }
    )


def decode_message(text: str) -> OutgoingMessage:
    """The message `encode_message` wrote."""
    data = json.loads(text)
    photo = base64.b64decode(data["photo"]) if data["photo"] is not None else None
    return OutgoingMessage(
        data["channel"],
        data["target"],
        data["text"],
        kind=data["kind"],
        photo=photo,
        id=data["id"],
        reply_to=data["reply_to"],
    )


class Relay(Database):
    """The channel_relay queue."""

    def relay_put(self, channel: str, message: OutgoingMessage, origin: str) -> str:
        """Queue `message` for the leader of `channel`; returns the row's id."""
        row_id = uuid.uuid4().hex
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO channel_relay (id, channel, message, origin, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (row_id, channel, encode_message(message), origin, utc_now()),
            )
            self._notify(conn, wakeups.relay_topic(channel))  # the leader sends it at once
        return row_id

    def relay_take(
        self, channel: str, taker: str = "", lease_s: float = RELAY_LEASE_SECS, limit: int = 20
    ) -> list[tuple[str, OutgoingMessage]]:
        """Take up to `limit` queued messages of `channel` for `lease_s` seconds, oldest first:
        those nobody holds, or whose taker's lease ran out (it died before sending). Returns
        (row id, message) pairs; `relay_done` each once sent."""
        now = utc_now()
        until = to_db_time(datetime.now(UTC) + timedelta(seconds=lease_s))
        lock = " FOR UPDATE SKIP LOCKED" if self.dialect == "postgresql" else ""
        sql = (
            "SELECT id, message, attempts FROM channel_relay WHERE channel = ? "
            "AND (taken_until IS NULL OR taken_until <= ?) "
            f"ORDER BY created_at, id LIMIT ?{lock}"
        )
        if not self._query(sql.removesuffix(lock), (channel, now, limit)):
            return []  # nothing waiting: no write transaction (the leader looks often)
        taken: list[tuple[str, OutgoingMessage]] = []
        with self._tx() as conn:
            for row_id, text, attempts in conn.execute(sql, (channel, now, limit)).fetchall():
                if int(attempts) >= MAX_RELAY_ATTEMPTS:
                    log.error("relay %s: a message failed %d times; dropped", channel, attempts)
                    conn.execute("DELETE FROM channel_relay WHERE id = ?", (row_id,))
                    continue
                conn.execute(
                    "UPDATE channel_relay SET taken_by = ?, taken_until = ?, "
                    "attempts = attempts + 1 WHERE id = ?",
                    (taker, until, row_id),
                )
                taken.append((str(row_id), decode_message(text)))
        return taken

    def relay_done(self, row_id: str) -> None:
        """A taken message went out: it leaves the queue."""
        with self._tx() as conn:
            conn.execute("DELETE FROM channel_relay WHERE id = ?", (row_id,))

    def relay_waiting(self, channel: str) -> int:
        """How many messages of `channel` are queued, taken or not (for status)."""
        rows = self._query("SELECT COUNT(*) FROM channel_relay WHERE channel = ?", (channel,))
        return int(rows[0][0]) if rows else 0
