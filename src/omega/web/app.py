"""The local web page: chat and the owner's dashboard, served inside `omega start`.

`prepare` runs before the event loop starts (checks the host, binds the socket so a port in
use is a clear error, makes the login link); `WebServer.serve` runs uvicorn as a task of
Omega's own loop. Imported only when `[web] enabled`, so other commands do not pay for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from omega.channels.web import WebChannel
from omega.errors import OmegaError
from omega.web.context import WebContext, templates
from omega.web.security import Guard, Sessions

if TYPE_CHECKING:
    from omega.config import Config
    from omega.gateway.gateway import Gateway
    from omega.memory.store import Store
    from omega.paths import OmegaPaths
    from omega.turn import PipelineDeps

log = logging.getLogger(__name__)
HERE = Path(__file__).parent


class WebConfigError(OmegaError, ValueError):
    """The [web] settings cannot be served as they are."""


def is_loopback(host: str) -> bool:
    """Whether `host` only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class IdConvertor(Convertor[int]):
    """A row id in a path: 1 to 18 digits (a longer one, past a 64-bit integer, is no page:
    404, not a database error)."""

    regex = "[0-9]{1,18}"

    def convert(self, value: str) -> int:
        """The id as an int."""
        return int(value)

    def to_string(self, value: int) -> str:
        """The id in a path."""
        return str(value)


register_url_convertor("id", IdConvertor())


def build_app(ctx: WebContext) -> Guard:
    """The ASGI app: every route behind the Guard (Host, session, POST-only changes, CSRF)."""
    from omega.web import actions, chat, pages

    routes = [
        Route("/", pages.overview),
        Route("/chat", chat.page),
        Route("/chat/send", chat.send, methods=["POST"]),
        Route("/chat/events", chat.events),
        Route("/chat/alerts", chat.alerts, methods=["POST"]),
        Route("/media/{name}", chat.media),
        Route("/limitations", pages.limitations),
        Route("/proposals", pages.proposals),
        Route("/proposals/{proposal_id:id}", pages.proposal),
        Route("/fragments", pages.fragments),
        Route("/evolution", pages.evolution),
        Route("/tasks", pages.tasks),
        Route("/people", pages.people),
        Route("/person", pages.person),
        Route("/conversations", pages.conversations),
        Route("/conversations/{conversation_id}", pages.conversation),
        Route("/audit", pages.audit),
        Route("/tools", pages.tools),
        Route("/health", pages.health),
        Route("/limitations/{limitation_id:id}/resolve", actions.resolve, methods=["POST"]),
        Route("/proposals/{proposal_id:id}/approve", actions.approve, methods=["POST"]),
        Route("/proposals/{proposal_id:id}/reject", actions.reject, methods=["POST"]),
        Route(
            "/evolution/recommendations/{recommendation_id}/propose",
            actions.propose_recommendation,
            methods=["POST"],
        ),
        Route(
            "/fragments/{fragment_id:id}/deactivate",
            actions.deactivate_fragment,
            methods=["POST"],
        ),
        Route(
            "/fragments/{fragment_id:id}/reactivate",
            actions.reactivate_fragment,
            methods=["POST"],
        ),
        Route("/tasks/{task_id}/cancel", actions.cancel_task, methods=["POST"]),
        Route("/person/fact/delete", actions.delete_fact, methods=["POST"]),
        Route("/person/purge", actions.purge, methods=["POST"]),
        Route("/person/quiet", actions.quiet, methods=["POST"]),
        Route("/people/approve", actions.approve_code, methods=["POST"]),
        Route("/people/deny", actions.deny_code, methods=["POST"]),
        Route("/people/revoke", actions.revoke_person, methods=["POST"]),
        Route("/logout", actions.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: _not_found})
    app.state.ctx = ctx
    web = ctx.deps.config.web
    return Guard(app, ctx.sessions, web.public_url, web.host.strip() or "127.0.0.1")


async def _not_found(request: Request, exc: Exception) -> Response:
    return Response("Not found.\n", status_code=404, media_type="text/plain")


class _Server(uvicorn.Server):
    """uvicorn inside Omega's loop: Omega, not uvicorn, handles SIGINT and SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebServer:
    """The page's server, prepared before the loop starts and served inside it."""

    def __init__(
        self, config: Config, paths: OmegaPaths, store: Store, sock: socket.socket, base_url: str
    ):
        from omega.turn import local_owner_id

        self.sock = sock
        self.base_url = base_url
        web = config.web
        links = web.public_url or base_url  # behind a TLS proxy, links name its address
        self.sessions = Sessions(paths.web_url, links, web.session_hours, store)
        self.channel = WebChannel(store, paths.web_media, local_owner_id())
        self.login_link = self.sessions.new_login_link()
        self._server: _Server | None = None

    async def serve(self, deps: PipelineDeps, gateway: Gateway) -> None:
        """Serve until `shutdown`; errors are logged, never raised into Omega."""
        ctx = WebContext(deps, gateway, self.channel, self.sessions, templates())
        config = uvicorn.Config(
            build_app(ctx),
            lifespan="off",
            access_log=False,  # a login URL carries its token; requests are not logged
            log_config=None,
            timeout_graceful_shutdown=3,
            proxy_headers=False,
        )
        self._server = _Server(config)
        try:
            await self._server.serve(sockets=[self.sock])
        except asyncio.CancelledError:
            raise
        except BaseException:  # uvicorn exits on some start failures; Omega goes on
            log.exception("the web page stopped with an error")

    def shutdown(self) -> None:
        """Ask the server to stop (open event streams end with the channel)."""
        if self._server is not None:
            self._server.should_exit = True


def prepare(config: Config, paths: OmegaPaths, store: Store) -> WebServer:
    """Check `[web]`, bind its socket and make the first login link (the root hands it the
    config and paths it loaded; the page imports nothing of the root).

    Raises WebConfigError for a non-loopback host without `allow_remote`, or a port that
    cannot be bound."""
    web = config.web
    host = web.host.strip() or "127.0.0.1"
    if not is_loopback(host):
        if not web.allow_remote:
            raise WebConfigError(
                f"[web] host = {host!r} is not a loopback address; the page is the owner's "
                "window into Omega. Set [web] allow_remote = true to serve it there anyway."
            )
        log.warning("the web page listens on %s: anyone who reaches it can try to log in", host)
    try:
        infos = socket.getaddrinfo(host, web.port, type=socket.SOCK_STREAM)
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        raise WebConfigError(f"cannot listen on {host}:{web.port}: {exc}") from None
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return WebServer(config, paths, store, sock, f"http://{shown}:{port}")
