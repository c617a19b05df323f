"""Conversations and their messages (FTS5 recall), summaries and the summarizer's view."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from omega.memory.db import Database, to_db_time, utc_now
from omega.text import scrub
from omega.types import (
    ChatMessage,
    Role,
)


@dataclass(frozen=True)
class RecalledMessage:
    """A past message found by full-text search."""

    conversation_id: str
    role: Role
    content: str
    created_at: str


_FTS_TOKEN = re.compile(r"\w+", re.UNICODE)
# Words too common to say what a message is about (the eight languages Omega greets in).
STOP_WORDS = frozenset(
    "the and for are but not you your with this that what when where which who how about "
    "from have has had was were will would can could should there their them they then than "
    "into just also some any all our out get got like please thanks thank yes okay "
    "que los las del por para con una uno como pero más mas esto esta este eso "
    "não nao uma com por para mais isso esta este "
    "les des une est pas pour avec dans que qui sur vous nous "
    "der die das und ist nicht ich mit für fur ein eine den dem sie wir "
    "che non per una con sono della questo "
    "het een van dat niet met voor zijn ook maar "
    "что это как для все так".split()
)


def fts_terms(text: str, max_terms: int = 8) -> list[str]:
    """The words of `text` worth searching for: no stop words, none shorter than 3 letters."""
    terms: list[str] = []
    for token in _FTS_TOKEN.findall(text.lower()):
        if len(token) >= 3 and token not in STOP_WORDS and token not in terms:
            terms.append(token)
        if len(terms) == max_terms:
            break
    return terms


def fts_query(text: str, max_terms: int = 8, joiner: str = " OR ") -> str:
    """Turn free text into a safe FTS5 OR-query of quoted terms ('' when nothing to search)."""
    return joiner.join(f'"{term}"' for term in fts_terms(text, max_terms))


def _folded_words(text: str) -> set[str]:
    """The words of `text` as the index sees them: lower case, diacritics removed."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return set(_FTS_TOKEN.findall(plain))


MAX_THREAD_KEY = 200  # a longer key (a hostile mail's Message-ID) is stored as its digest
HASHED = "sha256:"  # what starts a stored digest


def thread_key(thread: str) -> str:
    """The key a thread is stored under: itself, or past MAX_THREAD_KEY characters its
    sha256 (an index entry has a size limit on PostgreSQL; the key only has to be equal).
    A key that itself starts like a digest is hashed too, so no literal key aliases the
    digest of another."""
    if len(thread) <= MAX_THREAD_KEY and not thread.startswith(HASHED):
        return thread
    return HASHED + hashlib.sha256(thread.encode("utf-8", "surrogatepass")).hexdigest()


# A conversation's place: (channel, thread key as the message names it). Recall made for a
# group room stays inside it (memory.context): nothing said elsewhere reaches the room.
Within = tuple[str, str]
_WITHIN = " AND {column} IN (SELECT id FROM conversations WHERE channel = ? AND thread = ?)"


def _within(column: str, within: Within | None) -> tuple[str, tuple[str, ...]]:
    """The SQL condition (and its values) keeping `column`, a conversation id, in `within`."""
    if within is None:
        return "", ()
    return _WITHIN.format(column=column), (within[0], thread_key(within[1]))


# Recall ranks the newest matches of one person in code: FTS5's bm25 counts every row holding
# each term across all people on every query (15 ms at 100k messages, growing with the table).
RECALL_CANDIDATES = 50


