"""People: who a channel id is (identities) and what is known about them (facts)."""

from __future__ import annotations

import sqlite3

from omega.hours import QUIET_FACT
from omega.memory.db import Database, utc_now

# Facts that are Omega's own state about a person, written only by Omega's code (commands,
# markers, the welcome), never by a model extracting facts from a conversation.
SYSTEM_FACT_KEYS = frozenset(
    {"welcomed", "active_project", "personality", "preferred_language", QUIET_FACT}
)


PREFIX = ":"  # between a channel and its id in a person key


def _taken(conn: sqlite3.Connection, person: str) -> bool:
    """Whether some identity already has `person` as its key."""
    found = conn.execute("SELECT 1 FROM identities WHERE person = ? LIMIT 1", (person,))
    return found.fetchone() is not None


def _first_keys(channel: str, sender_id: str) -> tuple[str, ...]:
    """The keys a channel id seen for the first time may get, in order: its raw id (never one
    with a ':'), then "channel:id"; when both are taken it is numbered (person_of)."""
    scoped = f"{channel}{PREFIX}{sender_id}"
    return (scoped,) if PREFIX in sender_id else (sender_id, scoped)


class People(Database):
    """Identities and facts."""

    def person_of(self, channel: str, sender_id: str) -> str:
        """The person key of a channel id, recorded on first sight: the raw id when no other
        channel holds it, else "channel:id" (ids of two channels never share memory unless
        the owner links them). An id with a ':' is always "channel:id": raw keys never hold
        one, so no channel's raw id can take the key another channel's id would get
        ("discord:222" sent as an id on a plug-in is not Discord's user 222)."""
        known = self._query(  # the usual case, without a write transaction
            "SELECT person FROM identities WHERE channel = ? AND sender_id = ?",
            (channel, sender_id),
        )
        if known:
            return str(known[0]["person"])
        with self._tx() as conn:
            row = conn.execute(
                "SELECT person FROM identities WHERE channel = ? AND sender_id = ?",
                (channel, sender_id),
            ).fetchone()
            if row is not None:
                return str(row[0])
            firsts = _first_keys(channel, sender_id)
            person = next((key for key in firsts if not _taken(conn, key)), firsts[-1])
            # Taken only by a key recorded before raw ids with ':' were prefixed: one more
            # suffix, never someone else's memory.
            number = 1
            while _taken(conn, person):
                number += 1
                person = f"{channel}{PREFIX}{sender_id}{PREFIX}{number}"
            conn.execute(
                "INSERT INTO identities (channel, sender_id, person, created_at) "
                "VALUES (?, ?, ?, ?)",
                (channel, sender_id, person, utc_now()),
            )
            return person

    def unrecorded_person(self, channel: str, sender_id: str) -> str | None:
        """The key `person_of` would give a channel id not recorded yet, recording nothing;
        None when it would be numbered (a person of its own, with nothing of theirs yet)."""
        for key in _first_keys(channel, sender_id):
            if not self._query("SELECT 1 FROM identities WHERE person = ? LIMIT 1", (key,)):
                return key
        return None

    def known_person(self, channel: str, sender_id: str) -> str | None:
        """The person key of a channel id Omega has seen, None otherwise (nothing recorded)."""
        rows = self._query(
            "SELECT person FROM identities WHERE channel = ? AND sender_id = ?",
            (channel, sender_id),
        )
        return str(rows[0]["person"]) if rows else None

    def link_identity(self, channel: str, sender_id: str, to_channel: str, to_id: str) -> str:
        """Make `channel:sender_id` the same person as `to_channel:to_id` from now on; return
        that person. What the linked id said before stays under its old key."""
        person = self.person_of(to_channel, to_id)
        self.person_of(channel, sender_id)
        with self._tx() as conn:
            conn.execute(
                "UPDATE identities SET person = ? WHERE channel = ? AND sender_id = ?",
                (person, channel, sender_id),
            )
        return person

    def identities(self) -> list[tuple[str, str, str]]:
        """Every known (channel, id, person), by person."""
        rows = self._query(
            "SELECT channel, sender_id, person FROM identities ORDER BY person, channel"
        )
        return [(row["channel"], row["sender_id"], row["person"]) for row in rows]

    def set_fact(self, sender_id: str, key: str, value: str) -> None:
        """Remember (or update) one fact about a sender."""
        now = utc_now()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO facts (sender_id, key, value, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (sender_id, key) "
                "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (sender_id, key, value, now, now),
            )

    def set_learned_fact(self, sender_id: str, key: str, value: str) -> bool:
        """Remember a fact a model extracted; Omega's own state (SYSTEM_FACT_KEYS) is refused."""
        if key in SYSTEM_FACT_KEYS:
            return False
        self.set_fact(sender_id, key, value)
        return True

    def facts(self, sender_id: str) -> dict[str, str]:
        """Every fact known about a sender, in the order they were learned."""
        rows = self._query(
            "SELECT key, value FROM facts WHERE sender_id = ? ORDER BY id", (sender_id,)
        )
        return {row["key"]: row["value"] for row in rows}

    def get_fact(self, sender_id: str, key: str) -> str | None:
        """One fact about a sender, or None."""
        rows = self._query(
            "SELECT value FROM facts WHERE sender_id = ? AND key = ?", (sender_id, key)
        )
        return str(rows[0]["value"]) if rows else None

    def delete_fact(self, sender_id: str, key: str) -> bool:
        """Forget one fact; True when it existed."""
        with self._tx() as conn:
            cursor = conn.execute(
                "DELETE FROM facts WHERE sender_id = ? AND key = ?", (sender_id, key)
            )
            return cursor.rowcount > 0

    def delete_facts(self, sender_id: str, keep: tuple[str, ...] = ()) -> int:
        """Forget every fact about a sender except the `keep` keys; return how many went."""
        marks = ",".join("?" * len(keep))
        sql = "DELETE FROM facts WHERE sender_id = ?" + (
            f" AND key NOT IN ({marks})" if keep else ""
        )
        with self._tx() as conn:
            return conn.execute(sql, (sender_id, *keep)).rowcount
