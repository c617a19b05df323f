"""What the wire fakes share: a script of steps, recorded requests, planning calls kept apart,
and the HTTP server's lifecycle. Each fake adds only its wire format."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, Self, TypeVar

from omega.gateway.routing import PLANNER_TAG


class ScriptStep(Protocol):
    """A scripted answer: only what script selection looks at."""

    @property
    def planner(self) -> bool: ...

    @property
    def match(self) -> str: ...


class Recorded(Protocol):
    """A recorded request: only what script selection looks at."""

    @property
    def last_user_text(self) -> str: ...


S = TypeVar("S", bound=ScriptStep)
R = TypeVar("R", bound=Recorded)


class ScriptedServer(Generic[S, R]):
    """Steps are popped in order: `planner=True` ones answer Omega's planning calls (others get
    {"kind": "direct"}); `match` restricts a step to requests whose user text contains it; an
    empty script echoes the user's text."""

    def __init__(self, make_step: Callable[..., S]) -> None:
        self._make_step = make_step
        self.script: list[S] = []
        self.requests: list[R] = []
        # Omega's classify-and-route calls, kept apart so tests about replies see only replies.
        self.planner_requests: list[R] = []
        self.default_delay = 0.0
        self.planner_delay = 0.0  # planning calls are instant unless set (benchmarks set it)
        # The status of every unscripted answer: set it to 500 for a server that is down.
        self.default_status = 200
        self._lock = threading.Lock()
        # How many slow answers were being worked on at once, at most (concurrency tests).
        self.in_flight = 0
        self.max_in_flight = 0
        # Client sockets: accepted in all, open now, and open at once at most (pool tests).
        self.connections = 0
        self.open_connections = 0
        self.max_open_connections = 0
        self._sockets: set[Any] = set()  # the accepted ones still open (`go_away` drops them)

    def enter(self) -> None:
        """A slow answer starts."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        """A slow answer is done."""
        with self._lock:
            self.in_flight -= 1

    def record(self, request: R) -> tuple[S, bool]:
        """Record a request and pick its step; also says whether it was a planning call."""
        with self._lock:
            if PLANNER_TAG in request.last_user_text:
                self.planner_requests.append(request)
                return self._next_planner_step(), True
            self.requests.append(request)
            return self._next_step(request), False

    def _next_planner_step(self) -> S:
        for index, step in enumerate(self.script):
            if step.planner:
                return self.script.pop(index)
        return self._make_step(text='{"kind": "direct"}', status=self.default_status)

    def _next_step(self, request: R) -> S:
        for index, step in enumerate(self.script):
            if step.planner:
                continue
            if not step.match or step.match in request.last_user_text:
                return self.script.pop(index)
        return self._make_step(text=f"echo: {request.last_user_text}", status=self.default_status)

    def go_away(self) -> None:
        """The provider goes away: the port is closed (new connections are refused) and every
        open connection is dropped (a keep-alive client sees its socket closed)."""
        import socket

        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _opened(self) -> None:
        with self._lock:
            self.connections += 1
            self.open_connections += 1
            self.max_open_connections = max(self.max_open_connections, self.open_connections)

    def _closed(self) -> None:
        with self._lock:
            self.open_connections -= 1

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        fake = self

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024  # a burst of a thousand callers is not refused

            def process_request(self, request: Any, client_address: Any) -> None:
                fake._opened()
                with fake._lock:
                    fake._sockets.add(request)
                super().process_request(request, client_address)

            def shutdown_request(self, request: Any) -> None:
                with fake._lock:
                    fake._sockets.discard(request)
                super().shutdown_request(request)
                fake._closed()

        self._server = Server(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        """http://host:port of the running server."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
