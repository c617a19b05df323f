"""Messages a replica hands to the replica leading a channel that only the leader can send on
(one WhatsApp session): a queue per channel in the database, taken oldest first."""

from __future__ import annotations

import base64
import json
import uuid

from omega.memory.db import Database, utc_now
from omega.types import OutgoingMessage


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
        return row_id

    def relay_take(self, channel: str, limit: int = 20) -> list[OutgoingMessage]:
        """Take (remove) up to `limit` queued messages of `channel`, oldest first."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT id, message FROM channel_relay WHERE channel = ? "
                "ORDER BY created_at, id LIMIT ?",
                (channel, limit),
            ).fetchall()
            for row_id, _ in rows:
                conn.execute("DELETE FROM channel_relay WHERE id = ?", (row_id,))
        return [decode_message(text) for _, text in rows]
