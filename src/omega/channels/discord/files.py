"""Files on Discord: attachments downloaded for Omega, and the name a photo is sent under."""

from __future__ import annotations

import logging
import re

import aiohttp
import discord

from omega.text import scrub
from omega.types import Attachment

log = logging.getLogger(__name__)

_FILE_NAME = re.compile(r"[\w-][\w.-]{0,99}\.[A-Za-z0-9]{1,5}")
_IMAGE_MAGIC = ((b"\x89PNG", "png"), (b"\xff\xd8\xff", "jpg"), (b"GIF8", "gif"), (b"RIFF", "webp"))


def photo_filename(data: bytes, name: str) -> str:
    """The file name a photo is sent under: `name` when it is a plain file name (what Omega
    gives a picture it made), else "photo" with the extension its first bytes say."""
    if _FILE_NAME.fullmatch(name):
        return name
    for magic, extension in _IMAGE_MAGIC:
        if data.startswith(magic):
            return f"photo.{extension}"
    return "photo.png"


def _attachment(data: bytes, name: str, content_type: str) -> Attachment:
    mime = content_type.split(";")[0].strip()
    major = mime.partition("/")[0]
    if major == "image":
        return Attachment("image", data, name, mime)
    if major == "audio":
        return Attachment("audio", data, name, mime)
    if major == "video":
        return Attachment("video", data, name, mime)
    return Attachment("document", data, name, mime)


async def download_attachments(
    message: discord.Message, limit: int
) -> tuple[list[Attachment], list[str]]:
    """The message's files, downloaded from Discord's CDN; notes for those over `limit` bytes
    or not downloadable (the person is told, nothing is lost silently)."""
    attachments: list[Attachment] = []
    notes: list[str] = []
    for file in message.attachments:
        name = scrub(file.filename)
        if file.size > limit:
            notes.append(f"[The file {name} sent here is too large for me to open.]")
            continue
        try:
            data = await file.read()
        except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:  # a stalled CDN
            log.warning("discord: could not download %s: %s", name, exc)
            notes.append(f"[The file {name} sent here could not be downloaded.]")
            continue
        attachments.append(_attachment(data, name, file.content_type or "application/octet-stream"))
    return attachments, notes
