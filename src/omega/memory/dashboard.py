"""What the owner's web dashboard reads from memory.db: every list filtered and paged.

Read-only queries over the Store's public `query` accessor (one place for the dashboard's
SQL, so the Store itself stays small); the only write here is `purge_person`, the owner's
"forget this person", in one transaction. Filters are bound parameters, never SQL text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from omega.memory.audit import CALL_KINDS, FOREGROUND_KINDS, call_kind
from omega.memory.store import Store

PER_PAGE = 25


@dataclass(frozen=True)
class Page:
    """One page of rows and where it sits in the whole list."""

    rows: list[dict[str, Any]]
    total: int
    page: int
    per_page: int = PER_PAGE

    @property
    def pages(self) -> int:
        """How many pages the whole list has (at least one)."""
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def has_prev(self) -> bool:
        """Whether there is a page before this one."""
        return self.page > 1

    @property
    def has_next(self) -> bool:
        """Whether there is a page after this one."""
        return self.page < self.pages


class _Where:
    """A WHERE clause built from optional filters, with its parameters."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.params: list[object] = []

    def add(self, sql: str, *params: object) -> None:
        self.parts.append(sql)
        self.params.extend(params)

    def __str__(self) -> str:
        return (" WHERE " + " AND ".join(self.parts)) if self.parts else ""


def _paged(store: Store, select: str, where: _Where, order: str, page: int) -> Page:
    """Run `select` (a `SELECT ... FROM ...` without WHERE) filtered, counted and paged."""
    page = max(1, page)
    count_sql = f"SELECT COUNT(*) AS n FROM ({select}{where}) AS counted"
    total = int(store.query(count_sql, tuple(where.params))[0]["n"])
    rows = store.query(
        f"{select}{where} ORDER BY {order} LIMIT ? OFFSET ?",
        (*where.params, PER_PAGE, (page - 1) * PER_PAGE),
    )
    return Page([dict(row) for row in rows], total, page)


