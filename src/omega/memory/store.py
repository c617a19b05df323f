"""The SQLite store: conversations, messages (FTS5), facts, summaries, audit and the inbox.

Methods are synchronous and thread-safe; async code calls them through `Store.call`, which
runs them on the store's single database thread so the event loop never blocks on SQLite.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Literal, ParamSpec, TypeVar, cast, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from omega.logs import redact
from omega.memory.migrations import migrate
from omega.paths import PRIVATE_FILE_MODE, touch_private
from omega.text import scrub
from omega.types import (
    Attachment,
    ChatMessage,
    IncomingMessage,
    OutgoingKind,
    OutgoingMessage,
    Role,
    ToolCall,
)

P = ParamSpec("P")
T = TypeVar("T")

AuditStatus = Literal["ok", "denied", "error"]


def utc_now() -> str:
    """Current UTC time in the one sortable text format the database uses."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def to_db_time(moment: datetime) -> str:
    """Format an aware datetime in the database's UTC text format."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


MAX_ARGUMENTS = 4000
MAX_PREVIEW = 500


def _capped_json(arguments: dict[str, object]) -> str:
    """Tool arguments as JSON with secrets redacted, cut to a sane size."""
    text = redact(json.dumps(arguments, ensure_ascii=False, default=str))
    return text if len(text) <= MAX_ARGUMENTS else text[: MAX_ARGUMENTS - 15] + "...(truncated)"


def from_db_time(text: str) -> datetime:
    """Parse the database's UTC text format back into an aware datetime."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


@dataclass(frozen=True)
class AuditEntry:
    """One audited exchange (or denial, or error)."""

    channel: str
    sender_id: str
    status: AuditStatus
    sender_name: str = ""
    input_text: str = ""
    output_text: str = ""
    provider: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    processing_ms: int = 0
    detail: str = ""
    event: str = "exchange"


@dataclass(frozen=True)
class Task:
    """A scheduled reminder or action."""

    id: str
    channel: str
    sender_id: str
    reply_target: str
    description: str
    task_type: Literal["reminder", "action"]
    due_at: datetime
    repeat: str
    timezone: str
    status: str
    retry_count: int = 0
    anchor_local: datetime | None = None  # first occurrence, naive wall-clock in `timezone`
    origin_id: str = ""  # the creator's channel id when `sender_id` is their person key


def _anchor(due_at: datetime, timezone: str) -> str:
    """The wall-clock time of an occurrence in the task's zone (what repeats keep)."""
    try:
        zone: tzinfo = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        zone = UTC
    return due_at.astimezone(zone).replace(tzinfo=None).isoformat(timespec="seconds")


def _task(row: sqlite3.Row) -> Task:
    anchor = row["anchor_local"]
    return Task(
        anchor_local=datetime.fromisoformat(anchor) if anchor else None,
        id=row["id"],
        channel=row["channel"],
        sender_id=row["sender_id"],
        reply_target=row["reply_target"],
        description=row["description"],
        task_type=row["task_type"],
        due_at=from_db_time(row["due_at"]),
        repeat=row["repeat"],
        timezone=row["timezone"],
        status=row["status"],
        retry_count=row["retry_count"],
        origin_id=row["origin_id"],
    )


# Facts that are Omega's own state about a person, written only by Omega's code (commands,
# markers, the welcome), never by a model extracting facts from a conversation.
SYSTEM_FACT_KEYS = frozenset({"welcomed", "active_project", "personality", "preferred_language"})


@dataclass(frozen=True)
class OwnerAlert:
    """A message for the owner kept until a channel where the owner is known is running."""

    id: int
    created_at: str
    kind: str
    text: str


def _inbox_message(message_id: str, payload: str) -> IncomingMessage:
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
    return IncomingMessage(id=message_id, attachments=attachments, **data)


_OUTGOING_KINDS: frozenset[str] = frozenset(get_args(OutgoingKind))
# How many handled message ids the inbox remembers (to answer a re-delivered message once).
INBOX_DONE_KEPT = 10_000


def _outgoing_kind(value: str) -> OutgoingKind:
    return cast(OutgoingKind, value) if value in _OUTGOING_KINDS else "reply"


class TaskLookupError(LookupError):
    """No task, or more than one, matches an id prefix."""


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