class Conversations(Database):
    """Conversations, messages and summaries."""

    # `thread` (every lookup below): the channel's key of a thread that is a conversation of
    # its own (a Slack thread, a mail thread); "" for the person's chat itself. `room`: the
    # message was written in a group room; a conversation once a room's stays a room's.

    def _active_conversation(
        self,
        conn: sqlite3.Connection,
        channel: str,
        sender_id: str,
        now: str,
        thread: str,
        room: bool = False,
    ) -> str:
        thread = thread_key(thread)
        row = conn.execute(
            "SELECT id, is_group FROM conversations WHERE channel = ? AND sender_id = ? "
            "AND thread = ? AND status = 'active' ORDER BY last_activity DESC LIMIT 1",
            (channel, sender_id, thread),
        ).fetchone()
        if row:
            if room and not row[1]:
                conn.execute("UPDATE conversations SET is_group = 1 WHERE id = ?", (row[0],))
            return str(row[0])
        conversation_id = uuid.uuid4().hex
        conn.execute(
            "INSERT INTO conversations (id, channel, sender_id, thread, is_group, started_at, "
            "last_activity) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (conversation_id, channel, sender_id, thread, int(room), now, now),
        )
        return conversation_id

    def active_conversation_id(self, channel: str, sender_id: str, thread: str = "") -> str | None:
        """The sender's open conversation on this channel (and thread), if any (never creates
        one)."""
        rows = self._query(
            "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? AND thread = ? "
            "AND status = 'active' ORDER BY last_activity DESC LIMIT 1",
            (channel, sender_id, thread_key(thread)),
        )
        return str(rows[0]["id"]) if rows else None

    def active_conversation(
        self, channel: str, sender_id: str, thread: str = "", room: bool = False
    ) -> str:
        """The sender's open conversation on this channel (and thread), created if there is
        none; `room`: the message was written in a group room (the conversation is a room's)."""
        with self._tx() as conn:
            return self._active_conversation(conn, channel, sender_id, utc_now(), thread, room)

    def store_exchange(
        self,
        channel: str,
        sender_id: str,
        user_text: str,
        reply_text: str,
        thread: str = "",
        room: bool = False,
    ) -> str:
        """Save a user message and Omega's reply in one transaction; return the conversation
        (a room's when `room`). Lone surrogates (a model's JSON can carry them) are replaced."""
        user_text, reply_text = scrub(user_text), scrub(reply_text)
        now = utc_now()
        with self._tx() as conn:
            conversation_id = self._active_conversation(conn, channel, sender_id, now, thread, room)
            conn.executemany(
                "INSERT INTO messages (conversation_id, channel, sender_id, role, content, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (conversation_id, channel, sender_id, "user", user_text, now),
                    (conversation_id, channel, sender_id, "assistant", reply_text, now),
                ],
            )
            conn.execute(
                "UPDATE conversations SET last_activity = ? WHERE id = ?", (now, conversation_id)
            )
        return conversation_id

    def recent_messages(
        self, channel: str, sender_id: str, limit: int, thread: str = ""
    ) -> list[ChatMessage]:
        """The last `limit` messages of the sender's active conversation (in `thread`), oldest
        first."""
        if limit <= 0:
            return []
        rows = self._query(
            "SELECT m.role, m.content FROM messages m JOIN conversations c "
            "ON c.id = m.conversation_id WHERE c.channel = ? AND c.sender_id = ? "
            "AND c.thread = ? AND c.status = 'active' ORDER BY m.id DESC LIMIT ?",
            (channel, sender_id, thread_key(thread), limit),
        )
        return [ChatMessage(role=row["role"], content=row["content"]) for row in reversed(rows)]

    def search_messages(
        self,
        sender_id: str,
        text: str,
        limit: int = 5,
        exclude_conversation: str = "",
        within: Within | None = None,
    ) -> list[RecalledMessage]:
        """Past messages of this sender related to `text` (FTS5, best matches first); with
        `within`, only those of the conversations of that (channel, thread)."""
        terms = fts_terms(text)
        if not terms or limit <= 0:
            return []
        found = (
            self._search_postgresql(sender_id, terms, exclude_conversation, within)
            if self.dialect == "postgresql"
            else self._search_fts5(sender_id, terms, exclude_conversation, within)
        )
        wanted = set(terms)

        def score(row: sqlite3.Row) -> tuple[int, int]:
            return len(wanted & _folded_words(str(row["content"]))), int(row["id"])

        best = sorted(found.values(), key=score, reverse=True)[:limit]
        return [
            RecalledMessage(row["conversation_id"], row["role"], row["content"], row["created_at"])
            for row in best
        ]

    def _search_fts5(
        self, sender_id: str, terms: list[str], exclude_conversation: str, within: Within | None
    ) -> dict[int, sqlite3.Row]:
        # Narrow to this sender inside the index, so matching never scans other people's words.
        # A NUL would end the FTS5 string early ("unterminated string"): it separates tokens.
        sender_phrase = '"' + sender_id.replace('"', '""').replace("\0", " ") + '"'
        # The newest messages holding every term, then the newest holding any: ranked by how
        # many of the terms each holds, newer first among equals.
        found: dict[int, sqlite3.Row] = {}
        inside, place = _within("m.conversation_id", within)
        for joiner in (" AND ", " OR ") if len(terms) > 1 else (" OR ",):
            query = joiner.join(f'"{term}"' for term in terms)
            for row in self._query(
                "SELECT m.id, m.conversation_id, m.role, m.content, m.created_at "
                "FROM messages_fts f JOIN messages m ON m.id = f.rowid "
                "WHERE messages_fts MATCH ? AND m.sender_id = ? AND m.conversation_id != ?"
                f"{inside} ORDER BY f.rowid DESC LIMIT ?",
                (
                    f"sender_id : {sender_phrase} AND ({query})",
                    sender_id,
                    exclude_conversation,
                    *place,
                    RECALL_CANDIDATES,
                ),
            ):
                found.setdefault(int(row["id"]), row)
        return found

    def _search_postgresql(
        self, sender_id: str, terms: list[str], exclude_conversation: str, within: Within | None
    ) -> dict[int, sqlite3.Row]:
        # The same candidates as FTS5's: the newest messages holding every term, then the
        # newest holding any, matched on the folded `search` column (migration 001).
        folded = [" ".join(sorted(_folded_words(term))) or term for term in terms]
        found: dict[int, sqlite3.Row] = {}
        inside, place = _within("conversation_id", within)
        for joiner in (" & ", " | ") if len(terms) > 1 else (" | ",):
            query = joiner.join("'" + term.replace("'", "''") + "'" for term in folded)
            for row in self._query(
                "SELECT id, conversation_id, role, content, created_at FROM messages "
                f"WHERE sender_id = ? AND conversation_id != ?{inside} "
                "AND search @@ to_tsquery('simple', ?) ORDER BY id DESC LIMIT ?",
                (sender_id, exclude_conversation, *place, query, RECALL_CANDIDATES),
            ):
                found.setdefault(int(row["id"]), row)
        return found

    def idle_conversations(self, idle_minutes: float) -> list[tuple[str, str, str]]:
        """Active conversations with no activity for `idle_minutes`: (id, channel, sender)."""
        cutoff = to_db_time(datetime.now(UTC) - timedelta(minutes=idle_minutes))
        rows = self._query(
            "SELECT id, channel, sender_id FROM conversations "
            "WHERE status = 'active' AND last_activity < ?",
            (cutoff,),
        )
        return [(row["id"], row["channel"], row["sender_id"]) for row in rows]

    def close_conversation(self, conversation_id: str, summary: str) -> None:
        """Close a conversation and keep its summary."""
        now = utc_now()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT sender_id FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row is None:
                return
            conn.execute(
                "UPDATE conversations SET status = 'closed', closed_at = ? WHERE id = ?",
                (now, conversation_id),
            )
            if summary:
                conn.execute(
                    "INSERT INTO summaries (conversation_id, sender_id, summary, created_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET "
                    "sender_id = excluded.sender_id, summary = excluded.summary, "
                    "created_at = excluded.created_at",
                    (conversation_id, row[0], summary, now),
                )

    def recent_summaries(
        self, sender_id: str, limit: int = 3, within: Within | None = None
    ) -> list[str]:
        """The sender's latest conversation summaries, newest first; with `within`, only
        those of the conversations of that (channel, thread)."""
        return [summary for _, summary in self.recent_summaries_of(sender_id, limit, within)]

    def recent_summaries_of(
        self, sender_id: str, limit: int = 3, within: Within | None = None
    ) -> list[tuple[str, str]]:
        """`recent_summaries` as (conversation id, summary): whose reads a prompt carrying
        them carries too."""
        inside, place = _within("conversation_id", within)
        rows = self._query(
            f"SELECT conversation_id, summary FROM summaries WHERE sender_id = ?{inside} "
            "ORDER BY created_at DESC LIMIT ?",
            (sender_id, *place, limit),
        )
        return [(str(row["conversation_id"]), str(row["summary"])) for row in rows]

    def close_active_conversation(
        self, channel: str, sender_id: str, thread: str = ""
    ) -> str | None:
        """Close the sender's open conversation (in `thread`; summary comes later); return its
        id."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? "
                "AND thread = ? AND status = 'active'",
                (channel, sender_id, thread_key(thread)),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE conversations SET status = 'closed', closed_at = ? WHERE id = ?",
                (utc_now(), row[0]),
            )
            return str(row[0])

    def sender_counts(self, sender_id: str) -> dict[str, int]:
        """How much is remembered about one sender."""
        with self._lock:
            one = self._conn.execute
            return {
                "conversations": int(
                    one(
                        "SELECT COUNT(*) FROM conversations WHERE sender_id = ?", (sender_id,)
                    ).fetchone()[0]
                ),
                "messages": int(
                    one(
                        "SELECT COUNT(*) FROM messages WHERE sender_id = ?", (sender_id,)
                    ).fetchone()[0]
                ),
                "facts": int(
                    one("SELECT COUNT(*) FROM facts WHERE sender_id = ?", (sender_id,)).fetchone()[
                        0
                    ]
                ),
                "summaries": int(
                    one(
                        "SELECT COUNT(*) FROM summaries WHERE sender_id = ?", (sender_id,)
                    ).fetchone()[0]
                ),
            }

    def all_recent_summaries(self, limit: int = 3) -> list[tuple[str, str]]:
        """The latest summaries across everyone: (created_at, summary), newest first."""
        rows = self._query(
            "SELECT created_at, summary FROM summaries ORDER BY created_at DESC LIMIT ?", (limit,)
        )
        return [(row["created_at"], row["summary"]) for row in rows]

    def conversation_messages(self, conversation_id: str) -> list[ChatMessage]:
        """Every message of one conversation, in order."""
        rows = self._query(
            "SELECT role, content FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
        return [ChatMessage(role=row["role"], content=row["content"]) for row in rows]

    def conversation_sender(self, conversation_id: str) -> tuple[str, str] | None:
        """(channel, sender_id) of a conversation."""
        rows = self._query(
            "SELECT channel, sender_id FROM conversations WHERE id = ?", (conversation_id,)
        )
        return (rows[0]["channel"], rows[0]["sender_id"]) if rows else None

    def active_conversations(self) -> list[tuple[str, str, str]]:
        """Every open conversation: (id, channel, sender_id)."""
        rows = self._query(
            "SELECT id, channel, sender_id FROM conversations WHERE status = 'active'"
        )
        return [(row["id"], row["channel"], row["sender_id"]) for row in rows]
