"""A Discord test double on 127.0.0.1: the REST API (v10) and the gateway websocket, with
Discord's documented payloads (discord.com/developers/docs: Gateway, Gateway Events, Message,
Channel, User), for tests.

REST: `GET /api/v10/gateway/bot`, `/users/@me`, `/oauth2/applications/@me`; `POST
/channels/{id}/messages` (JSON, or multipart with `payload_json` and `files[n]`; refused with
Discord's 50035 above 2,000 characters) and `GET` the same for a channel's history (messages
sent while no session was attached are there too), `POST /channels/{id}/typing`,
`/users/@me/channels`; attachments are served from `/attachments/...` as from Discord's CDN.
Every API call needs `Authorization: Bot <token>` (else Discord's 401).

Gateway: HELLO (op 10) on connect; IDENTIFY (op 2) starts a session (READY with
`session_id` and `resume_gateway_url`, then GUILD_CREATE per guild); HEARTBEAT (op 1) is
answered with ACK (op 11); RESUME (op 6) replays every DISPATCH after the client's `seq`,
then RESUMED (`resume_overlap` replays some seen ones too), or answers INVALID_SESSION (op 9)
for an unknown session. A session keeps its dispatches while no socket is attached, as
Discord does between a drop and the resume. Content rules as documented: without the
MESSAGE_CONTENT intent a guild message that does not mention the bot arrives with empty
content and no attachments. `drop()` cuts the socket without a close frame, `reconnect()`
sends op 7, `invalidate()` op 9, `offline` refuses connections. The `compress` query
(zlib-stream) is honoured; zstd-stream is answered uncompressed (text frames).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

from aiohttp import BodyPartReader, WSMsgType, web

TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.FakeTk.test-token-for-the-discord-double"
BOT_ID = 1_000_000_000_000_000_001
BOT_NAME = "omega_bot"
GUILD_ID = 1_100_000_000_000_000_001
GUILD_CHANNEL_ID = 1_200_000_000_000_000_001
MAX_CONTENT = 2000
MESSAGE_CONTENT_INTENT = 1 << 15
GUILD_MESSAGES_INTENT = 1 << 9
DIRECT_MESSAGES_INTENT = 1 << 12

_ids = itertools.count(1_300_000_000_000_000_001)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _json(data: Any, status: int = 200) -> web.Response:
    # Exactly "application/json", as Discord sends it: discord.py parses nothing else.
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


def user(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
    """A Discord user object."""
    data: dict[str, Any] = {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name.title(),
        "avatar": None,
    }
    if bot:
        data["bot"] = True
    return data


@dataclass
class Sent:
    """One message Omega posted."""

    channel_id: int
    content: str
    files: dict[str, bytes] = field(default_factory=dict)
    payload: dict[str, Any] = field(default_factory=dict)
    message_id: int = 0


@dataclass
class Session:
    """A gateway session: its dispatches by sequence number, kept for RESUME."""

    session_id: str
    intents: int
    events: list[dict[str, Any]] = field(default_factory=list)
    socket: web.WebSocketResponse | None = None
    compressor: Any = None


class FakeDiscord:
    """Discord's REST API and gateway on one loopback port, in a thread of its own."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.lock = threading.Lock()
        self.sent: list[Sent] = []
        self.typing: list[int] = []
        self.dm_channels: dict[int, int] = {}  # user id -> DM channel id
        self.files: dict[str, tuple[bytes, str]] = {}  # CDN path -> (data, content type)
        self.sessions: dict[str, Session] = {}
        self.history: dict[int, list[dict[str, Any]]] = {}  # channel id -> its messages
        self.session: Session | None = None  # the newest session (where dispatches go)
        self.identifies = 0
        self.history_reads: list[tuple[int, int]] = []  # (channel, after) of each read
        self.resumes: list[int] = []  # the seq each RESUME asked from
        self.received: list[dict[str, Any]] = []  # every gateway payload the client sent
        # A RESUME replays this many events the client had already seen as well (a fault to
        # inject: Discord's replay is at least once from the client's point of view).
        self.resume_overlap = 0
        self.refuse_resume = False  # answer RESUME with INVALID_SESSION (an expired session)
        self.offline = False  # refuse gateway connections (503), as during an outage
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    # -- the test's side -----------------------------------------------------------------

    @property
    def api_url(self) -> str:
        """What [channel.discord] api_url names."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    def dm(
        self,
        user_id: int,
        text: str,
        name: str = "ana",
        attachments: list[tuple[str, bytes, str]] = (),  # type: ignore[assignment]
    ) -> int:
        """A direct message from `user_id` to the bot; returns its message id."""
        channel_id = self.dm_channels.setdefault(user_id, next(_ids))
        return self._message(channel_id, None, user(user_id, name), text, attachments)

    def guild_message(
        self,
        user_id: int,
        text: str,
        mention: bool = False,
        name: str = "bob",
        reply_to: Sent | None = None,
        everyone: bool = False,
        channel_id: int = GUILD_CHANNEL_ID,
    ) -> int:
        """A message in the guild's channel (or in `channel_id`, a thread of it: to Discord a
        thread is a channel of its own); `mention` puts `<@bot>` in front of it, `reply_to`
        makes it a reply to a message Omega sent there (without a ping), `everyone` an
        @everyone."""
        content = f"<@{BOT_ID}> {text}" if mention else text
        mentions = [user(BOT_ID, BOT_NAME, bot=True)] if mention else []
        extra: dict[str, Any] = {}
        if everyone:
            content, extra["mention_everyone"] = f"@everyone {content}", True
        if reply_to is not None:
            extra["type"] = 19  # REPLY
            extra["message_reference"] = {
                "message_id": str(reply_to.message_id),
                "channel_id": str(reply_to.channel_id),
                "guild_id": str(GUILD_ID),
            }
            extra["referenced_message"] = self._posted(reply_to) | {"guild_id": str(GUILD_ID)}
        return self._message(
            channel_id, GUILD_ID, user(user_id, name), content, (), mentions, extra
        )

    def _message(
        self,
        channel_id: int,
        guild_id: int | None,
        author: dict[str, Any],
        content: str,
        attachments: Any,
        mentions: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> int:
        message_id = next(_ids)
        files = []
        for filename, blob, content_type in attachments:
            attachment_id = next(_ids)
            path = f"/attachments/{channel_id}/{attachment_id}/{filename}"
            with self.lock:
                self.files[path] = (blob, content_type)
            url = f"http://127.0.0.1:{self.port}{path}"
            files.append(
                {
                    "id": str(attachment_id),
                    "filename": filename,
                    "size": len(blob),
                    "url": url,
                    "proxy_url": url,
                    "content_type": content_type,
                }
            )
        data: dict[str, Any] = {
            "id": str(message_id),
            "channel_id": str(channel_id),
            "author": author,
            "content": content,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": mentions or [],
            "mention_roles": [],
            "attachments": files,
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
        } | (extra or {})
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
            data["member"] = {
                "roles": [],
                "joined_at": _now(),
                "deaf": False,
                "mute": False,
                "flags": 0,
            }
        with self.lock:
            self.history.setdefault(channel_id, []).append(data)
        self.dispatch("MESSAGE_CREATE", data)
        return message_id

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Queue a DISPATCH on the newest session; sent now when a socket is attached, else
        replayed when the client resumes."""
        self._call(self._dispatch(event, data))

    def drop(self) -> None:
        """Cut the gateway socket without a close frame (a network failure)."""
        self._call(self._drop())

    def reconnect(self) -> None:
        """Ask the client to reconnect and resume (op 7)."""
        self._call(self._op(7, None))

    def invalidate(self) -> None:
        """End the session (op 9, not resumable): the client must IDENTIFY anew."""
        self._call(self._op(9, False))

    def connected(self) -> bool:
        """Whether a gateway socket is attached to the newest session."""
        with self.lock:
            return self.session is not None and self.session.socket is not None

    def texts(self, channel_id: int | None = None) -> list[str]:
        """What Omega sent (to `channel_id`), in order."""
        with self.lock:
            return [s.content for s in self.sent if channel_id in (None, s.channel_id)]

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> None:
        """Until `predicate()` holds; AssertionError after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError(f"timed out; sent: {self.texts()}")

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    # -- the gateway ---------------------------------------------------------------------

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        session = self.session
        if session is None:
            return  # nobody has connected yet: the message is only in the channel's history
        if event == "MESSAGE_CREATE" and not self._visible(session, data):
            return
        if event == "MESSAGE_CREATE":
            data = self._as_seen(session, data)
        payload = {"op": 0, "t": event, "s": len(session.events) + 1, "d": data}
        session.events.append(payload)
        if session.socket is not None:
            await self._send(session, payload)

    @staticmethod
    def _as_seen(session: Session | None, data: dict[str, Any]) -> dict[str, Any]:
        """A message as the bot receives it: without the MESSAGE_CONTENT intent, a guild
        message that does not mention the bot has no content and no files."""
        if session is not None and session.intents & MESSAGE_CONTENT_INTENT:
            return data
        mentioned = any(int(u["id"]) == BOT_ID for u in data["mentions"])
        if "guild_id" in data and not mentioned:
            return data | {"content": "", "attachments": [], "embeds": []}
        return data

    @staticmethod
    def _visible(session: Session, data: dict[str, Any]) -> bool:
        wanted = GUILD_MESSAGES_INTENT if "guild_id" in data else DIRECT_MESSAGES_INTENT
        return bool(session.intents & wanted)

    async def _send(self, session: Session, payload: dict[str, Any]) -> None:
        socket = session.socket
        if socket is None or socket.closed:
            return
        text = json.dumps(payload)
        if session.compressor is not None:
            compressed = session.compressor.compress(text.encode())
            await socket.send_bytes(compressed + session.compressor.flush(zlib.Z_SYNC_FLUSH))
        else:
            await socket.send_str(text)

    async def _drop(self) -> None:
        session = self.session
        if session is not None and session.socket is not None:
            socket, session.socket = session.socket, None
            transport = socket._req.transport if socket._req is not None else None
            if transport is not None:
                transport.abort()

    async def _op(self, op: int, data: Any) -> None:
        session = self.session
        if session is not None and session.socket is not None:
            await self._send(session, {"op": op, "d": data, "s": None, "t": None})

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self.offline:
            return web.Response(status=503, text="upstream connect error")
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        compressor = zlib.compressobj() if request.query.get("compress") == "zlib-stream" else None
        hello = Session("", 0, socket=socket, compressor=compressor)
        await self._send(
            hello, {"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None}
        )
        session: Session | None = None
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            with self.lock:
                self.received.append(payload)
            op, data = payload.get("op"), payload.get("d")
            current = session or hello
            if op == 1:
                await self._send(current, {"op": 11, "d": None, "s": None, "t": None})
            elif op == 2:
                if data.get("token") != self.token:
                    await socket.close(code=4004, message=b"Authentication failed.")
                    break
                session = await self._identify(socket, compressor, int(data.get("intents", 0)))
            elif op == 6:
                session = await self._resume(hello, data)
                if session is None:
                    continue
        if session is not None and session.socket is socket:
            session.socket = None
        return socket

    async def _identify(
        self, socket: web.WebSocketResponse, compressor: Any, intents: int
    ) -> Session:
        self.identifies += 1
        session = Session(f"session-{next(_ids)}", intents, socket=socket, compressor=compressor)
        with self.lock:
            self.sessions[session.session_id] = session
            self.session = session
        ready = {
            "v": 10,
            "user": user(BOT_ID, BOT_NAME, bot=True),
            "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": session.session_id,
            "resume_gateway_url": f"ws://127.0.0.1:{self.port}/gateway",
            "application": {"id": str(BOT_ID), "flags": 0},
        }
        await self._dispatch("READY", ready)
        await self._dispatch("GUILD_CREATE", self._guild())
        return session

    async def _resume(self, hello: Session, data: dict[str, Any]) -> Session | None:
        session = self.sessions.get(str(data.get("session_id")))
        if (
            self.refuse_resume
            or session is None
            or data.get("token") != self.token
            or session is not self.session
        ):
            await self._send(hello, {"op": 9, "d": False, "s": None, "t": None})
            return None
        seq = int(data.get("seq") or 0)
        self.resumes.append(seq)
        session.socket, session.compressor = hello.socket, hello.compressor
        for payload in session.events[max(seq - self.resume_overlap, 0) :]:
            await self._send(session, payload)
        await self._dispatch("RESUMED", {})
        return session

    def _guild(self) -> dict[str, Any]:
        channel = {
            "id": str(GUILD_CHANNEL_ID),
            "type": 0,
            "guild_id": str(GUILD_ID),
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        }
        return {
            "id": str(GUILD_ID),
            "name": "Test Server",
            "icon": None,
            "owner_id": "1",
            "unavailable": False,
            "member_count": 3,
            "joined_at": _now(),
            "roles": [
                {
                    "id": str(GUILD_ID),
                    "name": "@everyone",
                    "permissions": "1024",
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                }
            ],
            "channels": [channel],
            "threads": [],
            "members": [
                {
                    "user": user(BOT_ID, BOT_NAME, bot=True),
                    "roles": [],
                    "joined_at": _now(),
                    "deaf": False,
                    "mute": False,
                    "flags": 0,
                }
            ],
            "emojis": [],
            "stickers": [],
            "features": [],
            "voice_states": [],
            "presences": [],
        }

    # -- the REST API --------------------------------------------------------------------

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path.startswith("/api/") and request.headers.get("Authorization") != (
            f"Bot {self.token}"
        ):
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        response: web.StreamResponse = await handler(request)
        return response

    async def _gateway_bot(self, _: web.Request) -> web.Response:
        return _json(
            {
                "url": f"ws://127.0.0.1:{self.port}/gateway",
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 14_400_000,
                    "max_concurrency": 1,
                },
            }
        )

    async def _me(self, _: web.Request) -> web.Response:
        return _json(user(BOT_ID, BOT_NAME, bot=True))

    async def _application(self, _: web.Request) -> web.Response:
        return _json(
            {
                "id": str(BOT_ID),
                "name": "Omega",
                "icon": None,
                "description": "",
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": user(1, "owner"),
                "verify_key": "0" * 64,
                "flags": 0,
                "team": None,
            }
        )

    async def _create_dm(self, request: web.Request) -> web.Response:
        recipient = int((await request.json())["recipient_id"])
        channel_id = self.dm_channels.setdefault(recipient, next(_ids))
        return _json(
            {
                "id": str(channel_id),
                "type": 1,
                "last_message_id": None,
                "recipients": [user(recipient, "someone")],
            }
        )

    async def _typing(self, request: web.Request) -> web.Response:
        with self.lock:
            self.typing.append(int(request.match_info["channel"]))
        return web.Response(status=204)

    async def _post_message(self, request: web.Request) -> web.Response:
        channel_id = int(request.match_info["channel"])
        files: dict[str, bytes] = {}
        if request.content_type.startswith("multipart/"):
            payload: dict[str, Any] = {}
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                assert isinstance(part, BodyPartReader)
                name = part.name or ""
                body = await part.read()
                if name == "payload_json":
                    payload = json.loads(body)
                else:
                    files[part.filename or name] = bytes(body)
        else:
            payload = await request.json()
        content = str(payload.get("content") or "")
        if len(content) > MAX_CONTENT:
            return _json(
                {
                    "message": "Invalid Form Body",
                    "code": 50035,
                    "errors": {
                        "content": {
                            "_errors": [
                                {
                                    "code": "BASE_TYPE_MAX_LENGTH",
                                    "message": "Must be 2000 or fewer in length.",
                                }
                            ]
                        }
                    },
                },
                status=400,
            )
        if not content and not files:
            return _json({"message": "Cannot send an empty message", "code": 50006}, status=400)
        sent = Sent(channel_id, content, files, payload, next(_ids))
        with self.lock:
            self.sent.append(sent)
        return _json(self._posted(sent))

    @staticmethod
    def _posted(sent: Sent) -> dict[str, Any]:
        """The message object of a message Omega posted."""
        return {
            "id": str(sent.message_id),
            "channel_id": str(sent.channel_id),
            "author": user(BOT_ID, BOT_NAME, bot=True),
            "content": sent.content,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
        }

    async def _messages(self, request: web.Request) -> web.Response:
        """A channel's history: the `limit` messages right after `after`, newest first."""
        channel_id = int(request.match_info["channel"])
        after = int(request.query.get("after", "0"))
        limit = min(int(request.query.get("limit", "50")), 100)
        with self.lock:
            later = [m for m in self.history.get(channel_id, []) if int(m["id"]) > after]
            self.history_reads.append((channel_id, after))
        page = [self._as_seen(self.session, m) for m in later[:limit]]
        return _json(list(reversed(page)))

    async def _cdn(self, request: web.Request) -> web.Response:
        with self.lock:
            found = self.files.get(request.path)
        if found is None:
            return web.Response(status=404)
        return web.Response(body=found[0], content_type=found[1])

    # -- running -------------------------------------------------------------------------

    async def _start(self) -> None:
        app = web.Application(middlewares=[self._auth], client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/api/v10/gateway/bot", self._gateway_bot)
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_post("/api/v10/users/@me/channels", self._create_dm)
        app.router.add_post("/api/v10/channels/{channel}/typing", self._typing)
        app.router.add_post("/api/v10/channels/{channel}/messages", self._post_message)
        app.router.add_get("/api/v10/channels/{channel}/messages", self._messages)
        app.router.add_get("/attachments/{path:.*}", self._cdn)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def _stop(self) -> None:
        for session in self.sessions.values():
            if session.socket is not None:
                await session.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> Self:
        self._thread.start()
        self._call(self._start())
        return self

    def __exit__(self, *exc: Any) -> None:
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
