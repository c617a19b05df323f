"""The Telegram channel: Bot API long polling in, Markdown rendered as Telegram HTML out.

Receiving is a `getUpdates` loop of our own rather than python-telegram-bot's Application, so
an update is confirmed to Telegram (the next call's `offset`) only after `submit` has put its
message in the durable inbox. Messages carry a stable id (chat and message id), so an update
seen again after a crash is recognised by the inbox and not handled twice. Photos, documents
and voice notes are downloaded before `submit`, so their bytes are in the inbox too.

Edited messages are ignored on purpose (only `message` updates are asked for): the first
version has already been answered, and answering an edit again would surprise more often than
it helps. A forwarded message is someone else's words: its text comes after a
`[Forwarded from "<name>"]:` label, so it reads as a quotation and is never taken as a command
of the person who forwarded it.

With `[channel.telegram] webhook_url` set, Telegram POSTs the updates instead (webhook.py):
the same `_incoming` and the same inbox ids, on every replica, and no polling.

One module because receiving and sending go through one `Bot`, one wrapper for Telegram's
flood waits and errors (`_call`) and one stop signal, which the poll loop and every send share;
the Markdown to Telegram HTML rendering is format.py, file downloads and the command menu
api.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from telegram import (
    Bot,
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    Update,
)
from telegram.constants import ChatAction, ChatType, MessageEntityType, ParseMode
from telegram.error import BadRequest, InvalidToken, RetryAfter, TelegramError

from omega.channels.base import Submit
from omega.channels.health import HealthReporter
from omega.channels.telegram.api import bot_commands, download_attachments, retry_after_secs
from omega.channels.telegram.format import MAX_CAPTION_UNITS, render_html
from omega.channels.telegram.webhook import (
    Dropped,
    Refused,
    Unread,
    WebhookReceiver,
    delete_webhook,
)
from omega.channels.text import split_text, utf16_len
from omega.config.channels import TelegramConfig
from omega.errors import OmegaError
from omega.text import literal, scrub
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

NAME = "telegram"
POLL_TIMEOUT_SECS = 30
BACKOFF_FIRST_SECS = 1.0
BACKOFF_MAX_SECS = 60.0
SEND_ATTEMPTS = 3  # a send refused with 429 is retried after `retry_after` this many times
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # the Bot API's own getFile limit
QUOTE_CHARS = 500  # how much of a replied-to message reaches the context
NAME_CHARS = 60  # how much of an author's name (a quote's, a forward's) reaches the context

T = TypeVar("T")


def message_id(message: Message) -> str:
    """A stable inbox id for a Telegram message (the same update seen twice gives the same)."""
    return f"telegram:{message.chat_id}:{message.message_id}"


class TelegramChannel:
    """Long-polls the Bot API (or takes its webhook's POSTs) and hands each message to the
    gateway; sends replies as HTML."""

    # Any replica of Omega can send on the Bot API (issue 30), whichever one received.
    answers_from_any_replica = True

    def __init__(
        self,
        config: TelegramConfig,
        health_file: Path | None = None,
        poll_timeout: int = POLL_TIMEOUT_SECS,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
        refused: Refused | None = None,
        dropped: Dropped | None = None,
    ) -> None:
        self._token = config.bot_token.get_secret_value().strip()
        self._api_url = config.api_url.rstrip("/")
        self._poll_timeout = poll_timeout
        self._max_download = max_download_bytes
        self._health = HealthReporter(
            health_file, lambda: f"@{self.username}" if self.username else ""
        )
        self.bot = Bot(
            self._token,
            base_url=f"{self._api_url}/bot",
            base_file_url=f"{self._api_url}/file/bot",
        )
        self._stop = asyncio.Event()
        self.username = ""  # the bot's @username once getMe answered
        self.bot_id = 0
        self.healthy = False  # polling works (the last getUpdates succeeded)
        # Webhook mode: every replica receives what the load balancer hands it (no lease).
        self.webhook = (
            WebhookReceiver(self.bot, config, self._health, refused, dropped)
            if config.webhook_url
            else None
        )
        self.shared = self.webhook is not None
        self._unread = Unread(dropped, "polling")

    @property
    def name(self) -> str:
        return NAME

    # -- receiving -----------------------------------------------------------------------

    async def run(self, submit: Submit) -> None:
        """Check the token, publish the commands, then poll (or serve the webhook) until
        `stop`."""
        self._health.report("starting")
        try:
            if not await self._start():
                return
            if self.webhook is not None:
                await self.webhook.run(self._incoming, submit, self._stop)
            else:
                await delete_webhook(self.bot)  # Telegram refuses getUpdates while one is set
                await self._poll(submit)
            self._health.report("stopped")
        finally:
            self.healthy = False
            with contextlib.suppress(Exception):
                await self.bot.shutdown()

    async def _start(self) -> bool:
        """getMe (with backoff on network errors) and setMyCommands; False when the token is
        rejected or Omega stops first."""
        backoff = BACKOFF_FIRST_SECS
        while not self._stop.is_set():
            try:
                await self._until_stopped(self.bot.initialize())
            except InvalidToken as exc:
                log.error(
                    "telegram: the bot token was rejected by %s (getMe: %s); check "
                    "[channel.telegram] bot_token or TELEGRAM_BOT_TOKEN. The Telegram channel "
                    "is not started.",
                    self._api_url,
                    exc,
                )
                self._health.report("token rejected", "check bot_token or TELEGRAM_BOT_TOKEN")
                return False
            except StoppedError:
                return False
            except TelegramError as exc:
                log.warning("telegram: getMe failed (%s); retrying in %.0f s", exc, backoff)
                self._health.report("cannot reach Telegram", str(exc)[:200])
                await self._sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_SECS)
                continue
            self.username = self.bot.username or ""
            self.bot_id = self.bot.id
            log.info("telegram: connected as @%s", self.username)
            try:
                await self.bot.set_my_commands(bot_commands())
            except TelegramError as exc:
                log.warning("telegram: could not publish the command list: %s", exc)
            return True
        return False

    async def _poll(self, submit: Submit) -> None:
        offset: int | None = None
        backoff = BACKOFF_FIRST_SECS
        while not self._stop.is_set():
            try:
                updates = await self._until_stopped(
                    self.bot.get_updates(
                        offset=offset, timeout=self._poll_timeout, allowed_updates=["message"]
                    )
                )
            except StoppedError:
                break
            except InvalidToken as exc:
                log.error("telegram: the bot token was rejected while polling (%s)", exc)
                self._health.report("token rejected", "check bot_token or TELEGRAM_BOT_TOKEN")
                return
            except RetryAfter as exc:
                await self._sleep(retry_after_secs(exc))
                continue
            except TelegramError as exc:
                self.healthy = False
                log.warning("telegram: getUpdates failed (%s); retrying in %.0f s", exc, backoff)
                self._health.report("polling failing", str(exc)[:200])
                await self._sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_SECS)
                continue
            self.healthy = True
            self._health.report("polling")
            backoff = BACKOFF_FIRST_SECS
            for update in updates:
                # Not handed: not confirmed either, so it comes again with the next getUpdates.
                if not await self._handed(update, submit):
                    await self._sleep(backoff)
                    break
                offset = update.update_id + 1
        if offset is not None:
            # Confirm what was handled, so the next start does not receive it again.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.bot.get_updates(offset=offset, timeout=0, limit=1), 5)

    async def _handed(self, update: Update, submit: Submit) -> bool:
        """Whether a polled update is done with: its message in the inbox, none for Omega, or
        unread DROP_AFTER times and given up. One read but not stored (the store away) never
        is: nothing is lost."""
        try:
            incoming = await self._incoming(update)
        except Exception as exc:
            if await self._unread.given_up(update.update_id, exc):
                return True
            log.exception("telegram: update %d not read", update.update_id)
            return False
        self._unread.read(update.update_id)
        try:
            if incoming is not None:
                await submit(incoming)  # returns once the message is durable
        except Exception:
            log.exception("telegram: update %d not accepted", update.update_id)
            return False
        return True

    async def _incoming(self, update: Update) -> IncomingMessage | None:
        """The message an update carries, with its files downloaded, or None when it is not
        for Omega (a channel post, another bot, a group message not addressed to Omega, a
        service message)."""
        message = update.message
        if message is None or message.from_user is None:
            return None
        if message.chat.type == ChatType.CHANNEL or message.from_user.is_bot:
            return None
        # Sent as a chat, not a person (a linked channel's automatic forward comes "from"
        # Telegram's service account 777000, not a bot): nobody Omega could know.
        if message.sender_chat is not None or message.is_automatic_forward:
            return None
        is_group = message.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
        if is_group and not self._addressed(message):
            return None
        text = message.text if message.text is not None else (message.caption or "")
        attachments, notes = await download_attachments(self.bot, message, self._max_download)
        if not text and not attachments and not notes:
            return None  # joins, leaves, pins, stickers...
        user = message.from_user
        # A forwarded message is someone else's words, never the sender's own: it reads as a
        # quotation, and the label in front keeps a forwarded "/approve_person ..." from ever
        # being taken as the sender's command.
        parts = [self._forwarded(message.forward_origin), *notes, self._quote(message), text]
        incoming = IncomingMessage(
            channel=NAME,
            sender_id=str(user.id),
            sender_name=scrub(user.full_name or user.username or ""),
            text=scrub("\n".join(part for part in parts if part)),
            is_group=is_group,
            reply_target=str(message.chat_id),
            attachments=attachments,
            assurance="platform",  # the Bot API names the account that sent it
        )
        incoming.id = message_id(message)
        return incoming

    def _quote(self, message: Message) -> str:
        """The replied-to message (or the quoted part of it), so it reaches the context."""
        reply = message.reply_to_message
        if reply is None:
            return ""
        quoted = message.quote.text if message.quote is not None else ""
        quoted = quoted or reply.text or reply.caption or ""
        if not quoted:
            return ""
        if len(quoted) > QUOTE_CHARS:
            quoted = quoted[:QUOTE_CHARS] + "..."
        author = reply.from_user
        if author is not None and author.id == self.bot_id:
            who = "you"
        else:
            # PTB's `full_name` is None for an empty first name (typed `str` all the same).
            name = (author.full_name or author.username or "") if author is not None else ""
            who = literal(name, NAME_CHARS) if name else "someone"
        return f'[In reply to {who}: "{quoted}"]'

    def _forwarded(self, origin: MessageOrigin | None) -> str:
        """`[Forwarded from "<name>"]:` for a forwarded message ("" for one that is not): the
        original author's name as Telegram gives it, quoted as untrusted text."""
        if origin is None:
            return ""
        name = ""
        if isinstance(origin, MessageOriginUser):
            if origin.sender_user.id == self.bot_id:
                return "[Forwarded from you]:"
            name = origin.sender_user.full_name or origin.sender_user.username or ""
        elif isinstance(origin, MessageOriginHiddenUser):
            name = origin.sender_user_name
        elif isinstance(origin, MessageOriginChat):
            name = origin.sender_chat.effective_name or ""
        elif isinstance(origin, MessageOriginChannel):
            name = origin.chat.effective_name or ""
        signature = getattr(origin, "author_signature", None)
        if signature:
            name = f"{name} ({signature})" if name else signature
        who = literal(name, NAME_CHARS) if name else "someone"
        return f"[Forwarded from {who}]:"

    def _addressed(self, message: Message) -> bool:
        """In a group: mentioned (@username), replied to, or a command for this bot."""
        reply = message.reply_to_message
        if reply is not None and reply.from_user is not None and reply.from_user.id == self.bot_id:
            return True
        mention = f"@{self.username}".lower()
        entities = message.parse_entities() or message.parse_caption_entities()
        for entity, value in entities.items():
            if entity.type == MessageEntityType.MENTION and value.lower() == mention:
                return True
            if (
                entity.type == MessageEntityType.TEXT_MENTION
                and entity.user is not None
                and entity.user.id == self.bot_id
            ):
                return True
            if entity.type == MessageEntityType.BOT_COMMAND and entity.offset == 0:
                named = value.partition("@")[2].lower()
                if not named or f"@{named}" == mention:
                    return True
        return False

    # -- sending -------------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> None:
        """Send a text (Markdown as HTML, in pieces within 4096) or a photo with its caption."""
        chat_id = int(message.target)
        text = message.text
        photo = message.photo
        if photo is not None:
            caption = ""
            if utf16_len(text) <= MAX_CAPTION_UNITS:
                caption, text = text, ""
            await self._send_photo(chat_id, photo, caption)
        code: str | None = None
        for piece in split_text(text):
            html, code_after = render_html(piece, code)
            if piece.strip():  # Telegram refuses an empty text; whitespace shows as nothing
                await self._send_text(chat_id, piece, html)
            code = code_after

    async def _send_text(self, chat_id: int, plain: str, html: str) -> None:
        """Send `html`; when Telegram refuses it (a parse error), the same piece as plain text."""
        try:
            await self._call(
                lambda: self.bot.send_message(chat_id, html, parse_mode=ParseMode.HTML)
            )
        except BadRequest as exc:
            log.warning("telegram: formatted message refused (%s); sent as plain text", exc)
            await self._call(lambda: self.bot.send_message(chat_id, plain))

    async def _send_photo(self, chat_id: int, photo: bytes, caption: str) -> None:
        html, _ = render_html(caption)
        try:
            await self._call(
                lambda: self.bot.send_photo(
                    chat_id, photo, caption=html or None, parse_mode=ParseMode.HTML
                )
            )
        except BadRequest as exc:
            if not caption:
                raise
            log.warning("telegram: formatted caption refused (%s); sent as plain text", exc)
            await self._call(lambda: self.bot.send_photo(chat_id, photo, caption=caption))

    async def send_typing(self, target: str) -> None:
        await self.bot.send_chat_action(int(target), ChatAction.TYPING)

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        """Run a Bot API call, waiting out 429 `retry_after` a few times."""
        for _ in range(SEND_ATTEMPTS - 1):
            try:
                return await call()
            except RetryAfter as exc:
                wait = retry_after_secs(exc)
                log.warning("telegram: rate limited; retrying in %.0f s", wait)
                await asyncio.sleep(wait)
        return await call()

    # -- stopping ------------------------------------------------------------------------

    async def stop(self) -> None:
        self._stop.set()

    async def _sleep(self, secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), secs)

    async def _until_stopped(self, work: Awaitable[T]) -> T:
        """Await `work`, abandoning it (raising StoppedError) as soon as `stop` is called."""
        task = asyncio.ensure_future(work)
        stopper = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stopper.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise StoppedError
        return task.result()


class StoppedError(OmegaError):
    """`stop` was called while waiting on the Bot API."""
