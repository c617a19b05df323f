"""The Telegram channel: Bot API long polling in, plain-text messages out.

Receiving is a `getUpdates` loop of our own rather than python-telegram-bot's Application, so
an update is confirmed to Telegram (the next call's `offset`) only after `submit` has put its
message in the durable inbox. Messages carry a stable id (chat and message id), so an update
seen again after a crash is recognised by the inbox and not handled twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram import Bot, BotCommand, Message, Update
from telegram.constants import ChatAction, ChatType, MessageEntityType
from telegram.error import InvalidToken, RetryAfter, TelegramError

from omega.channels.base import Submit
from omega.channels.telegram.format import split_text
from omega.config import TelegramConfig
from omega.gateway.commands import HELP
from omega.text import scrub
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

NAME = "telegram"
POLL_TIMEOUT_SECS = 30
BACKOFF_FIRST_SECS = 1.0
BACKOFF_MAX_SECS = 60.0
SEND_ATTEMPTS = 3  # a send refused with 429 is retried after `retry_after` this many times
SUBMIT_ATTEMPTS = 3  # an update whose submit keeps failing is skipped after this many tries

T = TypeVar("T")


def _retry_after_secs(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def bot_commands() -> list[BotCommand]:
    """The chat commands as Telegram's command menu shows them (from `/help`'s list)."""
    commands = []
    for usage, description in HELP.items():
        name = usage.split()[0]
        commands.append(BotCommand(name, description[:256]))
    return commands


def message_id(message: Message) -> str:
    """A stable inbox id for a Telegram message (the same update seen twice gives the same)."""
    return f"telegram:{message.chat_id}:{message.message_id}"


class TelegramChannel:
    """Long-polls the Bot API and hands each message to the gateway; sends replies as text."""

    def __init__(self, config: TelegramConfig, poll_timeout: int = POLL_TIMEOUT_SECS) -> None:
        self._token = config.bot_token.get_secret_value().strip()
        self._api_url = config.api_url.rstrip("/")
        self._poll_timeout = poll_timeout
        self.bot = Bot(
            self._token,
            base_url=f"{self._api_url}/bot",
            base_file_url=f"{self._api_url}/file/bot",
        )
        self._stop = asyncio.Event()
        self.username = ""  # the bot's @username once getMe answered
        self.bot_id = 0
        self.healthy = False  # polling works (the last getUpdates succeeded)

    @property
    def name(self) -> str:
        return NAME

    # -- receiving -----------------------------------------------------------------------

    async def run(self, submit: Submit) -> None:
        """Check the token, publish the commands, then poll until `stop`."""
        try:
            if not await self._start():
                return
            await self._poll(submit)
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
                return False
            except _Stopped:
                return False
            except TelegramError as exc:
                log.warning("telegram: getMe failed (%s); retrying in %.0f s", exc, backoff)
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
        failures: dict[int, int] = {}
        while not self._stop.is_set():
            try:
                updates = await self._until_stopped(
                    self.bot.get_updates(
                        offset=offset, timeout=self._poll_timeout, allowed_updates=["message"]
                    )
                )
            except _Stopped:
                break
            except InvalidToken as exc:
                log.error("telegram: the bot token was rejected while polling (%s)", exc)
                return
            except RetryAfter as exc:
                await self._sleep(_retry_after_secs(exc))
                continue
            except TelegramError as exc:
                self.healthy = False
                log.warning("telegram: getUpdates failed (%s); retrying in %.0f s", exc, backoff)
                await self._sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_SECS)
                continue
            self.healthy = True
            backoff = BACKOFF_FIRST_SECS
            for update in updates:
                try:
                    incoming = self._incoming(update)
                    if incoming is not None:
                        await submit(incoming)
                except Exception:
                    tries = failures[update.update_id] = failures.get(update.update_id, 0) + 1
                    if tries < SUBMIT_ATTEMPTS:
                        # Not confirmed: the update comes again with the next getUpdates.
                        log.exception("telegram: update %d not accepted", update.update_id)
                        await self._sleep(backoff)
                        break
                    log.exception(
                        "telegram: update %d failed %d times; skipped", update.update_id, tries
                    )
                failures.pop(update.update_id, None)
                offset = update.update_id + 1
        if offset is not None:
            # Confirm what was handled, so the next start does not receive it again.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.bot.get_updates(offset=offset, timeout=0, limit=1), 5)

    def _incoming(self, update: Update) -> IncomingMessage | None:
        """The message an update carries, or None when it is not for Omega."""
        message = update.message
        if message is None or message.from_user is None:
            return None
        text = message.text if message.text is not None else message.caption
        if text is None:
            log.info("telegram: message without text in chat %s ignored", message.chat_id)
            return None
        is_group = message.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
        if message.chat.type == ChatType.CHANNEL or message.from_user.is_bot:
            return None
        if is_group and not self._addressed(message):
            return None
        user = message.from_user
        incoming = IncomingMessage(
            channel=NAME,
            sender_id=str(user.id),
            sender_name=scrub(user.full_name or user.username or ""),
            text=scrub(text),
            is_group=is_group,
            reply_target=str(message.chat_id),
        )
        incoming.id = message_id(message)
        return incoming

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
            if entity.type == MessageEntityType.TEXT_MENTION and entity.user is not None:
                if entity.user.id == self.bot_id:
                    return True
            if entity.type == MessageEntityType.BOT_COMMAND and entity.offset == 0:
                named = value.partition("@")[2].lower()
                if not named or f"@{named}" == mention:
                    return True
        return False

    # -- sending -------------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> None:
        """Send a text (in pieces of at most 4096) or a photo with its caption."""
        chat_id = int(message.target)
        if message.photo is not None:
            caption, rest = message.text[:1024], message.text[1024:]
            await self._call(lambda: self.bot.send_photo(chat_id, message.photo, caption=caption))
            if not rest.strip():
                return
            text = rest
        else:
            text = message.text
        for piece in split_text(text):
            if piece.strip():  # Telegram refuses an empty text; whitespace shows as nothing
                await self._call(lambda piece=piece: self.bot.send_message(chat_id, piece))  # type: ignore[misc]

    async def send_typing(self, target: str) -> None:
        await self.bot.send_chat_action(int(target), ChatAction.TYPING)

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        """Run a Bot API call, waiting out 429 `retry_after` a few times."""
        for _ in range(SEND_ATTEMPTS - 1):
            try:
                return await call()
            except RetryAfter as exc:
                wait = _retry_after_secs(exc)
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
        """Await `work`, abandoning it (raising _Stopped) as soon as `stop` is called."""
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
            raise _Stopped
        return task.result()


class _Stopped(Exception):
    """`stop` was called while waiting on the Bot API."""
