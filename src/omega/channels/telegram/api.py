"""Bot API pieces the polling channel and the webhook share: the wait a 429 asks for, the
command menu, and a message's files downloaded into attachments."""

from __future__ import annotations

import datetime as dt
import logging
import warnings
from typing import Literal

from telegram import Bot, BotCommand, Message
from telegram.error import RetryAfter, TelegramError

from omega.commands_table import HELP
from omega.types import Attachment

log = logging.getLogger(__name__)


def retry_after_secs(exc: RetryAfter) -> float:
    """How long Telegram asked to wait (seconds), whichever type the library gives it in."""
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


async def download_attachments(
    bot: Bot, message: Message, max_download: int
) -> tuple[list[Attachment], list[str]]:
    """The message's photo (largest size), document and voice note, downloaded; and notes
    for the ones that could not be (too large, download failed)."""
    # kind, file_id, name, mime type, size as Telegram announced it
    wanted: list[tuple[Literal["image", "document", "audio"], str, str, str, int | None]] = []
    if message.photo:
        largest = message.photo[-1]
        wanted.append(("image", largest.file_id, "photo.jpg", "image/jpeg", largest.file_size))
    if message.document is not None:
        document = message.document
        wanted.append(
            (
                "document",
                document.file_id,
                document.file_name or "document",
                document.mime_type or "",
                document.file_size,
            )
        )
    if message.audio is not None:  # a music or audio file: kept as a file, not transcribed
        audio = message.audio
        name = audio.file_name or "audio"
        wanted.append(("document", audio.file_id, name, audio.mime_type or "", audio.file_size))
    if message.voice is not None:  # a voice note: transcribed by the pipeline
        voice = message.voice
        wanted.append(
            (
                "audio",
                voice.file_id,
                "voice.ogg",
                voice.mime_type or "audio/ogg",
                voice.file_size,
            )
        )
    attachments: list[Attachment] = []
    notes: list[str] = []
    for kind, file_id, name, mime, size in wanted:
        label = "voice note" if kind == "audio" else "photo" if kind == "image" else name
        if size is not None and size > max_download:
            notes.append(f"[The {label} sent here is too large for me to open.]")
            continue
        try:
            file = await bot.get_file(file_id)
            if not file.file_path:  # optional in getFile's answer; nothing to download then
                raise TelegramError("getFile gave no file_path")
            data = bytes(await file.download_as_bytearray())
        except TelegramError as exc:
            log.warning("telegram: could not download a %s: %s", kind, exc)
            notes.append(f"[The {label} sent here could not be downloaded.]")
            continue
        if len(data) > max_download:
            notes.append(f"[The {label} sent here is too large for me to open.]")
            continue
        attachments.append(Attachment(kind=kind, data=data, name=name, mime_type=mime))
    return attachments, notes
