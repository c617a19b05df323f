"""Who may use the page: a one-time login link, a session cookie, and a CSRF check.

- Login: `GET /?token=...` with the token from `$OMEGA_HOME/web.url` (0600). A token works
  once (on any replica serving the page) and for a day; then a fresh one is written to web.url
  (so the owner, who can read that file, can always log in again, and a link seen in a
  terminal or a history is worth nothing).
- Session: a random id in an HttpOnly, SameSite=Strict cookie; sessions live in the store
  (omega.memory.web_sessions, digests only), so a login holds on every replica serving the
  page and across restarts, and end after `[web] session_hours` without use (an open event
  stream ends with its session: omega.web.chat).
- A request whose `Host` is not one of the page's own addresses (omega.web.hosts: DNS
  rebinding) gets 400 before anything else, the login link included.
- Every request without a valid session gets 401, whatever its path (static files too). A
  cookie that is no session costs the database a read, never a write: a malformed one not even
  that, and only a live session's use is noted (at most once a minute).
- Only GET and HEAD read; everything that changes state is POST, and a POST must come from
  the page itself: its Origin (or Referer) is this server's, and it carries the session's
  CSRF token (`X-CSRF-Token` header or `csrf_token` form field). Otherwise 403.
- Behind a TLS proxy (`[web] public_url`): login links name that address, a POST from its
  origin is the page's own too, and the cookie is `Secure` (never sent over plain http).
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from omega.logs import register_secret
from omega.paths import write_private
from omega.web.hosts import HostCheck, RefusalLog

if TYPE_CHECKING:
    from omega.memory import Store

log = logging.getLogger(__name__)

COOKIE = "omega_session"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
MAX_BODY = 12 * 1024 * 1024  # an image plus a message; anything larger is refused (413)
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")  # what secrets.token_urlsafe(32) makes

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        b"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # "same-origin", not "no-referrer": with no-referrer a browser sends `Origin: null` on POST.
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


@dataclass(frozen=True)
class Session:
    """One logged-in browser."""

    id: str
    csrf: str


class Sessions:
    """Login tokens and sessions of the owner's page, in the store: every replica serving the
    page accepts a token or a session another one made."""

    def __init__(self, url_file: Path, base_url: str, session_hours: float, store: Store):
        self.url_file = url_file
        self.base_url = base_url.rstrip("/")
        self.max_idle = session_hours * 3600
        self.store = store
        self._token = ""  # this page's current login token

    def new_login_link(self) -> str:
        """Make a fresh one-time token in place of this page's last one (the other replicas'
        stay valid), write its link to web.url (0600) and return it."""
        token = secrets.token_urlsafe(32)
        register_secret(token)  # never in a log line
        self.store.web_token_replace(token, self._token)
        self._token = token
        link = f"{self.base_url}/?token={token}"
        write_private(self.url_file, link + "\n")
        return link

    async def login(self, token: str) -> Session | None:
        """A new session for a valid token (which is then used up); None otherwise. When this
        page's own token was used, or is no longer valid, a fresh link goes to web.url."""
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        store = self.store
        ok = bool(token) and await store.call(store.web_login, token, session.id, session.csrf)
        if token == self._token or not await store.call(store.web_token_valid, self._token):
            await store.call(self.new_login_link)
        if not ok:
            return None
        register_secret(session.id)
        return session

    async def get(self, session_id: str) -> Session | None:
        """The live session of this cookie value, or None. A value that is no session costs
        a read (a malformed one not even that), never a write: only a live session whose use
        was last noted over a minute ago is written (its use noted, expired ones dropped)."""
        if not SESSION_ID.fullmatch(session_id):
            return None
        store = self.store
        found = await store.call(store.web_session_peek, session_id, self.max_idle)
        if found is None:
            return None
        csrf, stale = found
        if stale:
            fresh = await store.call(store.web_session, session_id, self.max_idle)
            if fresh is None:  # logged out or expired in between
                return None
            csrf = fresh
        return Session(session_id, csrf)

    async def alive(self, session_id: str) -> bool:
        """Whether this session is still live (not logged out, not expired); a read only, so
        asking does not keep it alive."""
        store = self.store
        return await store.call(store.web_session_peek, session_id, self.max_idle) is not None

    async def logout(self, session_id: str) -> None:
        """End one session."""
        await self.store.call(self.store.web_logout, session_id)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return ""


