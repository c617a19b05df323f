"""Small durable state in the store, by scope and key, as JSON: a channel's cursor and sync
token (`channel_scope(name)`), run-time settings such as the heartbeat interval
(`SETTINGS`). In the store rather than in files of one host, so a replica on another machine
resumes exactly where another stopped; a change of settings wakes every replica (wake-ups)."""

from __future__ import annotations

import json
from typing import Any

from omega.memory import wakeups
from omega.memory.db import Database, utc_now

SETTINGS = "settings"
HEARTBEAT_INTERVAL = "heartbeat_interval"  # minutes, set by HEARTBEAT_INTERVAL
MAX_VALUE_CHARS = 1_000_000  # a cursor or token, not a document


def channel_scope(channel: str) -> str:
    """The scope of one channel's state."""
    return f"channel:{channel}"


class State(Database):
    """The `state` table."""

    def state_get(self, scope: str, key: str) -> Any:
        """The value kept under (scope, key); None when there is none (or it is unreadable)."""
        rows = self._query("SELECT value FROM state WHERE scope = ? AND key = ?", (scope, key))
        if not rows:
            return None
        try:
            return json.loads(rows[0]["value"])
        except ValueError:
            return None

    def state_put(self, scope: str, key: str, value: Any) -> None:
        """Keep `value` (anything JSON can hold) under (scope, key), replacing what was there;
        a change of settings wakes every replica."""
        text = json.dumps(value)
        if len(text) > MAX_VALUE_CHARS:
            raise ValueError(f"state {scope}/{key}: {len(text)} characters is too much to keep")
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO state (scope, key, value, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
                "updated_at = excluded.updated_at",
                (scope, key, text, utc_now()),
            )
            if scope == SETTINGS:
                self._notify(conn, wakeups.CONFIG)

    def state_delete(self, scope: str, key: str) -> None:
        """Forget (scope, key)."""
        with self._tx() as conn:
            conn.execute("DELETE FROM state WHERE scope = ? AND key = ?", (scope, key))

    def state_take(self, scope: str, key: str) -> Any:
        """The value kept under (scope, key), forgotten in the same transaction: of two replicas
        taking it at once only one gets it (a one-time code is used once). None when there is
        none, or another took it first."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT value FROM state WHERE scope = ? AND key = ?", (scope, key)
            ).fetchall()
            if not rows:
                return None
            gone = conn.execute("DELETE FROM state WHERE scope = ? AND key = ?", (scope, key))
            if gone.rowcount != 1:  # taken by a transaction that committed after our read
                return None
        try:
            return json.loads(rows[0][0])
        except ValueError:
            return None

    def state_keys(self, scope: str) -> list[str]:
        """The keys kept in `scope`."""
        rows = self._query("SELECT key FROM state WHERE scope = ? ORDER BY key", (scope,))
        return [str(row["key"]) for row in rows]