def fts_query(text: str, max_terms: int = 8) -> str:
    """Turn free text into a safe FTS5 OR-query of quoted terms ('' when nothing to search)."""
    terms: list[str] = []
    for token in _FTS_TOKEN.findall(text.lower()):
        if len(token) >= 3 and token not in STOP_WORDS and token not in terms:
            terms.append(token)
        if len(terms) == max_terms:
            break
    return " OR ".join(f'"{term}"' for term in terms)


class Store:
    """Omega's memory.db."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        touch_private(path)
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None
        self._conn = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA busy_timeout=10000")
            migrate(self._conn)
        except Exception:
            self._conn.close()
            raise
        self._secure_sidecars()

    def _secure_sidecars(self) -> None:
        for suffix in ("-wal", "-shm"):
            sidecar = self.path.with_name(self.path.name + suffix)
            if sidecar.exists():
                sidecar.chmod(PRIVATE_FILE_MODE)

    def close(self) -> None:
        """Close the connection and the database thread."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        with self._lock:
            self._conn.close()

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a store method on the database thread, keeping the event loop free."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omega-db")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """An immediate write transaction, for repositories of other modules' tables."""
        return self._tx()

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        """Read rows (as sqlite3.Row), for repositories of other modules' tables."""
        return self._query(sql, params)

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._conn.execute(sql, params)
            cursor.row_factory = sqlite3.Row
            return list(cursor.fetchall())

    # ---- conversations and messages -------------------------------------------------------

    def _active_conversation(
        self, conn: sqlite3.Connection, channel: str, sender_id: str, now: str
    ) -> str:
        row = conn.execute(
            "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? "
            "AND status = 'active' ORDER BY last_activity DESC LIMIT 1",
            (channel, sender_id),
        ).fetchone()
        if row:
            return str(row[0])
        conversation_id = uuid.uuid4().hex
        conn.execute(
            "INSERT INTO conversations (id, channel, sender_id, started_at, last_activity) "
            "VALUES (?, ?, ?, ?, ?)",
            (conversation_id, channel, sender_id, now, now),
        )
        return conversation_id

    def active_conversation_id(self, channel: str, sender_id: str) -> str | None:
        """The sender's open conversation on this channel, if any (never creates one)."""
        rows = self._query(
            "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? "
            "AND status = 'active' ORDER BY last_activity DESC LIMIT 1",
            (channel, sender_id),
        )
        return str(rows[0]["id"]) if rows else None

    def active_conversation(self, channel: str, sender_id: str) -> str:
        """The sender's open conversation on this channel, created if there is none."""
        with self._tx() as conn:
            return self._active_conversation(conn, channel, sender_id, utc_now())

    def store_exchange(self, channel: str, sender_id: str, user_text: str, reply_text: str) -> str:
        """Save a user message and Omega's reply in one transaction; return the conversation.

        Lone surrogates (a model's JSON can carry them) are replaced, so the exchange is kept."""
        user_text, reply_text = scrub(user_text), scrub(reply_text)
        now = utc_now()
        with self._tx() as conn:
            conversation_id = self._active_conversation(conn, channel, sender_id, now)
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

    # ---- identities ----------------------------------------------------------------------

    def person_of(self, channel: str, sender_id: str) -> str:
        """The person key of a channel id, recorded on first sight: the raw id when no other
        channel holds it, else "channel:id" (ids of two channels never share memory unless
        the owner links them)."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT person FROM identities WHERE channel = ? AND sender_id = ?",
                (channel, sender_id),
            ).fetchone()
            if row is not None:
                return str(row[0])
            taken = conn.execute(
                "SELECT 1 FROM identities WHERE person = ? LIMIT 1", (sender_id,)
            ).fetchone()
            person = f"{channel}:{sender_id}" if taken else sender_id
            conn.execute(
                "INSERT INTO identities (channel, sender_id, person, created_at) "
                "VALUES (?, ?, ?, ?)",
                (channel, sender_id, person, utc_now()),
            )
            return person

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

    def recent_messages(self, channel: str, sender_id: str, limit: int) -> list[ChatMessage]:
        """The last `limit` messages of the sender's active conversation, oldest first."""
        if limit <= 0:
            return []
        rows = self._query(
            "SELECT m.role, m.content FROM messages m JOIN conversations c "
            "ON c.id = m.conversation_id WHERE c.channel = ? AND c.sender_id = ? "
            "AND c.status = 'active' ORDER BY m.id DESC LIMIT ?",
            (channel, sender_id, limit),
        )
        return [ChatMessage(role=row["role"], content=row["content"]) for row in reversed(rows)]

    def search_messages(
        self, sender_id: str, text: str, limit: int = 5, exclude_conversation: str = ""
    ) -> list[RecalledMessage]:
        """Past messages of this sender related to `text` (FTS5, best matches first)."""
        query = fts_query(text)
        if not query or limit <= 0:
            return []
        # Narrow to this sender inside the index, so ranking never scans other people's words.
        # A NUL would end the FTS5 string early ("unterminated string"): it separates tokens.
        sender_phrase = '"' + sender_id.replace('"', '""').replace("\0", " ") + '"'
        match = f"sender_id : {sender_phrase} AND ({query})"
        rows = self._query(
            "SELECT m.conversation_id, m.role, m.content, m.created_at FROM messages_fts f "
            "JOIN messages m ON m.id = f.rowid WHERE messages_fts MATCH ? AND m.sender_id = ? "
            "AND m.conversation_id != ? ORDER BY f.rank LIMIT ?",
            (match, sender_id, exclude_conversation, limit),
        )
        return [
            RecalledMessage(row["conversation_id"], row["role"], row["content"], row["created_at"])
            for row in rows
        ]

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
                    "INSERT OR REPLACE INTO summaries (conversation_id, sender_id, summary, "
                    "created_at) VALUES (?, ?, ?, ?)",
                    (conversation_id, row[0], summary, now),
                )

    def recent_summaries(self, sender_id: str, limit: int = 3) -> list[str]:
        """The sender's latest conversation summaries, newest first."""
        rows = self._query(
            "SELECT summary FROM summaries WHERE sender_id = ? ORDER BY created_at DESC LIMIT ?",
            (sender_id, limit),
        )
        return [row["summary"] for row in rows]

    def close_active_conversation(self, channel: str, sender_id: str) -> str | None:
        """Close the sender's open conversation (summary comes later); return its id."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? "
                "AND status = 'active'",
                (channel, sender_id),
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

    # ---- facts -----------------------------------------------------------------------------

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

    # ---- scheduled tasks -------------------------------------------------------------------

    def create_task(
        self,
        *,
        channel: str,
        sender_id: str,
        reply_target: str,
        description: str,
        due_at: datetime,
        repeat: str = "once",
        task_type: str = "reminder",
        timezone: str = "UTC",
        anchor_local: datetime | None = None,
        origin_id: str = "",
    ) -> tuple[str, bool]:
        """Schedule a task; return (id, created). An identical pending task is not duplicated.

        `anchor_local` is the wall-clock time repeats keep (naive, in `timezone`); without it,
        the due time read in `timezone` is the anchor."""
        due = to_db_time(due_at)
        anchor = (
            anchor_local.replace(tzinfo=None).isoformat(timespec="seconds")
            if anchor_local is not None
            else _anchor(due_at, timezone)
        )
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id FROM scheduled_tasks WHERE sender_id = ? AND channel = ? AND "
                "description = ? AND due_at = ? AND task_type = ? AND status = 'pending'",
                (sender_id, channel, description, due, task_type),
            ).fetchone()
            if row:
                return str(row[0]), False
            task_id = uuid.uuid4().hex
            conn.execute(
                "INSERT INTO scheduled_tasks (id, channel, sender_id, reply_target, description, "
                "task_type, due_at, anchor_local, repeat, timezone, created_at, origin_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    task_id,
                    channel,
                    sender_id,
                    reply_target,
                    description,
                    task_type,
                    due,
                    anchor,
                    repeat,
                    timezone,
                    utc_now(),
                    origin_id,
                ),
            )
            return task_id, True

    def pending_tasks(self, sender_id: str) -> list[Task]:
        """The sender's pending tasks, soonest first."""
        rows = self._query(
            "SELECT * FROM scheduled_tasks WHERE sender_id = ? AND status = 'pending' "
            "ORDER BY due_at",
            (sender_id,),
        )
        return [_task(row) for row in rows]

    def _task_by_prefix(self, conn: sqlite3.Connection, sender_id: str, prefix: str) -> str:
        # Exact prefix match on the id (no LIKE, so no wildcards), pending tasks of this sender.
        prefix = prefix.strip().lower()
        if not prefix:
            raise TaskLookupError("no task id given")
        rows = conn.execute(
            "SELECT id FROM scheduled_tasks WHERE sender_id = ? AND status = 'pending' "
            "AND substr(id, 1, ?) = ?",
            (sender_id, len(prefix), prefix),
        ).fetchall()
        if not rows:
            raise TaskLookupError(f"no pending task starts with {prefix!r}")
        if len(rows) > 1:
            raise TaskLookupError(f"{len(rows)} tasks start with {prefix!r}; give more of the id")
        return str(rows[0][0])

    def find_pending_task(self, sender_id: str, prefix: str) -> Task:
        """The one pending task of this sender whose id starts with `prefix`."""
        with self._tx() as conn:
            task_id = self._task_by_prefix(conn, sender_id, prefix)
        task = self.task(task_id)
        if task is None:  # cancelled between the two reads
            raise TaskLookupError(f"no pending task starts with {prefix!r}")
        return task

    def cancel_task(self, sender_id: str, prefix: str) -> Task:
        """Cancel the one pending task of this sender whose id starts with `prefix`."""
        with self._tx() as conn:
            task_id = self._task_by_prefix(conn, sender_id, prefix)
            conn.execute("UPDATE scheduled_tasks SET status = 'cancelled' WHERE id = ?", (task_id,))
            conn.row_factory = sqlite3.Row
            try:
                row = conn.execute("SELECT * FROM scheduled_tasks WHERE id = ?", (task_id,))
                return _task(row.fetchone())
            finally:
                conn.row_factory = None

    def update_task(
        self,
        sender_id: str,
        prefix: str,
        *,
        description: str = "",
        due_at: datetime | None = None,
        repeat: str = "",
        anchor_local: datetime | None = None,
        timezone: str = "",
    ) -> Task:
        """Change the given fields of one pending task (matched by exact id prefix)."""
        with self._tx() as conn:
            task_id = self._task_by_prefix(conn, sender_id, prefix)
            if description:
                conn.execute(
                    "UPDATE scheduled_tasks SET description = ? WHERE id = ?",
                    (description, task_id),
                )
            if due_at is not None:
                conn.execute(
                    "UPDATE scheduled_tasks SET due_at = ? WHERE id = ?",
                    (to_db_time(due_at), task_id),
                )
            if repeat:
                conn.execute(
                    "UPDATE scheduled_tasks SET repeat = ? WHERE id = ?", (repeat, task_id)
                )
            if anchor_local is not None:
                conn.execute(
                    "UPDATE scheduled_tasks SET anchor_local = ? WHERE id = ?",
                    (anchor_local.replace(tzinfo=None).isoformat(timespec="seconds"), task_id),
                )
            if timezone:
                conn.execute(
                    "UPDATE scheduled_tasks SET timezone = ? WHERE id = ?", (timezone, task_id)
                )
            conn.row_factory = sqlite3.Row
            try:
                row = conn.execute("SELECT * FROM scheduled_tasks WHERE id = ?", (task_id,))
                return _task(row.fetchone())
            finally:
                conn.row_factory = None

    def due_tasks(self, now: datetime, limit: int = 100) -> list[Task]:
        """Pending tasks due at or before `now`, oldest first."""
        rows = self._query(
            "SELECT * FROM scheduled_tasks WHERE status = 'pending' AND due_at <= ? "
            "ORDER BY due_at LIMIT ?",
            (to_db_time(now), limit),
        )
        return [_task(row) for row in rows]

    def next_due_at(self) -> datetime | None:
        """When the soonest pending task is due (None when nothing is pending)."""
        rows = self._query(
            "SELECT MIN(due_at) AS due FROM scheduled_tasks WHERE status = 'pending'"
        )
        due = rows[0]["due"] if rows else None
        return from_db_time(due) if due else None

    def claim_task(self, task_id: str) -> bool:
        """Mark a pending task as being delivered; False if someone else has it or it changed."""
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE scheduled_tasks SET status = 'delivering' "
                "WHERE id = ? AND status = 'pending'",
                (task_id,),
            )
            return cursor.rowcount == 1

    def finish_task(self, task_id: str, next_due: datetime | None) -> None:
        """After delivery: a one-shot task is done; a repeating one waits for `next_due`."""
        with self._tx() as conn:
            if next_due is None:
                conn.execute(
                    "UPDATE scheduled_tasks SET status = 'delivered', delivered_at = ?, "
                    "last_error = NULL WHERE id = ? AND status = 'delivering'",
                    (utc_now(), task_id),
                )
            else:
                conn.execute(
                    "UPDATE scheduled_tasks SET status = 'pending', due_at = ?, retry_count = 0, "
                    "delivered_at = ?, last_error = NULL WHERE id = ? AND status = 'delivering'",
                    (to_db_time(next_due), utc_now(), task_id),
                )

    def retry_task(self, task_id: str, error: str, retry_at: datetime, give_up: bool) -> None:
        """A failed delivery: back to pending at `retry_at` (never delivered), or failed."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE scheduled_tasks SET status = ?, due_at = ?, retry_count = retry_count + 1, "
                "last_error = ? WHERE id = ? AND status = 'delivering'",
                ("failed" if give_up else "pending", to_db_time(retry_at), error[:1000], task_id),
            )

    def interrupted_tasks(self) -> list[Task]:
        """Tasks claimed by a run that died before its bookkeeping."""
        rows = self._query("SELECT * FROM scheduled_tasks WHERE status = 'delivering'")
        return [_task(row) for row in rows]

    def task(self, task_id: str) -> Task | None:
        """One task by its full id."""
        rows = self._query("SELECT * FROM scheduled_tasks WHERE id = ?", (task_id,))
        return _task(rows[0]) if rows else None

    # ---- audit -----------------------------------------------------------------------------

    def audit(self, entry: AuditEntry) -> None:
        """Append one entry to the audit log.

        Every text field is scrubbed of lone surrogates (so the row is always written) and
        redacted (configured secrets and credential-shaped strings never reach the log)."""

        def clean(text: str) -> str:
            return redact(scrub(text))

        entry = dataclasses.replace(
            entry,
            channel=clean(entry.channel),
            sender_id=clean(entry.sender_id),
            sender_name=clean(entry.sender_name),
            input_text=clean(entry.input_text),
            output_text=clean(entry.output_text),
            provider=clean(entry.provider),
            model=clean(entry.model),
            detail=clean(entry.detail),
            event=clean(entry.event),
        )
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO audit_log (created_at, channel, sender_id, sender_name, input_text, "
                "output_text, provider, model, input_tokens, output_tokens, cost_usd, "
                "processing_ms, status, detail, event) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    utc_now(),
                    entry.channel,
                    entry.sender_id,
                    entry.sender_name,
                    entry.input_text,
                    entry.output_text,
                    entry.provider,
                    entry.model,
                    entry.input_tokens,
                    entry.output_tokens,
                    entry.cost_usd,
                    entry.processing_ms,
                    entry.status,
                    entry.detail,
                    entry.event,
                ),
            )

    def audit_entries(self, limit: int = 50) -> list[dict[str, object]]:
        """The latest audit entries, newest first."""
        rows = self._query("SELECT * FROM audit_log ORDER BY id DESC LIMIT ?", (limit,))
        return [dict(row) for row in rows]

    # ---- tool calls ------------------------------------------------------------------------

    def record_tool_calls(
        self,
        calls: Sequence[ToolCall],
        *,
        agent: str,
        channel: str = "",
        sender_id: str = "",
        conversation_id: str = "",
    ) -> int:
        """Record tool calls (arguments size-capped and redacted); return the newest row id."""
        if not calls:
            return 0
        now = utc_now()
        rows = [
            (
                now,
                agent,
                channel,
                sender_id,
                conversation_id,
                call.name,
                _capped_json(call.arguments),
                int(call.ok),
                redact(call.error)[:MAX_PREVIEW],
                redact(call.result_preview)[:MAX_PREVIEW],
                call.duration_ms,
            )
            for call in calls
        ]
        with self._tx() as conn:
            conn.executemany(
                "INSERT INTO tool_calls (created_at, agent, channel, sender_id, conversation_id, "
                "tool, arguments, ok, error, result_preview, duration_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            return int(conn.execute("SELECT MAX(id) FROM tool_calls").fetchone()[0])

    def tool_calls(self, agent: str | None = None, limit: int = 100) -> list[dict[str, object]]:
        """Recorded tool calls, newest first (optionally of one agent)."""
        if agent is None:
            rows = self._query("SELECT * FROM tool_calls ORDER BY id DESC LIMIT ?", (limit,))
        else:
            rows = self._query(
                "SELECT * FROM tool_calls WHERE agent = ? ORDER BY id DESC LIMIT ?", (agent, limit)
            )
        return [dict(row) for row in rows]

    # ---- durable inbox ---------------------------------------------------------------------
    #
    # A row is 'pending' from arrival until its answer went out, then 'done' with its payload
    # emptied (only the id is kept, a bounded record, so a channel that delivers the same id
    # twice is answered once), or 'failed'. The answer is stored with the row before it is
    # sent (`inbox_store_reply`): a restart re-sends it instead of asking the provider again.

    def inbox_put(self, message: IncomingMessage) -> bool:
        """Persist an incoming message before it is processed; False when its id is already
        known (pending, done or failed): a duplicate that must not be handled again."""
        payload = json.dumps(
            {
                "channel": message.channel,
                "sender_id": message.sender_id,
                "sender_name": message.sender_name,
                "text": message.text,
                "is_group": message.is_group,
                "reply_target": message.reply_target,
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
                "INSERT OR IGNORE INTO inbox (id, channel, sender_id, payload, received_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (message.id, message.channel, message.sender_id, payload, utc_now()),
            )
            return cursor.rowcount == 1

    def inbox_begin(self, message_id: str) -> int:
        """Count one more attempt at handling a message (before it starts); return the count."""
        with self._tx() as conn:
            conn.execute("UPDATE inbox SET attempts = attempts + 1 WHERE id = ?", (message_id,))
            row = conn.execute("SELECT attempts FROM inbox WHERE id = ?", (message_id,)).fetchone()
        return int(row[0]) if row else 0

    def inbox_release(self, message_id: str) -> None:
        """Take back an attempt that was stopped by a shutdown, not by a crash."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE inbox SET attempts = MAX(attempts - 1, 0) "
                "WHERE id = ? AND status = 'pending'",
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
                    "reply = NULL WHERE id = ? AND status = 'pending'",
                    (utc_now(), redact(scrub(error)), message_id),
                )
            else:
                conn.execute(
                    "UPDATE inbox SET status = 'done', finished_at = ?, payload = '{}', "
                    "reply = NULL WHERE id = ? AND status = 'pending'",
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

    def inbox_give_up(self, max_attempts: int, reason: str) -> list[IncomingMessage]:
        """Mark failed the pending messages already tried `max_attempts` times; return them.

        A message whose handling kills the process is otherwise replayed forever."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT id, payload FROM inbox WHERE status = 'pending' AND attempts >= ? "
                "ORDER BY seq",
                (max_attempts,),
            ).fetchall()
            conn.execute(
                "UPDATE inbox SET status = 'failed', finished_at = ?, last_error = ?, "
                "reply = NULL WHERE status = 'pending' AND attempts >= ?",
                (utc_now(), reason, max_attempts),
            )
        return [_inbox_message(row[0], row[1]) for row in rows]

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

    def inbox_pending(self) -> list[IncomingMessage]:
        """Messages received but never finished, in arrival order."""
        rows = self._query("SELECT id, payload FROM inbox WHERE status = 'pending' ORDER BY seq")
        return [_inbox_message(row["id"], row["payload"]) for row in rows]

    # ---- strangers -------------------------------------------------------------------------

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
                "INSERT OR REPLACE INTO denials (channel, sender_id, last_at, dropped) "
                "VALUES (?, ?, ?, 0)",
                (channel, sender_id, to_db_time(now)),
            )
            return True, int(row[1]) if row is not None else 0

    # ---- alerts kept for the owner -----------------------------------------------------------

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

    # ---- statistics ------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables, for status displays."""
        tables = ("conversations", "messages", "facts", "summaries", "scheduled_tasks", "audit_log")
        result = {}
        with self._lock:
            for table in tables:
                result[table] = int(
                    self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                )
            result["inbox_pending"] = int(
                self._conn.execute(
                    "SELECT COUNT(*) FROM inbox WHERE status = 'pending'"
                ).fetchone()[0]
            )
            result["owner_alerts_pending"] = int(
                self._conn.execute(
                    "SELECT COUNT(*) FROM owner_alerts WHERE status = 'pending'"
                ).fetchone()[0]
            )
        return result
