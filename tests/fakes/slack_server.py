"""A Slack test double on 127.0.0.1: the Web API over HTTP and the Socket Mode websocket, with
the payload shapes of Slack's documentation, for tests.

Web API calls go to `/api/{method}` (form-encoded or JSON bodies, the token in the
`Authorization: Bearer` header) and answer `{"ok": true, ...}` or `{"ok": false, "error": ...}`
like Slack: `auth.test`, `apps.connections.open` (app-level token only; its `url` is this
server's websocket), `chat.postMessage` (recorded; `no_text`, `msg_too_long` past 40,000
characters), `users.info`, `files.getUploadURLExternal` + the upload URL +
`files.completeUploadExternal` (recorded as a share). Files people send are served at
`/files-pri/...` to the bot token only (anything else is redirected to a login page).

The socket greets with `hello`; events are sent as `events_api` envelopes and every ack
(`{"envelope_id": ...}`) is recorded with the time it came. `retry` sends an event again as
Slack does when no ack came in time (`retry_attempt`, `retry_reason`); `drop_socket` closes the
connection as a network failure would; `refresh` asks the client to reconnect (`disconnect`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import WSMsgType, web

TEAM = "T0TEAM0001"
APP_ID = "A0APP00001"
BOT_USER = "U0BOT00001"
BOT_ID = "B0BOT00001"
BOT_TOKEN = "xoxb-1111-2222-FakeBotTokenForTests"
APP_TOKEN = "xapp-1-A0APP00001-3333-FakeAppTokenForTests"
MAX_TEXT = 40_000  # chat.postMessage refuses longer texts (msg_too_long)


@dataclass
class Call:
    """One Web API call as received."""

    method: str
    params: dict[str, Any]
    token: str


@dataclass
class Envelope:
    """One envelope sent on the socket, and when (if ever) it was acknowledged."""

    envelope_id: str
    event: dict[str, Any]
    event_id: str
    retry_attempt: int
    sent_at: float
    acked_at: float | None = None


@dataclass
class Upload:
    """A file uploaded through files.getUploadURLExternal, and where it was shared."""

    file_id: str
    filename: str
    data: bytes = b""
    shared: dict[str, Any] = field(default_factory=dict)


class FakeSlack:
    """The Web API and Socket Mode endpoint of one workspace with one app installed."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.envelopes: list[Envelope] = []
        self.uploads: dict[str, Upload] = {}
        self.files: dict[str, tuple[bytes, str]] = {}  # path -> (data, mime type)
        self.downloads: list[str] = []  # the files served (to the bot token), by path
        self.users: dict[str, dict[str, Any]] = {}
        self.connections = 0  # websockets accepted so far
        # Run (in a thread) as each chat.postMessage arrives, before it is answered: what
        # people do while Omega's answer is still on its way.
        self.on_post: Callable[[Call], None] | None = None
        self.lock = threading.Lock()
        self._ts = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._pending: list[str] = []  # envelopes waiting for a connection
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_get("/link/", self._socket)
        app.router.add_post("/upload/v1/{file_id}", self._upload)
        app.router.add_get("/files-pri/{path:.*}", self._file)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def _shutdown(self) -> None:
        for socket in list(self._sockets):
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        """What the bot's Web API client is pointed at (slack-sdk's `base_url`)."""
        return f"http://127.0.0.1:{self.port}/api/"

    # -- the Web API -------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        raw = await request.read()
        if raw and request.content_type == "application/json":
            params.update(json.loads(raw))
        elif raw:
            params.update(dict(urllib.parse.parse_qsl(raw.decode("utf-8"))))
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip() if auth else str(params.pop("token", ""))
        call = Call(method, params, token)
        with self.lock:
            self.calls.append(call)
        handler = getattr(self, "_api_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"}, status=404)
        if method == "apps.connections.open":
            if token != APP_TOKEN:
                error = "not_allowed_token_type" if token == BOT_TOKEN else "invalid_auth"
                return web.json_response({"ok": False, "error": error})
        elif token != BOT_TOKEN:
            error = "not_allowed_token_type" if token == APP_TOKEN else "invalid_auth"
            return web.json_response({"ok": False, "error": error})
        if method == "chat.postMessage" and self.on_post is not None:
            await asyncio.to_thread(self.on_post, call)
        result: dict[str, Any] = handler(call)
        return web.json_response(result)

    def _api_auth_test(self, call: Call) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://omega-test.slack.com/",
            "team": "Omega Test",
            "user": "omega",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _api_apps_connections_open(self, call: Call) -> dict[str, Any]:
        ticket = uuid.uuid4()
        url = f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}&app_id={APP_ID}"
        return {"ok": True, "url": url}

    def _api_chat_postMessage(self, call: Call) -> dict[str, Any]:
        text = str(call.params.get("text") or "")
        if not text.strip() and not call.params.get("blocks"):
            return {"ok": False, "error": "no_text"}
        if len(text) > MAX_TEXT:
            return {"ok": False, "error": "msg_too_long"}
        ts = self.next_ts()
        channel = str(call.params.get("channel"))
        message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": text, "ts": ts}
        if call.params.get("thread_ts"):
            message["thread_ts"] = call.params["thread_ts"]
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _api_users_info(self, call: Call) -> dict[str, Any]:
        user = self.users.get(str(call.params.get("user")))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": user}

    def _api_files_getUploadURLExternal(self, call: Call) -> dict[str, Any]:
        if not call.params.get("filename") or not call.params.get("length"):
            return {"ok": False, "error": "invalid_arguments"}
        file_id = "F" + uuid.uuid4().hex[:10].upper()
        with self.lock:
            self.uploads[file_id] = Upload(file_id, str(call.params["filename"]))
        url = f"http://127.0.0.1:{self.port}/upload/v1/{file_id}"
        return {"ok": True, "upload_url": url, "file_id": file_id}

    def _api_files_completeUploadExternal(self, call: Call) -> dict[str, Any]:
        files = call.params.get("files")
        listed = json.loads(files) if isinstance(files, str) else files
        done = []
        for item in listed or []:
            upload = self.uploads.get(str(item.get("id")))
            if upload is None or not upload.data:
                return {"ok": False, "error": "file_not_found"}
            upload.shared = {
                "channel_id": call.params.get("channel_id"),
                "thread_ts": call.params.get("thread_ts"),
                "initial_comment": call.params.get("initial_comment"),
            }
            done.append({"id": upload.file_id, "name": upload.filename, "title": item.get("title")})
        return {"ok": True, "files": done}

    async def _upload(self, request: web.Request) -> web.Response:
        upload = self.uploads.get(request.match_info["file_id"])
        if upload is None:
            return web.Response(status=404, text="not found")
        upload.data = await request.read()
        return web.Response(text=f"OK - {len(upload.data)}")

    async def _file(self, request: web.Request) -> web.StreamResponse:
        found = self.files.get(request.match_info["path"])
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}" or found is None:
            raise web.HTTPFound("/?redir=%2Ffiles-pri")  # Slack's sign-in page
        data, mime = found
        with self.lock:
            self.downloads.append(request.match_info["path"])
        return web.Response(body=data, content_type=mime)

    # -- the socket --------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        with self.lock:
            self.connections += 1
            self._sockets.append(socket)
            pending, self._pending = self._pending, []
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "applink-fake", "approximate_connection_time": 18060},
            "connection_info": {"app_id": APP_ID},
        }
        await socket.send_str(json.dumps(hello))
        for text in pending:
            await socket.send_str(text)
        async for message in socket:
            if message.type == WSMsgType.TEXT:
                self._acked(json.loads(message.data))
        with self.lock:
            if socket in self._sockets:
                self._sockets.remove(socket)
        return socket

    def _acked(self, data: dict[str, Any]) -> None:
        with self.lock:
            for envelope in self.envelopes:
                if envelope.envelope_id == data.get("envelope_id") and envelope.acked_at is None:
                    envelope.acked_at = time.monotonic()

    async def _send(self, text: str) -> None:
        with self.lock:
            sockets = list(self._sockets)
            if not sockets:
                self._pending.append(text)
                return
        await sockets[-1].send_str(text)

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)

    def drop_socket(self) -> None:
        """Close every open connection, as a network failure would."""

        async def close() -> None:
            for socket in list(self._sockets):
                await socket.close(code=1011)

        self._run(close())

    def refresh(self) -> None:
        """Ask the client to reconnect, as Slack does before it rotates a connection."""
        message = {"type": "disconnect", "reason": "refresh_requested"}
        self._run(self._send(json.dumps(message | {"debug_info": {"host": "applink-fake"}})))

    # -- events ------------------------------------------------------------------------------

    def next_ts(self) -> str:
        """A new message timestamp, unique and increasing like Slack's."""
        return f"{1_800_000_000 + next(self._ts)}.{next(self._ts):06d}"

    def deliver(self, event: dict[str, Any], event_id: str = "", retry_attempt: int = 0) -> str:
        """Send an Events API event in a Socket Mode envelope; returns its event_id."""
        event_id = event_id or "Ev" + uuid.uuid4().hex[:10].upper()
        envelope_id = str(uuid.uuid4())
        payload = {
            "token": "fake-verification-token",
            "team_id": TEAM,
            "context_team_id": TEAM,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": TEAM,
                    "user_id": BOT_USER,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": "4-" + uuid.uuid4().hex,
        }
        envelope = {
            "envelope_id": envelope_id,
            "payload": payload,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        with self.lock:
            self.envelopes.append(
                Envelope(envelope_id, event, event_id, retry_attempt, time.monotonic())
            )
        self._run(self._send(json.dumps(envelope)))
        return event_id

    def retry(self, event_id: str) -> None:
        """Deliver the event `event_id` again, as Slack retries one it saw no ack for."""
        with self.lock:
            sent = [e for e in self.envelopes if e.event_id == event_id]
        self.deliver(sent[-1].event, event_id, sent[-1].retry_attempt + 1)

    def add_user(self, user: str, name: str) -> None:
        """A member of the workspace, as users.info describes them."""
        self.users[user] = {
            "id": user,
            "team_id": TEAM,
            "name": name.lower(),
            "real_name": name,
            "is_bot": False,
            "profile": {"display_name": name, "real_name": name},
        }

    def add_file(self, data: bytes, name: str, mimetype: str) -> dict[str, Any]:
        """A file a person shared, as a message event's `files` lists it."""
        file_id = "F" + uuid.uuid4().hex[:10].upper()
        path = f"{TEAM}-{file_id}/{name}"
        self.files[path] = (data, mimetype)
        url = f"http://127.0.0.1:{self.port}/files-pri/{path}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": name.rpartition(".")[2],
            "size": len(data),
            "mode": "hosted",
            "url_private": url,
            "url_private_download": url + "?download=1",
        }

    def dm(
        self, user: str, text: str, files: list[dict[str, Any]] | None = None, ts: str = ""
    ) -> tuple[str, str]:
        """A direct message from `user` to the app; returns (its ts, its event_id)."""
        ts = ts or self.next_ts()
        event: dict[str, Any] = {
            "type": "message",
            "channel": "D" + user[1:],
            "user": user,
            "text": text,
            "ts": ts,
            "event_ts": ts,
            "channel_type": "im",
            "team": TEAM,
            "client_msg_id": str(uuid.uuid4()),
        }
        if files:
            event |= {"subtype": "file_share", "files": files, "upload": False}
        return ts, self.deliver(event)

    def post(
        self, user: str, channel: str, text: str, thread_ts: str = "", mention: bool = False
    ) -> str:
        """A message in a public channel: the `message` event, and when it mentions the app
        also its `app_mention` (two events, one message, as Slack sends them). Returns ts."""
        ts = self.next_ts()
        base: dict[str, Any] = {
            "user": user,
            "text": text,
            "ts": ts,
            "event_ts": ts,
            "channel": channel,
            "team": TEAM,
            "client_msg_id": str(uuid.uuid4()),
        }
        if thread_ts:
            base["thread_ts"] = thread_ts
            base["parent_user_id"] = user
        if mention:
            self.deliver({"type": "app_mention", **base})
        self.deliver({"type": "message", "channel_type": "channel", **base})
        return ts

    # -- what the app did --------------------------------------------------------------------

    def posted(self, channel: str | None = None) -> list[Call]:
        """chat.postMessage calls (to `channel`), in order."""
        with self.lock:
            return [
                c
                for c in self.calls
                if c.method == "chat.postMessage"
                and (channel is None or c.params.get("channel") == channel)
            ]

    def texts(self, channel: str | None = None) -> list[str]:
        """The texts posted (to `channel`), in order."""
        return [str(c.params.get("text")) for c in self.posted(channel)]

    def shared(self) -> list[Upload]:
        """Uploads that were completed and shared."""
        with self.lock:
            return [u for u in self.uploads.values() if u.shared]

    def wait_for(self, predicate: Any, timeout: float = 30.0, what: str = "") -> None:
        """Until `predicate()` is true, or fail after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or predicate}: {self.texts()}")
            time.sleep(0.05)
