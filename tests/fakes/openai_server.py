"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Each request pops the next scripted step (or, with an empty script, echoes the last user
message). Every request is recorded so tests can assert on what the provider was sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.scripted import ScriptedServer


@dataclass
class Step:
    """One scripted response: text, an HTTP error (`text` its message), or a hang; `before`
    runs first (the test acting while the model "thinks")."""

    text: str = ""
    status: int = 200
    hang_secs: float = 0.0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    match: str = ""  # only used for requests whose last user message contains this
    planner: bool = False  # answers Omega's planning (classify & route) call instead
    retry_after: float = 0.0  # sent as the `retry-after` header of an error answer
    cached_tokens: int = 0  # reported as usage.prompt_tokens_details.cached_tokens when set
    model: str = ""  # the model the answer names (OpenAI's dated snapshot); empty: the one asked
    before: Callable[[], None] | None = None  # run by the test's thread before answering


@dataclass
class RecordedRequest:
    """What one request carried."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):
                    return " ".join(str(p.get("text", "")) for p in content)
                return str(content)
        return ""

    @property
    def system_text(self) -> str:
        return "\n".join(
            str(m.get("content")) for m in self.messages if m.get("role") in ("system", "developer")
        )


class FakeOpenAI(ScriptedServer[Step, RecordedRequest]):
    """Start with `with FakeOpenAI() as server:`; point base_url at `server.base_url`."""

    def __init__(self) -> None:
        super().__init__(Step)
        # Every request answered 200 (planning calls included), with the usage it reported.
        self.answered: list[tuple[RecordedRequest, dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
            disable_nagle_algorithm = True  # TCP_NODELAY: no delayed-ACK wait on keep-alive

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
                step, planning = fake.record(request)
                if step.before is not None:
                    step.before()
                # default_delay simulates a slow answer; planning calls stay instant unless
                # a scripted step says otherwise.
                delay = step.hang_secs or (fake.planner_delay if planning else fake.default_delay)
                if delay:
                    fake.enter()
                    try:
                        time.sleep(delay)
                    finally:
                        fake.leave()
                if step.status != 200:
                    self._send(
                        step.status,
                        # A step's text is the error message (servers echo what they got).
                        {
                            "error": {
                                "message": step.text or "scripted failure",
                                "type": "server_error",
                            }
                        },
                        {"retry-after": f"{step.retry_after:g}"} if step.retry_after else {},
                    )
                    return
                completion = fake._completion(body, step)
                with fake._lock:
                    fake.answered.append((request, completion["usage"]))
                self._send(200, completion)

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._serve(Handler)

    @staticmethod
    def _completion(body: dict[str, Any], step: Step) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": step.text}
        finish = "stop"
        if step.tool_calls:
            message["tool_calls"] = step.tool_calls
            finish = "tool_calls"
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": step.model or body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": max(1, len(step.text) // 4),
                "total_tokens": prompt_chars // 4 + 1,
                **(
                    {"prompt_tokens_details": {"cached_tokens": step.cached_tokens}}
                    if step.cached_tokens
                    else {}
                ),
            },
        }

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"
