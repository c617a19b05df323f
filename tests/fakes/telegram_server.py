"""A Bot API test double on 127.0.0.1: the real URL layout and JSON shapes, for tests.

Calls go to `/bot{token}/{method}` (form-encoded, JSON or multipart bodies, as clients send
them). A wrong token gets the real 401. `getUpdates` long-polls: it answers as soon as an update
at or past `offset` is queued, or with `[]` after `timeout` seconds; an `offset` confirms (drops)
every update before it, as Telegram does. `sendMessage` is recorded and refused like Telegram
refuses it (too long, empty, MarkdownV2 that does not parse). Faults can be queued per method.

Webhooks: `setWebhook` records the URL and secret token and `deleteWebhook` clears them;
while one is set `getUpdates` is refused with Telegram's 409. `deliver` POSTs an update, as
Telegram does, to the webhook (or to the address a test names: the replica behind the proxy).
"""

from __future__ import annotations

import email.parser
import email.policy
import html
import itertools
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
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
    at: float = field(default_factory=time.monotonic)  # when it arrived


@dataclass
class Fault:
    """The next call of `method` answers this error instead."""

    method: str
    status: int
    description: str
    retry_after: int | None = None


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_HTML_TAGS = frozenset(
    "b strong i em u ins s strike del span tg-spoiler a code pre blockquote tg-emoji".split()
)
_HTML_TOKEN = re.compile(
    r"<(?P<close>/?)(?P<tag>[a-zA-Z-]+)(?P<attrs>(?:\s+[a-zA-Z-]+=\"[^\"<>]*\")*)\s*>"
    r"|&(?P<entity>#[0-9]+|#x[0-9a-fA-F]+|lt|gt|amp|quot);"
    r"|(?P<bad>[<>&])"
)


