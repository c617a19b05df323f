"""Telegram's webhook mode: Telegram POSTs each update to `[channel.telegram] webhook_url`.

For a fleet behind a load balancer: every replica listens on `webhook_listen` (a small HTTP
server of its own, plain HTTP behind the TLS-terminating proxy) and takes whatever update the
balancer hands it, so the channel is `shared` (no lease). Only one route exists there: POST
on the URL's path. A request without the right `X-Telegram-Bot-Api-Secret-Token` (the
`secret_token` given to `setWebhook`) is refused (401 missing, 403 wrong), logged and audited,
and never parsed. An accepted update goes through the same `Update` -> `IncomingMessage` path
as polling, with the same inbox id (chat and message id), so an update Telegram delivers again,
to this replica or another, is recognised by the inbox and answered once. The answer is 200
only once `submit` has put the message in the durable inbox; anything else makes Telegram
deliver the update again later. Telegram delivers nothing after an update until that one is
taken, so an update that could not be read `DROP_AFTER` times on this replica is answered 200
all the same: logged, and handed to `dropped` (audited, the owner told), so later messages
flow. One read but not put in the inbox (the store away) is never given up: nothing is lost.

Every replica calls `setWebhook` at start (it is idempotent: the same URL, secret and update
types); none deletes it at stop, since the others still serve it. A replica started in polling
mode deletes a webhook it finds set (`deleteWebhook`, pending updates kept), because Telegram
refuses `getUpdates` while one is set: the two modes never run at once.

Its own listener rather than a route of the web page: the page is the owner's dashboard, on
loopback behind a login, and optional; a proxy forwarding to this listener reaches one route
that needs the secret, and nothing of the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from telegram import Bot, Update
from telegram.error import RetryAfter, TelegramError

from omega.channels.base import Submit
from omega.channels.health import HEALTH_EVERY_SECS, HealthReporter
from omega.channels.telegram.api import retry_after_secs
from omega.config.channels import TelegramConfig
from omega.logs import register_secret
from omega.types import IncomingMessage

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name
MAX_BODY_BYTES = 1024 * 1024  # an update is JSON of a few KB; files are fetched by id
REFUSED_LOG_EVERY_SECS = 60.0  # refusals beyond the first in this window are counted, not logged
BACKOFF_FIRST_SECS = 1.0
BACKOFF_MAX_SECS = 60.0
DROP_AFTER = 3  # failed deliveries of one update before it is given up (answered 200)
FAILURES_KEPT = 1000  # update ids whose failures are remembered (the oldest are forgotten)

# Turns an update into the message it carries (None: not for Omega), files downloaded.
ToMessage = Callable[[Update], Awaitable[IncomingMessage | None]]
# Told of each refused request: why ("missing" or "wrong" secret token) and who sent it.
Refused = Callable[[str, str], Awaitable[None]]
# Told of each update given up after DROP_AFTER failures: its update_id, the tries, the error.
Dropped = Callable[[int, int, str], Awaitable[None]]


class Unread:
    """The updates that could not be read, in either mode: each is tried again until the
    DROP_AFTER-th failure gives it up (logged, told to `dropped`), so later updates flow."""

    def __init__(self, dropped: Dropped | None, mode: str) -> None:
        self._dropped = dropped
        self._mode = mode  # "webhook" or "polling", for the log line
        self._failures: dict[int, int] = {}  # update_id: failed reads so far

    async def given_up(self, update_id: int, exc: Exception) -> bool:
        """Count a failed read of `update_id`; at the DROP_AFTER-th, log it, tell `dropped`
        and say so (True): it is to be confirmed to Telegram unread."""
        tries = self._failures.pop(update_id, 0) + 1
        if tries < DROP_AFTER:
            self._failures[update_id] = tries  # re-inserted: the newest are kept longest
            while len(self._failures) > FAILURES_KEPT:
                del self._failures[next(iter(self._failures))]
            return False
        log.error(
            "telegram: %s update %d failed %d times; dropped so later ones flow",
            self._mode,
            update_id,
            tries,
            exc_info=exc,
        )
        if self._dropped is not None:
            try:
                await self._dropped(update_id, tries, repr(exc)[:300])
            except Exception:
                log.exception("telegram: the dropped update %d could not be reported", update_id)
        return True

    def read(self, update_id: int) -> None:
        """Forget the failures of an update that was read at last."""
        self._failures.pop(update_id, None)


def webhook_secret(config: TelegramConfig) -> str:
    """The secret token: the configured one, else one derived from the bot token (HMAC, so the
    same on every replica with that token, and the token cannot be read back from it)."""
    configured = config.webhook_secret.get_secret_value().strip()
    if configured:
        return configured
    token = config.bot_token.get_secret_value().strip().encode()
    return hmac.new(token, b"omega telegram webhook secret", hashlib.sha256).hexdigest()


def listen_address(listen: str) -> tuple[str, int]:
    """`"host:port"` (IPv6 as `"[::1]:8443"`) as a host and a port."""
    host, _, port = listen.strip().rpartition(":")
    return host.strip("[]"), int(port)


def webhook_path(url: str) -> str:
    """The path Telegram's POSTs arrive on: the webhook URL's own ("/" when it has none)."""
    return urlsplit(url).path or "/"


async def delete_webhook(bot: Bot) -> None:
    """Before polling: delete a webhook Telegram still has (pending updates are kept and come
    through getUpdates). Failures are logged; getUpdates then fails and is retried."""
    try:
        info = await bot.get_webhook_info()
        if not info.url:
            return
        await bot.delete_webhook(drop_pending_updates=False)
    except TelegramError as exc:
        log.warning("telegram: could not check or delete the webhook before polling: %s", exc)
        return
    log.info("telegram: the webhook %s was deleted; long polling from now on", info.url)


class _Server(uvicorn.Server):
    """uvicorn inside Omega's loop: Omega, not uvicorn, handles SIGINT and SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebhookReceiver:
    """One replica's webhook: its listener, the `setWebhook` registration, its health."""

    def __init__(
        self,
        bot: Bot,
        config: TelegramConfig,
        health: HealthReporter,
        refused: Refused | None = None,
        dropped: Dropped | None = None,
    ) -> None:
        self._bot = bot
        self.url = config.webhook_url
        self.listen = config.webhook_listen
        self.path = webhook_path(config.webhook_url)
        self._secret = webhook_secret(config)
        register_secret(self._secret)  # never in a log line
        self._health = health
        self._refused = refused
        self._refusals = 0  # refused since the last line logged about them
        self._refusal_logged = 0.0
        self._unread = Unread(dropped, "webhook")
        self.registered = False  # setWebhook was accepted
        self.port = 0  # the port listened on, once bound

    async def run(self, to_message: ToMessage, submit: Submit, stop: asyncio.Event) -> None:
        """Listen, register the webhook, and serve until `stop`."""
        host, port = listen_address(self.listen)
        try:
            sock = _bind(host, port)
        except OSError as exc:
            log.error(
                "telegram: cannot listen for the webhook on %s (%s); check [channel.telegram] "
                "webhook_listen. Telegram is not received on this replica.",
                self.listen,
                exc,
            )
            self._health.report("webhook failing", f"cannot listen on {self.listen}: {exc}")
            return
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(to_message, submit),
            lifespan="off",
            access_log=False,
            log_config=None,
            timeout_graceful_shutdown=3,
            proxy_headers=False,
        )
        server = _Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        log.info("telegram: webhook listening on %s:%d%s", host, self.port, self.path)
        try:
            await self._register(stop)
            while not stop.is_set() and not serving.done():
                self._report()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), HEALTH_EVERY_SECS / 2)
            if serving.done() and not stop.is_set():
                log.error("telegram: the webhook listener stopped; this replica no longer receives")
                self._health.report("webhook failing", "the listener stopped")
        finally:
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(serving, 10)
            sock.close()

    def _report(self) -> None:
        if self.registered:
            self._health.report("webhook", self.url)

    async def _register(self, stop: asyncio.Event) -> None:
        """setWebhook with this URL and secret, retried with backoff until Telegram takes it."""
        backoff = BACKOFF_FIRST_SECS
        while not stop.is_set():
            try:
                await self._bot.set_webhook(
                    self.url,
                    allowed_updates=["message"],
                    secret_token=self._secret,
                    drop_pending_updates=False,
                )
            except RetryAfter as exc:
                backoff = retry_after_secs(exc)
            except TelegramError as exc:
                log.warning("telegram: setWebhook failed (%s); retrying in %.0f s", exc, backoff)
                self._health.report("webhook failing", f"setWebhook: {str(exc)[:200]}")
            else:
                self.registered = True
                log.info("telegram: webhook set to %s", self.url)
                self._report()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_SECS)

    # -- the listener ----------------------------------------------------------------------

    def app(self, to_message: ToMessage, submit: Submit) -> Starlette:
        """The ASGI app: POST on the webhook's path, nothing else."""

        async def endpoint(request: Request) -> Response:
            return await self._endpoint(request, to_message, submit)

        return Starlette(
            routes=[Route(self.path, endpoint, methods=["POST"])],
            exception_handlers={404: _not_found},
        )

    async def _endpoint(self, request: Request, to_message: ToMessage, submit: Submit) -> Response:
        """Check the secret, parse the update, hand its message to `submit`: 200 once it is in
        the inbox (or not for Omega), 500 when it could not be (Telegram delivers it again)."""
        given = request.headers.get(SECRET_HEADER)
        if given is None or not hmac.compare_digest(given.encode(), self._secret.encode()):
            why = "missing" if given is None else "wrong"
            await self._refuse(why, _peer(request))
            status = 401 if given is None else 403
            return PlainTextResponse("Unauthorized.\n", status_code=status)
        body = await _read_body(request)
        if body is None:
            return PlainTextResponse("Too large.\n", status_code=413)
        try:
            data = json.loads(body)
            update = Update.de_json(data, self._bot)
        except Exception as exc:  # not JSON, or JSON that is not an Update
            log.warning("telegram: a webhook request that is not an update was dropped: %s", exc)
            return PlainTextResponse("Not an update.\n", status_code=400)
        try:
            incoming = await to_message(update)
        except Exception as exc:  # an update it cannot read: given up after DROP_AFTER tries
            if await self._unread.given_up(update.update_id, exc):
                return PlainTextResponse("Dropped.\n", status_code=200)
            log.exception("telegram: webhook update %d not read", update.update_id)
            return PlainTextResponse("Not accepted; try again.\n", status_code=500)
        self._unread.read(update.update_id)
        try:
            if incoming is not None:
                await submit(incoming)
        except Exception:
            # Not in the inbox (the store is away): never given up, so no message is lost;
            # Telegram delivers it again (here or to another replica).
            log.exception("telegram: webhook update %d not accepted", update.update_id)
            return PlainTextResponse("Not accepted; try again.\n", status_code=500)
        return PlainTextResponse("", status_code=200)

    async def _refuse(self, why: str, peer: str) -> None:
        """Log (the first in each minute, then a count) and audit a refused request."""
        self._refusals += 1
        now = time.monotonic()
        if now - self._refusal_logged >= REFUSED_LOG_EVERY_SECS:
            log.warning(
                "telegram: webhook request refused (%s secret token) from %s; %d refused "
                "since the last such line",
                why,
                peer,
                self._refusals,
            )
            self._refusals, self._refusal_logged = 0, now
        if self._refused is not None:
            try:
                await self._refused(why, peer)
            except Exception:
                log.debug("telegram: a refused webhook request could not be audited", exc_info=True)


def _bind(host: str, port: int) -> socket.socket:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def _read_body(request: Request) -> bytes | None:
    """The request's body, or None past MAX_BODY_BYTES (read no further)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _peer(request: Request) -> str:
    """Who sent a request, as far as this listener can tell (the proxy's own address, and the
    address the proxy says it forwarded for, unverified)."""
    peer = request.client.host if request.client is not None else "unknown"
    forwarded = request.headers.get("x-forwarded-for", "")
    return f"{peer} (forwarded for {forwarded[:100]})" if forwarded else peer


async def _not_found(request: Request, exc: Any) -> Response:
    return PlainTextResponse("Not found.\n", status_code=404)
