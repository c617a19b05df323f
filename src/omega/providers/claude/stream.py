"""The `claude` CLI's output (stream-json events, or one json object) turned into a run's
outcome: the answer, its usage, the tool calls made, and what an error looked like."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from omega.logs import redact
from omega.types import ToolCall

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 1_000_000  # a runaway answer must not eat memory
MAX_TOOL_CALLS = 500
PREVIEW_CHARS = 300


@dataclass
class RunOutcome:
    """What one `claude` invocation produced."""

    text: str = ""
    subtype: str = ""
    is_error: bool = False
    got_result: bool = False
    session_id: str | None = None
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # of input_tokens, read from the prompt cache
    cost_usd: float | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: str = ""  # an assistant message's error kind, e.g. "authentication_failed"
    version: str = ""  # the CLI's version, from its init event
    mcp_servers: dict[str, str] = field(default_factory=dict)  # name -> status, from init


def _as_int(value: object) -> int:
    """A token count from JSON: ints only (bools and junk count as 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _content_blocks(event: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The content blocks of an assistant/user event's message."""
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        yield from (block for block in content if isinstance(block, dict))


def _tool_result_text(content: object) -> str:
    """A tool result's content as text: a string, or a list of text (and other) blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


class StreamParser:
    """Turns the CLI's output lines (stream-json events, or one json object) into an outcome."""

    def __init__(self) -> None:
        self.outcome = RunOutcome()
        self._pending: dict[str, tuple[str, dict[str, Any], float]] = {}
        self._unparsed: list[str] = []
        self._unparsed_chars = 0

    def feed_line(self, raw: bytes, now: float) -> None:
        """Parse one output line; lines that are not JSON are kept aside, never fatal."""
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            return
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            log.debug("claude-code: unparseable output line: %.200s", line)
            # Kept in case it is part of a pretty-printed json object (parsed at the end).
            if self._unparsed_chars + len(line) <= MAX_RESULT_CHARS:
                self._unparsed.append(line)
                self._unparsed_chars += len(line)
            return
        self._feed_value(data, now)

    def finish(self, now: float, unanswered: str = "no result (the run ended first)") -> RunOutcome:
        """Close the run: try leftover lines as one object, record tool calls left unanswered
        as failed (`unanswered` says why)."""
        if not self.outcome.got_result and self._unparsed:
            try:
                self._feed_value(json.loads("\n".join(self._unparsed)), now)
            except json.JSONDecodeError:
                log.warning("claude-code: skipped %d unparseable output lines", len(self._unparsed))
        for name, arguments, started in self._pending.values():
            self._record(
                ToolCall(
                    name=name,
                    arguments=arguments,
                    ok=False,
                    duration_ms=int((now - started) * 1000),
                    error=unanswered,
                )
            )
        self._pending.clear()
        return self.outcome

    def _feed_value(self, data: object, now: float) -> None:
        if isinstance(data, list):  # `--output-format json --verbose` prints one array of events
            for item in data:
                if isinstance(item, dict):
                    self._event(item, now)
        elif isinstance(data, dict):
            self._event(data, now)

    def _event(self, event: dict[str, Any], now: float) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            model = event.get("model")
            if isinstance(model, str):
                self.outcome.model = model
            version = event.get("claude_code_version")
            if isinstance(version, str):
                self.outcome.version = version
            for server in event.get("mcp_servers") or ():
                if isinstance(server, dict) and isinstance(server.get("name"), str):
                    self.outcome.mcp_servers[server["name"]] = str(server.get("status") or "")
        elif kind == "assistant":
            error = event.get("error")
            if isinstance(error, str) and error:
                self.outcome.error = error
            for block in _content_blocks(event):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    arguments = block.get("input")
                    self._pending[block["id"]] = (
                        str(block.get("name") or "unknown"),
                        arguments if isinstance(arguments, dict) else {},
                        now,
                    )
        elif kind == "user":
            for block in _content_blocks(event):
                if block.get("type") == "tool_result":
                    self._tool_result(block, now)
        elif kind == "result" or (kind is None and ("result" in event or "session_id" in event)):
            self._result(event)

    def _tool_result(self, block: dict[str, Any], now: float) -> None:
        pending = self._pending.pop(str(block.get("tool_use_id")), None)
        if pending is None:
            log.debug("claude-code: tool_result for an unknown tool_use id")
            return
        name, arguments, started = pending
        # Redacted whole, then cut: a secret the cut would split is still hidden.
        text = redact(_tool_result_text(block.get("content")))[:PREVIEW_CHARS]
        is_error = bool(block.get("is_error"))
        self._record(
            ToolCall(
                name=name,
                arguments=arguments,
                ok=not is_error,
                result_preview=text,
                duration_ms=int((now - started) * 1000),
                error=(text or "tool error") if is_error else "",
            )
        )

    def _record(self, call: ToolCall) -> None:
        if len(self.outcome.tool_calls) < MAX_TOOL_CALLS:
            self.outcome.tool_calls.append(call)

    def _result(self, event: dict[str, Any]) -> None:
        out = self.outcome
        out.got_result = True
        text = event.get("result")
        out.text = text[:MAX_RESULT_CHARS] if isinstance(text, str) else ""
        out.subtype = str(event.get("subtype") or "")
        out.is_error = bool(event.get("is_error"))
        session_id = event.get("session_id")
        if isinstance(session_id, str) and session_id:
            out.session_id = session_id
        usage = event.get("usage")
        if isinstance(usage, dict):
            # Cached prompt tokens are still prompt tokens; the CLI reports them apart.
            out.input_tokens = (
                _as_int(usage.get("input_tokens"))
                + _as_int(usage.get("cache_creation_input_tokens"))
                + _as_int(usage.get("cache_read_input_tokens"))
            )
            out.output_tokens = _as_int(usage.get("output_tokens"))
            out.cached_tokens = _as_int(usage.get("cache_read_input_tokens"))
        cost = event.get("total_cost_usd", event.get("cost_usd"))
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            out.cost_usd = float(cost)
