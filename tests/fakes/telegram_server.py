"""A Bot API test double on 127.0.0.1: the real URL layout and JSON shapes, for tests.

Calls go to `/bot{token}/{method}` (form-encoded, JSON or multipart bodies, as clients send
them). A wrong token gets the real 401. `getUpdates` long-polls: it answers as soon as an update
at or past `offset` is queued, or with `[]` after `timeout` seconds; an `offset` confirms (drops)
every update before it, as Telegram does. `sendMessage` is recorded and refused like Telegram
refuses it (too long, empty, MarkdownV2 that does not parse). Faults can be queued per method.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

BOT_ID = 7_000_000_001
BOT_USERNAME = "omega_test_bot"
TOKEN = "7000000001:AAFakeTokenForTestsOnly_abcdefghijklmn"
# Characters MarkdownV2 reserves outside formatting; unescaped they make Telegram refuse.
_MDV2_RESERVED = set("_*[]()~`>#+-=|{}.!")


@dataclass
class Call:
    """One Bot API call as received."""

    method: str
    params: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass
class Fault:
    """The next call of `method` answers this error instead."""

    method: str
    status: int
    description: str
    retry_after: int | None = None


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _markdown_v2_error(text: str) -> str | None:
    """The real 400 description for a reserved character left unescaped (formatting marks are
    taken as formatting only in pairs, which is enough for the replies tests send)."""
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in _MDV2_RESERVED and ch not in "*_`~":
            return (
                "Bad Request: can't parse entities: Character "
                f"'{ch}' is reserved and must be escaped with the preceding '\\'"
            )
    return None


class FakeTelegram:
    """Start with `with FakeTelegram() as tg:`; point `api_url` at `tg.api_url`."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[Call] = []
        self.faults: list[Fault] = []
        self._updates: list[dict[str, Any]] = []
        self._history: dict[int, dict[str, Any]] = {}
        self._update_ids = itertools.count(1000)
        self._message_ids = itertools.count(1)
        self._cond = threading.Condition()
        self._closing = False
        self.confirmed_offset = 0  # the highest offset a getUpdates call has confirmed
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                parsed = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                params, files = _parse_body(self.headers.get("Content-Type", ""), raw)
                params.update({k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query).items()})
                prefix, _, method = parsed.path.rpartition("/")
                if prefix != f"/bot{fake.token}":
                    # Telegram: 401 for a well-formed token it does not know, 404 otherwise.
                    self._send(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
                    return
                status, payload = fake.answer(Call(method, params, files))
                self._send(status, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- what tests use ------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def queue(self, message: dict[str, Any]) -> int:
        """Queue an update carrying `message` (a Message object); return its update_id."""
        with self._cond:
            update_id = next(self._update_ids)
            message.setdefault("message_id", next(self._message_ids))
            message.setdefault("date", int(time.time()))
            self._updates.append({"update_id": update_id, "message": message})
            self._history[update_id] = self._updates[-1]
            self._cond.notify_all()
        return update_id

    def redeliver(self, update_id: int) -> None:
        """Offer an update again, as Telegram does when its confirmation never arrived."""
        with self._cond:
            self._updates.append(self._history[update_id])
            self._cond.notify_all()

    def private(self, user_id: int, text: str, name: str = "Ana") -> int:
        """A text in the private chat of `user_id`."""
        user = {"id": user_id, "is_bot": False, "first_name": name}
        chat = {"id": user_id, "type": "private", "first_name": name}
        return self.queue({"chat": chat, "from": user, "text": text})

    def group(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        name: str = "Ana",
        reply_to_bot: bool = False,
    ) -> int:
        """A text in a supergroup; `@omega_test_bot` in it is marked as a mention entity."""
        user = {"id": user_id, "is_bot": False, "first_name": name}
        message: dict[str, Any] = {
            "chat": {"id": chat_id, "type": "supergroup", "title": "Team"},
            "from": user,
            "text": text,
        }
        mention = f"@{BOT_USERNAME}"
        if mention in text:
            offset = _utf16_len(text[: text.index(mention)])
            message["entities"] = [{"type": "mention", "offset": offset, "length": len(mention)}]
        if reply_to_bot:
            message["reply_to_message"] = {
                "message_id": next(self._message_ids),
                "date": int(time.time()),
                "chat": message["chat"],
                "from": self._me(),
                "text": "an earlier answer",
            }
        return self.queue(message)

    def sent(self, chat_id: int | None = None) -> list[Call]:
        """sendMessage calls that were accepted, optionally only to one chat."""
        return [
            c
            for c in self.calls_of("sendMessage")
            if c.params.get("_accepted") and (chat_id is None or int(c.params["chat_id"]) == chat_id)
        ]

    def texts(self, chat_id: int | None = None) -> list[str]:
        return [str(c.params["text"]) for c in self.sent(chat_id)]

    def calls_of(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> None:
        """Wait until `predicate()` is true."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError(f"timed out; calls: {[(c.method, c.params) for c in self.calls]}")

    # -- the Bot API ---------------------------------------------------------------------

    def _me(self) -> dict[str, Any]:
        return {"id": BOT_ID, "is_bot": True, "first_name": "Omega", "username": BOT_USERNAME}

    def answer(self, call: Call) -> tuple[int, dict[str, Any]]:
        with self._cond:
            self.calls.append(call)
            fault = next((f for f in self.faults if f.method == call.method), None)
            if fault is not None:
                self.faults.remove(fault)
        if fault is not None:
            payload: dict[str, Any] = {
                "ok": False,
                "error_code": fault.status,
                "description": fault.description,
            }
            if fault.retry_after is not None:
                payload["parameters"] = {"retry_after": fault.retry_after}
            return fault.status, payload
        handler = getattr(self, f"_api_{call.method}", None)
        if handler is None:
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        return handler(call)  # type: ignore[no-any-return]

    @staticmethod
    def _ok(result: Any) -> tuple[int, dict[str, Any]]:
        return 200, {"ok": True, "result": result}

    @staticmethod
    def _bad(description: str) -> tuple[int, dict[str, Any]]:
        return 400, {"ok": False, "error_code": 400, "description": description}

    def _api_getMe(self, call: Call) -> tuple[int, dict[str, Any]]:
        return self._ok({**self._me(), "can_join_groups": True, "supports_inline_queries": False})

    def _api_getUpdates(self, call: Call) -> tuple[int, dict[str, Any]]:
        offset = int(call.params.get("offset") or 0)
        timeout = float(call.params.get("timeout") or 0)
        limit = int(call.params.get("limit") or 100)
        deadline = time.monotonic() + timeout
        with self._cond:
            if offset:
                self.confirmed_offset = max(self.confirmed_offset, offset)
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            while not self._updates and not self._closing:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._ok(list(self._updates[:limit]))

    def _message(self, chat_id: int, **extra: Any) -> dict[str, Any]:
        chat = {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}
        if chat_id < 0:
            chat["title"] = "Team"
        return {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": self._me(),
            **extra,
        }

    def _api_sendMessage(self, call: Call) -> tuple[int, dict[str, Any]]:
        text = str(call.params.get("text", ""))
        if not text.strip():
            return self._bad("Bad Request: message text is empty")
        if _utf16_len(text) > 4096:
            return self._bad("Bad Request: message is too long")
        if call.params.get("parse_mode") == "MarkdownV2":
            error = _markdown_v2_error(text)
            if error:
                return self._bad(error)
        call.params["_accepted"] = True
        return self._ok(self._message(int(call.params["chat_id"]), text=text))

    def _api_sendChatAction(self, call: Call) -> tuple[int, dict[str, Any]]:
        return self._ok(True)

    def _api_setMyCommands(self, call: Call) -> tuple[int, dict[str, Any]]:
        commands = call.params.get("commands")
        if isinstance(commands, str):
            commands = json.loads(commands)
            call.params["commands"] = commands
        return self._ok(True)

    def _api_sendPhoto(self, call: Call) -> tuple[int, dict[str, Any]]:
        if "photo" not in call.files:
            return self._bad("Bad Request: there is no photo in the request")
        photo = [{"file_id": "p1", "file_unique_id": "u1", "width": 1, "height": 1}]
        extra = {"photo": photo}
        if call.params.get("caption"):
            extra["caption"] = call.params["caption"]
        return self._ok(self._message(int(call.params["chat_id"]), **extra))

    # -- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._server.shutdown()
        self._server.server_close()


def _parse_body(content_type: str, raw: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Parameters (JSON values decoded where they are JSON) and uploaded files."""
    params: dict[str, Any] = {}
    files: dict[str, bytes] = {}
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        params = dict(json.loads(raw or b"{}"))
    elif kind == "multipart/form-data":
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            if part.get_filename() is not None:
                files[str(name)] = data
            else:
                params[str(name)] = data.decode()
    elif raw:
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
    return params, files