def parse_html(text: str) -> str:
    """The visible text of a message in Telegram's HTML mode; ValueError with Telegram's own
    description when Telegram would refuse it (unknown or unbalanced tag, bare <, > or &)."""
    visible: list[str] = []
    open_tags: list[str] = []
    position = 0
    for match in _HTML_TOKEN.finditer(text):
        visible.append(text[position : match.start()])
        position = match.end()
        if match.group("entity"):
            visible.append(html.unescape(match.group()))
        elif match.group("bad"):
            raise ValueError(
                "Bad Request: can't parse entities: Unsupported start tag or unescaped "
                f"'{match.group('bad')}' at byte offset {match.start()}"
            )
        else:
            tag = match.group("tag").lower()
            if tag not in _HTML_TAGS:
                raise ValueError(
                    f'Bad Request: can\'t parse entities: Unsupported start tag "{tag}"'
                )
            if match.group("close"):
                if not open_tags or open_tags[-1] != tag:
                    raise ValueError(
                        "Bad Request: can't parse entities: Can't find end tag corresponding "
                        f'to start tag "{open_tags[-1] if open_tags else tag}"'
                    )
                open_tags.pop()
            else:
                open_tags.append(tag)
    visible.append(text[position:])
    if open_tags:
        raise ValueError(
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag "
            f'"{open_tags[-1]}"'
        )
    return "".join(visible)


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
        self.files: dict[str, bytes] = {}  # file_path -> content, served under /file/bot.../
        self._file_ids: dict[str, str] = {}  # file_id -> file_path
        self.downloads: list[str] = []  # file paths downloaded
        self.webhook_url = ""  # set by setWebhook, cleared by deleteWebhook
        self.webhook_secret = ""
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
                path = urllib.parse.unquote(parsed.path)  # clients may quote the token's ":"
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                params, files = parse_body(self.headers.get("Content-Type", ""), raw)
                params.update({k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query).items()})
                file_prefix = f"/file/bot{fake.token}/"
                if path.startswith(file_prefix):
                    self._send_file(path[len(file_prefix) :])
                    return
                prefix, _, method = path.rpartition("/")
                if prefix != f"/bot{fake.token}":
                    # Telegram: 401 for a well-formed token it does not know, 404 otherwise.
                    self._send(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
                    return
                status, payload = fake.answer(Call(method, params, files))
                self._send(status, payload)

            def _send_file(self, path: str) -> None:
                data = fake.files.get(path)
                if data is None:
                    self._send(404, {"ok": False, "error_code": 404, "description": "Not Found"})
                    return
                with fake._cond:
                    fake.downloads.append(path)
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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

    def deliver(
        self, update_id: int, to: str = "", secret: str | None = None, timeout: float = 30.0
    ) -> int:
        """POST an update as Telegram does to a webhook: to `to` (default the webhook's URL),
        with `secret` in X-Telegram-Bot-Api-Secret-Token (default the one setWebhook gave; ""
        sends no header). The HTTP status the receiver answered; a 2xx takes the update off
        what getUpdates would still offer."""
        with self._cond:
            update = dict(self._history[update_id])
            secret = self.webhook_secret if secret is None else secret
            url = to or self.webhook_url
        headers = {"Content-Type": "application/json"}
        if secret:
            headers["X-Telegram-Bot-Api-Secret-Token"] = secret
        request = urllib.request.Request(
            url, data=json.dumps(update).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        with self._cond:  # delivered: Telegram no longer keeps it for getUpdates
            self._updates = [u for u in self._updates if u["update_id"] != update_id]
        return status

    def message_of(self, update_id: int) -> dict[str, Any]:
        """The Message object an update carried (its chat and message_id)."""
        with self._cond:
            return dict(self._history[update_id]["message"])

    def private(self, user_id: int, text: str, name: str = "Ana") -> int:
        """A text in the private chat of `user_id`."""
        user = {"id": user_id, "is_bot": False, "first_name": name}
        chat = {"id": user_id, "type": "private", "first_name": name}
        return self.queue({"chat": chat, "from": user, "text": text})

    def add_file(self, data: bytes, path: str) -> dict[str, Any]:
        """Store a file as Telegram keeps one; the file's ids and size, for a message."""
        file_id = f"file-{len(self._file_ids) + 1}"
        self._file_ids[file_id] = path
        self.files[path] = data
        return {"file_id": file_id, "file_unique_id": f"u-{file_id}", "file_size": len(data)}

    def _private_message(self, user_id: int, name: str, **extra: Any) -> int:
        user = {"id": user_id, "is_bot": False, "first_name": name}
        chat = {"id": user_id, "type": "private", "first_name": name}
        return self.queue({"chat": chat, "from": user, **extra})

    def photo(self, user_id: int, data: bytes, caption: str = "", name: str = "Ana") -> int:
        """A photo in the private chat of `user_id`, in the three sizes Telegram makes."""
        sizes = [
            {
                **self.add_file(data[: len(data) // 4], "photos/small.jpg"),
                "width": 90,
                "height": 90,
            },
            {
                **self.add_file(data[: len(data) // 2], "photos/mid.jpg"),
                "width": 320,
                "height": 320,
            },
            {**self.add_file(data, "photos/large.jpg"), "width": 1280, "height": 1280},
        ]
        extra: dict[str, Any] = {"photo": sizes}
        if caption:
            extra["caption"] = caption
        return self._private_message(user_id, name, **extra)

    def voice(self, user_id: int, data: bytes, name: str = "Ana") -> int:
        """A voice note (OGG/Opus) in the private chat of `user_id`."""
        voice = {**self.add_file(data, "voice/note.oga"), "duration": 3, "mime_type": "audio/ogg"}
        return self._private_message(user_id, name, voice=voice)

    def document(
        self, user_id: int, data: bytes, file_name: str, mime: str, caption: str = ""
    ) -> int:
        """A document (any file) in the private chat of `user_id`."""
        document = {**self.add_file(data, f"documents/{file_name}"), "file_name": file_name}
        document["mime_type"] = mime
        extra: dict[str, Any] = {"document": document}
        if caption:
            extra["caption"] = caption
        return self._private_message(user_id, "Ana", **extra)

    def reply(self, user_id: int, text: str, quoted: str, quoted_from_bot: bool = True) -> int:
        """A private message replying to an earlier one whose text was `quoted`."""
        chat = {"id": user_id, "type": "private", "first_name": "Ana"}
        author = (
            self._me() if quoted_from_bot else {"id": user_id, "is_bot": False, "first_name": "Ana"}
        )
        earlier = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": author,
            "text": quoted,
        }
        return self._private_message(user_id, "Ana", text=text, reply_to_message=earlier)

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
            if c.params.get("_accepted")
            and (chat_id is None or int(c.params["chat_id"]) == chat_id)
        ]

    def texts(self, chat_id: int | None = None) -> list[str]:
        """What the person sees of each accepted message (markup parsed away)."""
        return [str(c.params["_visible"]) for c in self.sent(chat_id)]

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

    def _api_setWebhook(self, call: Call) -> tuple[int, dict[str, Any]]:
        url = str(call.params.get("url") or "")
        if not url.startswith("https://"):
            return self._bad("Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        with self._cond:
            self.webhook_url = url
            self.webhook_secret = str(call.params.get("secret_token") or "")
            self._cond.notify_all()  # a getUpdates waiting now is refused
        return self._ok(True)

    def _api_deleteWebhook(self, call: Call) -> tuple[int, dict[str, Any]]:
        with self._cond:
            self.webhook_url = self.webhook_secret = ""
            if str(call.params.get("drop_pending_updates", "")).lower() == "true":
                self._updates.clear()
        return self._ok(True)

    def _api_getWebhookInfo(self, call: Call) -> tuple[int, dict[str, Any]]:
        with self._cond:
            info = {"url": self.webhook_url, "has_custom_certificate": False}
            info["pending_update_count"] = len(self._updates) if self.webhook_url else 0
        return self._ok(info)

    def _api_getUpdates(self, call: Call) -> tuple[int, dict[str, Any]]:
        if self.webhook_url:
            return 409, {
                "ok": False,
                "error_code": 409,
                "description": "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            }
        offset = int(call.params.get("offset") or 0)
        timeout = float(call.params.get("timeout") or 0)
        limit = int(call.params.get("limit") or 100)
        deadline = time.monotonic() + timeout
        with self._cond:
            if offset:
                self.confirmed_offset = max(self.confirmed_offset, offset)
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            while not self._updates and not self._closing and not self.webhook_url:
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
        visible = text
        if call.params.get("parse_mode") == "MarkdownV2":
            error = _markdown_v2_error(text)
            if error:
                return self._bad(error)
        if str(call.params.get("parse_mode", "")).upper() == "HTML":
            try:
                visible = parse_html(text)
            except ValueError as exc:
                return self._bad(str(exc))
        # Telegram counts the limit and emptiness after entities are parsed.
        if not visible.strip():
            return self._bad("Bad Request: message text is empty")
        if _utf16_len(visible) > 4096:
            return self._bad("Bad Request: message is too long")
        call.params["_accepted"] = True
        call.params["_visible"] = visible
        return self._ok(self._message(int(call.params["chat_id"]), text=text))

    def _api_getFile(self, call: Call) -> tuple[int, dict[str, Any]]:
        file_id = str(call.params.get("file_id", ""))
        path = self._file_ids.get(file_id)
        if path is None:
            return self._bad("Bad Request: invalid file_id")
        size = len(self.files[path])
        return self._ok(
            {
                "file_id": file_id,
                "file_unique_id": f"u-{file_id}",
                "file_size": size,
                "file_path": path,
            }
        )

    def photos(self, chat_id: int | None = None) -> list[Call]:
        """sendPhoto calls that were accepted, optionally only to one chat."""
        return [
            c
            for c in self.calls_of("sendPhoto")
            if c.params.get("_accepted")
            and (chat_id is None or int(c.params["chat_id"]) == chat_id)
        ]

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
        extra: dict[str, Any] = {"photo": photo}
        caption = str(call.params.get("caption") or "")
        visible = caption
        if caption and str(call.params.get("parse_mode", "")).upper() == "HTML":
            try:
                visible = parse_html(caption)
            except ValueError as exc:
                return self._bad(str(exc))
        if _utf16_len(visible) > 1024:
            return self._bad("Bad Request: message caption is too long")
        if caption:
            extra["caption"] = caption
        call.params["_accepted"] = True
        call.params["_visible"] = visible
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


def parse_body(content_type: str, raw: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
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
            payload = part.get_payload(decode=True)
            data = payload if isinstance(payload, bytes) else b""
            if part.get_filename() is not None:
                files[str(name)] = data
                params[f"_filename_{name}"] = part.get_filename()
            else:
                params[str(name)] = data.decode()
    elif raw:
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
    return params, files
