"""A scripted Anthropic Messages API server on 127.0.0.1, for tests.

Each request pops the next scripted step (or, with an empty script, echoes the last user
message). Every request is recorded so tests can assert on what the provider was sent.
pydantic-ai streams a request behind the scenes when it asks for a large `max_tokens`, so a
request with `"stream": true` is answered with the same content as server-sent events.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.scripted import ScriptedServer

# The `error.type` Anthropic sends for each status code.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Step:
    """One scripted response: text, an HTTP error, a hang before answering, or tool calls.

    A tool call is `{"name": ..., "arguments": {...}}` (optionally with an `id`); it becomes a
    `tool_use` content block.
    """

    text: str = ""
    status: int = 200
    hang_secs: float = 0.0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    match: str = ""  # only used for requests whose last user message contains this
    planner: bool = False  # answers Omega's planning (classify & route) call instead
    input_tokens: int = 0  # reported usage; 0: estimated from the request and the text
    output_tokens: int = 0
    cache_read_tokens: int = 0  # reported as usage.cache_read_input_tokens when set


def _block_text(content: Any) -> str:
    """The text of a message's content: a plain string or a list of content blocks."""
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


@dataclass
class RecordedRequest:
    """What one request carried."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def api_key(self) -> str:
        """The key: the `x-api-key` header, or the bearer token the anthropic SDK (2.x) sends."""
        bearer = self.headers.get("authorization", "")
        return self.headers.get("x-api-key") or bearer.removeprefix("Bearer ")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def roles(self) -> list[str]:
        return [str(m.get("role")) for m in self.messages]

    @property
    def turns(self) -> list[tuple[str, str]]:
        """Every message as (role, text)."""
        return [(str(m.get("role")), _block_text(m.get("content", ""))) for m in self.messages]

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _block_text(message.get("content", ""))
        return ""

    @property
    def system_text(self) -> str:
        """The top-level `system` field (a string or a list of text blocks)."""
        return _block_text(self.body.get("system", ""))


class FakeAnthropic(ScriptedServer[Step, RecordedRequest]):
    """Start with `with FakeAnthropic() as server:`; point base_url at `server.base_url`."""

    def __init__(self, retry_after_ms: int = 1) -> None:
        super().__init__(Step)
        # Sent as `retry-after-ms` on errors; the SDK honours it, which keeps retry tests fast.
        self.retry_after_ms = retry_after_ms
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                request = RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                if urlsplit(self.path).path != "/v1/messages":
                    with fake._lock:
                        fake.requests.append(request)  # recorded so a test sees the bad path
                    self._send_error(404, f"no route for {self.path}")
                    return
                step, _ = fake.record(request)
                delay = step.hang_secs or fake.default_delay
                if delay:
                    time.sleep(delay)
                if step.status != 200:
                    self._send_error(step.status, "scripted failure")
                    return
                message = fake._message(body, step)
                if body.get("stream"):
                    self._send(200, _sse(message), "text/event-stream")
                else:
                    self._send(200, json.dumps(message).encode(), "application/json")

            def _send_error(self, status: int, text: str) -> None:
                error_type = ERROR_TYPES.get(status, "api_error")
                payload = {"type": "error", "error": {"type": error_type, "message": text}}
                headers = {"retry-after-ms": str(fake.retry_after_ms)} if status >= 429 else {}
                self._send(status, json.dumps(payload).encode(), "application/json", headers)

            def _send(
                self,
                status: int,
                data: bytes,
                content_type: str,
                headers: dict[str, str] | None = None,
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("request-id", "req_fake")
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._serve(Handler)

    @staticmethod
    def _message(body: dict[str, Any], step: Step) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if step.text or not step.tool_calls:
            content.append({"type": "text", "text": step.text})
        for index, call in enumerate(step.tool_calls):
            content.append(
                {
                    "type": "tool_use",
                    "id": call.get("id", f"toolu_fake_{index}"),
                    "name": call["name"],
                    "input": call.get("arguments", call.get("input", {})),
                }
            )
        prompt_chars = len(json.dumps(body.get("messages", []))) + len(
            json.dumps(body.get("system", ""))
        )
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake-model"),
            "content": content,
            "stop_reason": "tool_use" if step.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": step.input_tokens or max(1, prompt_chars // 4),
                "output_tokens": step.output_tokens or max(1, len(step.text) // 4),
                **(
                    {"cache_read_input_tokens": step.cache_read_tokens}
                    if step.cache_read_tokens
                    else {}
                ),
            },
        }

    @property
    def base_url(self) -> str:
        """The SDK's base URL: it appends `/v1/messages` itself."""
        return f"{self.origin}"


def _sse(message: dict[str, Any]) -> bytes:
    """The message as the Messages API's stream of server-sent events."""
    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            empty: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            empty = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            {"type": "content_block_start", "index": index, "content_block": empty},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
