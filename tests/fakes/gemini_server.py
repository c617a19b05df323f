"""A scripted Gemini API (`generateContent`, `streamGenerateContent`) server on 127.0.0.1.

Each request pops the next scripted step (or, with an empty script, echoes the last user
message). Every request is recorded so tests can assert on what the provider was sent.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.scripted import ScriptedServer

# The `error.status` Google sends for each status code.
ERROR_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_ROUTE = re.compile(
    r"^/(v1beta|v1)/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)


@dataclass
class Step:
    """One scripted response: text, an HTTP error, a hang before answering, or tool calls.

    A tool call is `{"name": ..., "arguments": {...}}`; it becomes a `functionCall` part.
    """

    text: str = ""
    status: int = 200
    hang_secs: float = 0.0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    match: str = ""  # only used for requests whose last user message contains this
    planner: bool = False  # answers Omega's planning (classify & route) call instead
    input_tokens: int = 0  # reported usage; 0: estimated from the request and the text
    output_tokens: int = 0


def _parts_text(content: Any) -> str:
    """The text parts of one `Content` object, joined."""
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts") or []
    return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p)


@dataclass
class RecordedRequest:
    """What one request carried; `query` holds the URL's query parameters (first values)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    query: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str:
        """The model named in the URL (`/v1beta/models/{model}:generateContent`)."""
        match = _ROUTE.match(urlsplit(self.path).path)
        return match.group("model") if match else ""

    @property
    def api_key(self) -> str:
        """The key, from the `x-goog-api-key` header or else the `key` query parameter."""
        return self.headers.get("x-goog-api-key") or self.query.get("key", "")

    @property
    def contents(self) -> list[dict[str, Any]]:
        return list(self.body.get("contents", []))

    @property
    def roles(self) -> list[str]:
        return [str(c.get("role")) for c in self.contents]

    @property
    def turns(self) -> list[tuple[str, str]]:
        """Every content as (role, text)."""
        return [(str(c.get("role")), _parts_text(c)) for c in self.contents]

    @property
    def last_user_text(self) -> str:
        for content in reversed(self.contents):
            if content.get("role", "user") == "user":
                return _parts_text(content)
        return ""

    @property
    def system_text(self) -> str:
        """The text of `systemInstruction`."""
        return _parts_text(self.body.get("systemInstruction"))


class FakeGemini(ScriptedServer[Step, RecordedRequest]):
    """Start with `with FakeGemini() as server:`; point base_url at `server.base_url`."""

    def __init__(self) -> None:
        super().__init__(Step)
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
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                request = RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body, query
                )
                route = _ROUTE.match(url.path)
                if route is None:
                    with fake._lock:
                        fake.requests.append(request)  # recorded so a test sees the bad path
                    self._send_error(404, f"no route for {url.path}")
                    return
                step, _ = fake.record(request)
                delay = step.hang_secs or fake.default_delay
                if delay:
                    time.sleep(delay)
                if step.status != 200:
                    self._send_error(step.status, "scripted failure")
                    return
                response = fake._response(body, route.group("model"), step)
                if route.group("method") == "streamGenerateContent":
                    # `?alt=sse`: the whole answer as one server-sent event.
                    data = f"data: {json.dumps(response)}\r\n\r\n".encode()
                    self._send_bytes(200, data, "text/event-stream")
                else:
                    self._send(200, response)

            def _send_error(self, status: int, text: str) -> None:
                error = {"code": status, "message": text, "status": ERROR_STATUSES.get(status, "")}
                self._send(status, {"error": error})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self._send_bytes(status, data, "application/json; charset=UTF-8")

            def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._serve(Handler)

    @staticmethod
    def _response(body: dict[str, Any], model: str, step: Step) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if step.text or not step.tool_calls:
            parts.append({"text": step.text})
        for call in step.tool_calls:
            function_call = {"name": call["name"], "args": call.get("arguments", {})}
            if "id" in call:
                function_call["id"] = call["id"]
            parts.append({"functionCall": function_call})
        prompt_chars = len(json.dumps(body.get("contents", []))) + len(
            json.dumps(body.get("systemInstruction", ""))
        )
        prompt_tokens = step.input_tokens or max(1, prompt_chars // 4)
        output_tokens = step.output_tokens or max(1, len(step.text) // 4)
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": output_tokens,
                "totalTokenCount": prompt_tokens + output_tokens,
            },
            "modelVersion": model,
            "responseId": "fake-response",
        }

    @property
    def base_url(self) -> str:
        """The SDK's base URL: it appends `v1beta/models/{model}:generateContent` itself."""
        return f"{self.origin}/"