def _cookie(scope: Scope, name: str) -> str:
    for part in _header(scope, b"cookie").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


def _origin_of(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def cookie_header(session: Session, secure: bool = False) -> bytes:
    """The Set-Cookie value that starts a session (`Secure` when the page is served over
    TLS: `[web] public_url`)."""
    flags = "; Secure" if secure else ""
    return f"{COOKIE}={session.id}; HttpOnly; SameSite=Strict; Path=/{flags}".encode()


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = text.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware in front of every route: Host, login, session, POST-only changes, CSRF."""

    def __init__(
        self,
        app: ASGIApp,
        sessions: Sessions,
        public_url: str = "",
        bind_host: str = "127.0.0.1",
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.hosts = HostCheck(bind_host, public_url)
        self.refusals = RefusalLog()
        # The page's address behind a TLS proxy ([web] public_url): a POST from there is the
        # page's own (the server itself sees plain http), and the cookie is Secure.
        self.public_origin = _origin_of(public_url) if public_url else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let a request through only for this page's own Host, with a valid session (and,
        for POST, a CSRF proof)."""
        if scope["type"] != "http":  # lifespan is off; websockets are not served
            return
        host = _header(scope, b"host")
        if not self.hosts.allows(host, scope.get("server")):
            unlogged = self.refusals.record(host)
            if unlogged is not None:
                log.warning(
                    "web: refused a request for the unknown host %.80r%s",
                    host,
                    f" (and {unlogged} more since the last line)" if unlogged else "",
                )
            await _plain(send, 400, "Unknown host: this page answers at its own address.\n", [])
            return
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        if scope["path"] == "/" and "token" in query:
            await self._login(query["token"][0], send)
            return
        session = await self.sessions.get(_cookie(scope, COOKIE))
        if session is None:
            await _plain(
                send, 401, "Not logged in. Open the link in $OMEGA_HOME/web.url to log in.\n", []
            )
            return
        method = scope["method"]
        if method not in ("GET", "HEAD", "POST"):
            await _plain(send, 405, "Method not allowed.\n", [(b"allow", b"GET, HEAD, POST")])
            return
        if method == "POST":
            body = await _read_body(receive)
            if body is None:
                await _plain(send, 413, "Request too large.\n", [])
                return
            refusal = self._csrf_refusal(scope, session, body)
            if refusal:
                log.warning("web: refused a POST to %.200r: %s", scope["path"], refusal)
                await _plain(send, 403, f"Refused: {refusal}.\n", [])
                return
            receive = _replay(body, receive)
        scope.setdefault("state", {})["session"] = session
        await self.app(scope, receive, _with_headers(send))

    async def _login(self, token: str, send: Send) -> None:
        session = await self.sessions.login(token)
        if session is None:
            log.warning("web: a login with a wrong or used token was refused")
            await _plain(
                send,
                401,
                "This login link is not valid (each link works once). Open the "
                "current link in $OMEGA_HOME/web.url.\n",
                [],
            )
            return
        log.info("web: a page logged in")
        headers = [
            (b"location", b"/"),
            (b"set-cookie", cookie_header(session, secure=bool(self.public_origin))),
            (b"content-length", b"0"),
            *SECURITY_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    def _csrf_refusal(self, scope: Scope, session: Session, body: bytes) -> str:
        """Why this POST is not the page's own ("" when it is)."""
        host = _header(scope, b"host")
        own = f"{scope.get('scheme', 'http')}://{host}"
        origin = _header(scope, b"origin") or _origin_of(_header(scope, b"referer"))
        if not origin:
            return "no Origin or Referer"
        if origin not in (own, self.public_origin):
            return f"foreign origin {origin!r}"
        token = _header(scope, CSRF_HEADER.encode())
        if not token and _header(scope, b"content-type").startswith(
            "application/x-www-form-urlencoded"
        ):
            values = parse_qs(body.decode("utf-8", "replace")).get(CSRF_FIELD, [""])
            token = values[0]
        if not token or not hmac.compare_digest(token.encode(), session.csrf.encode()):
            return "missing or wrong CSRF token"
        return ""


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, original: Receive) -> Receive:
    """The body already read, then the connection's own events (its disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await original()

    return receive


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
        await send(message)

    return wrapped
