"""The audit log and the record of every tool call; what each audited provider call was for
(its kind of spending) and what today's calls cost."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from omega.logs import redact
from omega.memory.db import Database, utc_now
from omega.text import scrub
from omega.types import (
    ToolCall,
)

AuditStatus = Literal["ok", "denied", "error"]

# What each audited provider call was for, by its audit event: the kinds of spending the
# dashboard shows and the daily cap tells apart. An event not named here is background work.
CALL_KINDS: dict[str, str] = {
    "exchange": "reply",  # answering a person
    "step": "reply",  # one step of a multi-step plan
    "plan_summary": "reply",  # the plan's closing message
    "action": "reply",  # a scheduled action task, done for the person who asked
    "classify": "planning",  # classify & route, before answering
    "transcription": "voice",  # a voice note turned into text, before answering
    "ask": "ask",  # `omega ask`
    "summary": "summaries",
    "facts": "summaries",
    "heartbeat": "heartbeat",
    "introspection": "introspection",
    "analysis": "analysis",
    "gate_judge": "gate",  # the gate's model judge of a proposal (evolution/judge.py)
    "critic": "critic",
    "probe": "probe",  # a fallback chain's few-token probe of a member that was down
}
# Calls made to answer someone now: under the daily cap they stop last.
FOREGROUND_KINDS = frozenset({"reply", "planning", "voice", "ask"})


def call_kind(event: str) -> str:
    """The kind of spending of a provider call audited under `event` ("background" if unknown)."""
    return CALL_KINDS.get(event, "background")


MAX_ARGUMENTS = 4000
MAX_PREVIEW = 500


def _capped_json(arguments: dict[str, object]) -> str:
    """Tool arguments as JSON with secrets redacted, cut to a sane size."""
    text = redact(json.dumps(arguments, ensure_ascii=False, default=str))
    return text if len(text) <= MAX_ARGUMENTS else text[: MAX_ARGUMENTS - 15] + "...(truncated)"


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
    cached_tokens: int = 0  # of input_tokens, read from the provider's prompt cache
    processing_ms: int = 0
    detail: str = ""
    event: str = "exchange"


def _insert(conn: sqlite3.Connection, entry: AuditEntry) -> None:
    """Insert one audit row, every text field scrubbed of lone surrogates (so the row is always
    written) and redacted (configured secrets and credential-shaped strings never reach it)."""

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
    conn.execute(
        "INSERT INTO audit_log (created_at, channel, sender_id, sender_name, input_text, "
        "output_text, provider, model, input_tokens, output_tokens, cost_usd, "
        "processing_ms, status, detail, event, cached_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            entry.cached_tokens,
        ),
    )


class AuditLog(Database):
    """The audit log and tool calls."""

    # Told, on the database thread, the cost of each provider call's row once it is written:
    # the daily cap (turn.spend) stops counting that call's cost itself then. None: no cap.
    cost_recorded: Callable[[float], None] | None = None

    def audit(self, entry: AuditEntry) -> None:
        """Append one entry to the audit log.

        Every text field is scrubbed of lone surrogates (so the row is always written) and
        redacted (configured secrets and credential-shaped strings never reach the log)."""
        with self._tx() as conn:
            _insert(conn, entry)
        if self.cost_recorded is not None and entry.provider and entry.cost_usd:
            self.cost_recorded(entry.cost_usd)

    def spent_since(self, since: str) -> float:
        """USD spent on provider calls audited since `since` (a database time or a day,
        "YYYY-MM-DD"); calls whose cost the provider did not report count as 0."""
        rows = self._query(
            "SELECT COALESCE(SUM(cost_usd), 0) AS spent FROM audit_log "
            "WHERE provider != '' AND created_at >= ?",
            (since,),
        )
        return float(rows[0]["spent"])

    def audit_once(self, entry: AuditEntry, since: str) -> bool:
        """Append `entry` unless an entry of its event exists since `since`, in one
        transaction (so two callers cannot both claim it); whether it was appended."""
        with self._tx() as conn:
            found = conn.execute(
                "SELECT 1 FROM audit_log WHERE event = ? AND created_at >= ? LIMIT 1",
                (entry.event, since),
            ).fetchone()
            if found:
                return False
            _insert(conn, entry)
        return True

    def audit_entries(self, limit: int = 50) -> list[dict[str, object]]:
        """The latest audit entries, newest first."""
        rows = self._query("SELECT * FROM audit_log ORDER BY id DESC LIMIT ?", (limit,))
        return [dict(row) for row in rows]

    def record_tool_calls(
        self,
        calls: Sequence[ToolCall],
        *,
        agent: str,
        channel: str = "",
        sender_id: str = "",
        conversation_id: str = "",
        room: bool = False,
    ) -> int:
        """Record tool calls (arguments size-capped and redacted); return the newest row id.
        `room`: made answering a group room (what they teach is the room's, not the person's)."""
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
                int(room),
            )
            for call in calls
        ]
        with self._tx() as conn:
            conn.executemany(
                "INSERT INTO tool_calls (created_at, agent, channel, sender_id, conversation_id, "
                "tool, arguments, ok, error, result_preview, duration_ms, is_group) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