def _like(text: str) -> str:
    """A LIKE pattern matching `text` literally anywhere (escape char: backslash)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def limitations(store: Store, status: str = "", q: str = "", page: int = 1) -> Page:
    """Limitations, newest first; `status` open/resolved, `q` a text in title or description."""
    where = _Where()
    if status:
        where.add("status = ?", status)
    if q:
        where.add(r"(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')", _like(q), _like(q))
    return _paged(store, "SELECT * FROM limitations", where, "id DESC", page)


def proposals(store: Store, status: str = "", kind: str = "", page: int = 1) -> Page:
    """Proposals, newest first; filtered by status (pending/approved/rejected) and kind."""
    where = _Where()
    if status:
        where.add("status = ?", status)
    if kind:
        where.add("kind = ?", kind)
    return _paged(store, "SELECT * FROM proposals", where, "id DESC", page)


def tasks(store: Store, status: str = "", q: str = "", page: int = 1) -> Page:
    """Scheduled tasks; pending ones by due time, others newest first."""
    where = _Where()
    if status:
        where.add("status = ?", status)
    if q:
        where.add(
            r"(description LIKE ? ESCAPE '\' OR sender_id LIKE ? ESCAPE '\')", _like(q), _like(q)
        )
    order = "due_at ASC" if status == "pending" else "created_at DESC"
    return _paged(store, "SELECT * FROM scheduled_tasks", where, order, page)


def people(store: Store, q: str = "", page: int = 1) -> Page:
    """Every person (identities and anyone facts are kept about), with their channel ids
    and how many facts, conversations and pending tasks Omega keeps about them."""
    select = (
        "SELECT person, "
        "(SELECT group_concat(i.channel || ':' || i.sender_id, ', ') FROM identities i "
        " WHERE i.person = p.person) AS ids, "
        "(SELECT COUNT(*) FROM facts f WHERE f.sender_id = p.person) AS facts, "
        "(SELECT COUNT(*) FROM conversations c WHERE c.sender_id = p.person) AS conversations, "
        "(SELECT COUNT(*) FROM scheduled_tasks t WHERE t.sender_id = p.person "
        " AND t.status = 'pending') AS tasks "
        "FROM (SELECT person FROM identities UNION SELECT sender_id FROM facts "
        "UNION SELECT sender_id FROM conversations) p"
    )
    where = _Where()
    if q:
        where.add(r"(person LIKE ? ESCAPE '\' OR ids LIKE ? ESCAPE '\')", _like(q), _like(q))
    return _paged(store, f"SELECT * FROM ({select}) AS people", where, "person", page)


def facts(store: Store, person: str) -> list[dict[str, Any]]:
    """Every fact kept about one person."""
    rows = store.query(
        "SELECT key, value, updated_at FROM facts WHERE sender_id = ? ORDER BY key", (person,)
    )
    return [dict(row) for row in rows]


def conversations(
    store: Store, channel: str = "", status: str = "", q: str = "", page: int = 1
) -> Page:
    """Conversations, latest activity first, with their message count and summary."""
    select = (
        "SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS messages, "
        "(SELECT s.summary FROM summaries s WHERE s.conversation_id = c.id) AS summary "
        "FROM conversations c"
    )
    where = _Where()
    if channel:
        where.add("c.channel = ?", channel)
    if status:
        where.add("c.status = ?", status)
    if q:
        where.add(r"c.sender_id LIKE ? ESCAPE '\'", _like(q))
    return _paged(store, select, where, "c.last_activity DESC", page)


def conversation(store: Store, conversation_id: str) -> dict[str, Any] | None:
    """One conversation with its messages and summary; None if there is none."""
    rows = store.query("SELECT * FROM conversations WHERE id = ?", (conversation_id,))
    if not rows:
        return None
    found = dict(rows[0])
    found["messages"] = [
        dict(row)
        for row in store.query(
            "SELECT role, content, created_at FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
    ]
    summary = store.query(
        "SELECT summary FROM summaries WHERE conversation_id = ?", (conversation_id,)
    )
    found["summary"] = summary[0]["summary"] if summary else ""
    return found


def audit(
    store: Store, event: str = "", status: str = "", channel: str = "", q: str = "", page: int = 1
) -> Page:
    """The audit log, newest first; `event` matches a prefix (`proposal:` finds them all)."""
    where = _Where()
    if event:
        where.add(r"event LIKE ? ESCAPE '\'", _like(event)[1:])
    if status:
        where.add("status = ?", status)
    if channel:
        where.add("channel = ?", channel)
    if q:
        where.add(
            r"(input_text LIKE ? ESCAPE '\' OR output_text LIKE ? ESCAPE '\' "
            r"OR detail LIKE ? ESCAPE '\')",
            _like(q),
            _like(q),
            _like(q),
        )
    return _paged(store, "SELECT * FROM audit_log", where, "id DESC", page)


def tool_calls(store: Store, tool: str = "", ok: str = "", page: int = 1) -> Page:
    """Recorded tool calls, newest first; `ok` is "1" (succeeded) or "0" (failed)."""
    where = _Where()
    if tool:
        where.add("tool = ?", tool)
    if ok in ("0", "1"):
        where.add("ok = ?", int(ok))
    return _paged(store, "SELECT * FROM tool_calls", where, "id DESC", page)


def distinct(store: Store, table: str, column: str) -> list[str]:
    """The values a filter can choose from (known tables and columns only)."""
    allowed = {
        ("audit_log", "event"),
        ("audit_log", "channel"),
        ("tool_calls", "tool"),
        ("conversations", "channel"),
    }
    if (table, column) not in allowed:
        raise ValueError(f"no filter on {table}.{column}")
    rows = store.query(f"SELECT DISTINCT {column} AS v FROM {table} ORDER BY v LIMIT 200")
    return [str(row["v"]) for row in rows]


def usage_by_day(store: Store, days: int = 30) -> list[dict[str, Any]]:
    """Tokens (input, output, and of input those read from the provider's prompt cache) and cost
    per UTC day and provider over the last `days` days."""
    since = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%d")
    rows = store.query(
        "SELECT substr(created_at, 1, 10) AS day, provider, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, "
        "SUM(cached_tokens) AS cached_tokens, "
        "COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS calls "
        "FROM audit_log WHERE provider != '' AND created_at >= ? "
        "GROUP BY day, provider ORDER BY day, provider",
        (since,),
    )
    return [dict(row) for row in rows]


def spending_by_kind(store: Store, days: int = 30) -> list[dict[str, Any]]:
    """Calls, tokens and cost per UTC day and kind of call (reply, planning, ask, summaries,
    heartbeat, introspection, analysis, critic, other background work: memory.audit.CALL_KINDS)
    over the last `days` days; a cost the provider did not report counts as 0."""
    since = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%d")
    rows = store.query(
        "SELECT substr(created_at, 1, 10) AS day, event, COUNT(*) AS calls, "
        "SUM(input_tokens + output_tokens) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd, "
        "SUM(CASE WHEN cost_usd IS NULL AND status = 'ok' THEN 1 ELSE 0 END) AS unpriced "
        "FROM audit_log WHERE provider != '' AND created_at >= ? "
        "GROUP BY day, event ORDER BY day",
        (since,),
    )
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        kind = call_kind(str(row["event"]))
        found = merged.setdefault(
            (row["day"], kind),
            {
                "day": row["day"],
                "kind": kind,
                "calls": 0,
                "tokens": 0,
                "cost_usd": 0.0,
                "unpriced": 0,
                "background": kind not in FOREGROUND_KINDS,
            },
        )
        for key in ("calls", "tokens", "cost_usd", "unpriced"):
            found[key] += row[key] or 0
    return sorted(merged.values(), key=lambda r: (r["day"], _kind_order(r["kind"])))


def _kind_order(kind: str) -> int:
    """Kinds in the order CALL_KINDS names them (answers first), other background work last."""
    order = list(dict.fromkeys(CALL_KINDS.values()))
    return order.index(kind) if kind in order else len(order)


def spent_today(store: Store) -> float:
    """USD spent on provider calls today (UTC), as the daily cap counts it."""
    return store.spent_since(datetime.now(UTC).strftime("%Y-%m-%d"))


def tool_success(store: Store) -> list[dict[str, Any]]:
    """Per tool: calls, failures, success rate and mean duration."""
    rows = store.query(
        "SELECT tool, COUNT(*) AS calls, SUM(ok) AS ok, AVG(duration_ms) AS avg_ms "
        "FROM tool_calls GROUP BY tool ORDER BY calls DESC, tool LIMIT 50"
    )
    return [
        dict(row) | {"rate": (row["ok"] or 0) / row["calls"] if row["calls"] else 0.0}
        for row in rows
    ]


def last_event(store: Store, event: str) -> dict[str, Any] | None:
    """The latest audit entry of one event kind (e.g. the last heartbeat)."""
    rows = store.query(
        "SELECT created_at, status, output_text, detail FROM audit_log WHERE event = ? "
        "ORDER BY id DESC LIMIT 1",
        (event,),
    )
    return dict(rows[0]) if rows else None


def self_heal_sessions(store: Store, limit: int = 5) -> list[dict[str, Any]]:
    """The latest self-healing sessions (the self-check's record)."""
    rows = store.query(
        "SELECT id, anomaly, status, iteration, updated_at FROM self_heal_sessions "
        "ORDER BY id DESC LIMIT ?",
        (limit,),
    )
    return [dict(row) for row in rows]


def purge_person(store: Store, person: str) -> dict[str, int]:
    """Forget a person: every fact, conversation (with its messages and summary) and pending
    task of theirs; their channel ids stay (allow-lists decide who may talk). Return counts."""
    with store.transaction() as conn:
        gone = {
            "facts": conn.execute("DELETE FROM facts WHERE sender_id = ?", (person,)).rowcount,
            "summaries": conn.execute(
                "DELETE FROM summaries WHERE sender_id = ?", (person,)
            ).rowcount,
            "conversations": conn.execute(
                "DELETE FROM conversations WHERE sender_id = ?", (person,)
            ).rowcount,
            "tasks": conn.execute(
                "UPDATE scheduled_tasks SET status = 'cancelled' "
                "WHERE sender_id = ? AND status = 'pending'",
                (person,),
            ).rowcount,
        }
    return gone
