"""The Slack channel: Bolt for Python in Socket Mode in, the Web API out.

Exactly once: Bolt runs with `process_before_response`, so an event is acknowledged to Slack
only after its listener returned, and the listener returns once `submit` has made the message
durable in the inbox (with its files downloaded). A crash before that leaves the event
unacknowledged and Slack delivers it again; a crash after it is answered from the inbox after
the restart. Retries and the `message` twin of an `app_mention` carry the same
`slack:<team>:<channel>:<ts>` id (events.py), which the inbox answers once. `submit` returns
long before the answer is written, so acknowledgements stay within Slack's three seconds.

Nothing of a refused stranger is kept: a thread is followed once Omega has answered in it
with anything but a refusal (a stranger's mention makes no thread followed), and the display
names looked up are a bounded cache in memory only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import OrderedDict
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from omega.channels import inbound
from omega.channels.base import Submit
from omega.channels.health import HealthReporter
from omega.channels.slack.config import SlackConfig
from omega.channels.slack.events import Addressed, addressed, conversation_thread, parse_target
from omega.channels.slack.mrkdwn import split_mrkdwn
from omega.channels.slack.state import SlackState
from omega.text import scrub
from omega.types import Attachment, IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

NAME = "slack"
BACKOFF_SECS = (1.0, 5.0, 30.0, 120.0)  # waits after a failed start, the last repeated
NAMES_KEPT = 500  # display names remembered, the least recently used forgotten first
# auth.test errors that no retry will mend: the token is wrong, revoked or its app removed.
TOKEN_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "not_allowed_token_type",
    }
)
_PHOTO_TYPES = (
    (b"\x89PNG\r\n\x1a\n", "photo.png"),
    (b"\xff\xd8\xff", "photo.jpg"),
    (b"GIF8", "photo.gif"),
    (b"RIFF", "photo.webp"),
)


def _refused(exc: SlackApiError) -> bool:
    """Whether Slack refused the token itself (no retry will mend that)."""
    return exc.response.get("error") in TOKEN_ERRORS


def _photo_name(data: bytes) -> str:
    return next((name for magic, name in _PHOTO_TYPES if data.startswith(magic)), "image.png")


def _kind(mime: str, subtype: str) -> Literal["image", "document", "audio", "video"]:
    if mime.startswith("image/"):
        return "image"
    if mime.startswith("audio/") or subtype == "slack_audio":
        return "audio"  # a voice clip: transcribed by the pipeline
    if mime.startswith("video/"):
        return "video"
    return "document"


class SlackChannel:
    """Receives DMs, mentions and followed threads over Socket Mode; answers in mrkdwn."""

    name = NAME

    def __init__(
        self,
        config: SlackConfig,
        bot_token: str,
        app_token: str,
        state: SlackState,
        health: HealthReporter,
        dropped: inbound.Dropped | None = None,
    ) -> None:
        self.config = config
        self._dropped = dropped  # told of a message given up unread (audited, owner told)
        self.state = state
        self.health = health
        self._bot_token = bot_token
        self._app_token = app_token
        self.client = AsyncWebClient(token=bot_token, base_url=self._api_url())
        self.client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=2))
        self._stop = asyncio.Event()
        self._submit: Submit | None = None
        self._saving = asyncio.Lock()  # one change and save of the state at a time
        self._names: OrderedDict[str, str] = OrderedDict()  # user id -> display name
        self.team = ""
        self.bot_user_id = ""
        self.bot_name = ""

    def _api_url(self) -> str:
        url = self.config.api_url.strip()
        return url if url.endswith("/") else url + "/"

    # -- receiving -------------------------------------------------------------------------

    async def run(self, submit: Submit) -> None:
        """Check the bot token, open the Socket Mode connection, serve until `stop`."""
        self._submit = submit
        self.health.report("starting")
        # Built at start, run when this replica took the channel over: follow the threads
        # the last leader left in the store, not those known when it was built.
        await asyncio.to_thread(self.state.refresh)
        failures = 0
        while not self._stop.is_set():
            try:
                if not await self._authenticate():
                    return
                handler = await self._open()
            except SlackApiError as exc:
                if _refused(exc):  # auth.test passed: it is the app-level token
                    log.error(
                        "slack: the app-level token was refused (%s); check [channel.slack] "
                        "app_token or SLACK_APP_TOKEN (xapp-, with connections:write) and that "
                        "Socket Mode is on. The Slack channel is not started.",
                        exc.response.get("error"),
                    )
                    self.health.report("token rejected", "check app_token or SLACK_APP_TOKEN")
                    return
                await self._failed(exc, failures)
                failures += 1
                continue
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                await self._failed(exc, failures)
                failures += 1
                continue
            failures = 0
            try:
                log.info("slack: connected as @%s (%s)", self.bot_name, self.team)
                self.health.report("running")
                await self._stop.wait()
            finally:
                with contextlib.suppress(Exception):
                    await handler.close_async()  # type: ignore[no-untyped-call]
        self.health.report("stopped")

    async def _failed(self, exc: BaseException, failures: int) -> None:
        detail = str(exc)[:300]
        log.warning("slack: cannot connect (%s)", detail)
        self.health.report("failed", detail)
        await self._sleep(BACKOFF_SECS[min(failures, len(BACKOFF_SECS) - 1)])

    async def _open(self) -> AsyncSocketModeHandler:
        """The Socket Mode connection (apps.connections.open, then the websocket), open."""
        # The SDK retries a refused app-level token forever, silently: ask once first, so a
        # wrong token is reported (the URL it gives is left to expire).
        await self.client.apps_connections_open(app_token=self._app_token)
        handler = AsyncSocketModeHandler(self._app(), self._app_token)
        handler.client.message_listeners.append(self._on_socket_message)
        try:
            await handler.connect_async()  # type: ignore[no-untyped-call]
        except BaseException:
            with contextlib.suppress(Exception):
                await handler.close_async()  # type: ignore[no-untyped-call]
            raise
        return handler

    async def _authenticate(self) -> bool:
        """auth.test: who Omega is in which workspace; False when the token is refused."""
        try:
            auth = await self.client.auth_test()
        except SlackApiError as exc:
            if _refused(exc):
                log.error(
                    "slack: the bot token was refused (%s); check [channel.slack] bot_token "
                    "or SLACK_BOT_TOKEN. The Slack channel is not started.",
                    exc.response.get("error"),
                )
                self.health.report("token rejected", "check bot_token or SLACK_BOT_TOKEN")
                return False
            raise
        self.team = str(auth.get("team_id") or "")
        self.bot_user_id = str(auth.get("user_id") or "")
        self.bot_name = str(auth.get("user") or "")
        return True

    async def _on_socket_message(
        self, client: object, message: dict[Any, Any], raw: str | None
    ) -> None:
        if message.get("type") == "hello":  # a connection (first or renewed) is up
            self.health.report("running")

    def _app(self) -> AsyncApp:
        app = AsyncApp(client=self.client, process_before_response=True, logger=log)

        async def on_event(body: dict[str, Any]) -> None:
            await self._on_event(body)

        async def ignore() -> None:
            """Acknowledged, so that Slack does not deliver it again."""

        app.event("message")(on_event)
        app.event("app_mention")(on_event)
        app.event(re.compile(".+"))(ignore)  # events the app was subscribed to but Omega skips
        return app

    async def _on_event(self, body: dict[str, Any]) -> None:
        """Hand the message an event carries to Omega; returns once it is durable, or given up
        unread (then Bolt acknowledges the event). A stop first leaves it to Slack's retry."""
        event = body.get("event")
        if not isinstance(event, dict) or self._submit is None:
            return
        team = str(body.get("team_id") or self.team)
        follow = self.config.follow_threads
        found = addressed(event, team, self.bot_user_id, self.state.followed if follow else set())
        if found is None:
            return
        submit = self._submit
        # Slack delivers an unacknowledged event only three times more, minutes apart: one
        # read is stored here however long the store is away; one unreadable is given up
        # (audited, the owner told) and acknowledged. A stop leaves it unacknowledged.
        ident = found.inbox_id
        pause, stop = self._sleep, self._stop
        _, incoming = await inbound.read(
            NAME, ident, lambda: self._incoming(found), pause, stop, self._dropped
        )
        if incoming is not None:
            await inbound.store(NAME, incoming, submit, pause, stop)

    async def _incoming(self, found: Addressed) -> IncomingMessage:
        attachments, notes = await self._files(found.files)
        text = "\n".join(part for part in (*notes, found.text) if part)
        return IncomingMessage(
            channel=NAME,
            sender_id=found.user,
            sender_name=scrub(await self._name_of(found.user)),
            text=scrub(text),
            is_group=found.is_group,
            reply_target=found.reply_target,
            attachments=attachments,
            id=found.inbox_id,
            thread=conversation_thread(found.reply_target),
            assurance="platform",  # Slack authenticated the member
        )

    async def _name_of(self, user: str) -> str:
        """The person's display name (users.info, remembered); "" when Slack does not say."""
        if user in self._names:
            self._names.move_to_end(user)
            return self._names[user]
        try:
            info = await self.client.users_info(user=user)
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.info("slack: users.info %s failed: %s", user, exc)
            return ""
        person = info.get("user") or {}
        profile = person.get("profile") or {}
        name = str(
            profile.get("display_name") or profile.get("real_name") or person.get("name") or ""
        )
        self._names[user] = name
        while len(self._names) > NAMES_KEPT:
            self._names.popitem(last=False)
        return name

    async def _files(
        self, files: tuple[dict[str, object], ...]
    ) -> tuple[list[Attachment], list[str]]:
        """The files of a message, downloaded with the bot token; notes for those that could
        not be (too large, refused, from a host that is not Slack's)."""
        attachments: list[Attachment] = []
        notes: list[str] = []
        for file in files:
            name = str(file.get("name") or "file")
            mime = str(file.get("mimetype") or "")
            kind = _kind(mime, str(file.get("subtype") or ""))
            url = str(file.get("url_private_download") or file.get("url_private") or "")
            size = file.get("size")
            label = "voice clip" if kind == "audio" else name
            if isinstance(size, int) and size > self.config.max_file_bytes:
                notes.append(f"[The file {label} sent here is too large for me to open.]")
                continue
            data = await self._download(url) if url and self._trusted(url) else None
            if data is None:
                notes.append(f"[The file {label} sent here could not be downloaded.]")
                continue
            attachments.append(Attachment(kind=kind, data=data, name=name, mime_type=mime))
        return attachments, notes

    def _trusted(self, url: str) -> bool:
        """Whether the bot token may be sent to `url`: Slack's own hosts over https, or the
        configured API's host (a double on loopback)."""
        parts, api = urlsplit(url), urlsplit(self._api_url())
        host = (parts.hostname or "").lower()
        if (parts.scheme, parts.netloc) == (api.scheme, api.netloc):
            return True
        return parts.scheme == "https" and (host == "slack.com" or host.endswith(".slack.com"))

    async def _download(self, url: str) -> bytes | None:
        limit = self.config.max_file_bytes
        headers = {"Authorization": f"Bearer {self._bot_token}"}
        try:
            timeout = aiohttp.ClientTimeout(total=60)
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.get(url, headers=headers, allow_redirects=False) as response,
            ):
                if response.status != 200:
                    log.warning("slack: file download answered %d", response.status)
                    return None
                data = await response.content.read(limit + 1)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning("slack: file download failed: %s", exc)
            return None
        return data if len(data) <= limit else None

    # -- sending ---------------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> None:
        """A photo (files.uploadV2) and the text as mrkdwn, split to Slack's length limit,
        in the thread the target names. The thread is followed first: a person who answers
        the moment the post lands must find it followed."""
        channel, thread_ts = parse_target(message.target)
        await self._follow(message, channel, thread_ts)
        if message.photo is not None:
            await self.client.files_upload_v2(
                channel=channel,
                thread_ts=thread_ts or None,
                content=message.photo,
                filename=_photo_name(message.photo),
            )
        for piece in split_mrkdwn(message.text):
            await self.client.chat_postMessage(
                channel=channel,
                text=piece,
                thread_ts=thread_ts or None,
                mrkdwn=True,
                unfurl_links=False,
            )

    async def _follow(self, message: OutgoingMessage, channel: str, thread_ts: str) -> None:
        """Follow a channel's thread Omega has answered in (a refusal is no answer: a
        stranger's mention leaves nothing behind)."""
        if not (self.config.follow_threads and thread_ts) or message.kind == "denied":
            return
        if channel.startswith("D"):  # a direct chat is answered whole, threads and all
            return
        async with self._saving:
            if self.state.follow((channel, thread_ts)):
                await asyncio.to_thread(self.state.save)

    async def send_typing(self, target: str) -> None:
        """Slack shows no typing indicator for apps outside its AI assistant threads."""

    # -- stopping --------------------------------------------------------------------------

    async def stop(self) -> None:
        """End `run` (the socket is closed on the way out)."""
        self._stop.set()

    async def _sleep(self, secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), secs)
