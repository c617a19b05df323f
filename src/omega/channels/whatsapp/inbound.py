"""What a WhatsApp message becomes: whether it is for Omega in the channel's mode, who sent
it, and the IncomingMessage with its text, quote, forward label and downloaded files.

Plain functions over the client's `WaMessage`; the channel (channel.py) calls them for each
message it receives, in order.
"""

from __future__ import annotations

import logging
from typing import Literal

from omega.channels.whatsapp.client import Media, WaMessage, WhatsAppClient, jid_user
from omega.text import scrub
from omega.types import Attachment, IncomingMessage

log = logging.getLogger(__name__)

NAME = "whatsapp"
QUOTE_CHARS = 500
USER_SERVER = "s.whatsapp.net"
FORWARDED = "[Forwarded message]:"  # what leads someone else's words passed on by the sender


def inbox_id(message: WaMessage) -> str:
    """A stable inbox id for a WhatsApp message (the same message seen twice gives the same)."""
    return f"whatsapp:{message.chat}:{message.id}"


def wanted(mode: str, own: set[str], message: WaMessage) -> bool:
    """Whether the message is for Omega in this mode; `own` are the linked account's users."""
    if message.is_edit or message.chat.endswith("@broadcast") or not message.chat:
        return False
    if mode == "personal":
        # Only the "message yourself" chat: the account writing to itself.
        if not message.is_from_me or message.is_group:
            return False
        chat = jid_user(message.chat)
        return chat in {jid_user(message.sender), jid_user(message.sender_alt)} | own
    if message.is_from_me:
        return False
    if message.is_group:
        if any(jid_user(jid) in own for jid in message.mentions):
            return True
        return bool(message.quoted_sender) and jid_user(message.quoted_sender) in own
    return True


def sender_number(message: WaMessage) -> str:
    """The sender's id: the phone number (digits) of a phone-number JID, or of a LID
    sender's phone-number alternate; any other sender (interop, Messenger, hosted, bot, a
    LID without a number) keeps its whole `user@server`, which never equals a number."""
    for jid in (message.sender, message.sender_alt):
        if jid.endswith(f"@{USER_SERVER}"):
            return jid_user(jid)
    server = message.sender.partition("@")[2]
    return f"{jid_user(message.sender)}@{server}" if server else message.sender


async def to_incoming(
    client: WhatsAppClient, message: WaMessage, own: set[str], max_download: int
) -> IncomingMessage | None:
    """The message as Omega's IncomingMessage, its files downloaded; None for one with
    nothing to answer (reactions, receipts, protocol messages)."""
    attachments, notes = await download(client, message.media, max_download)
    if not message.text and not attachments and not notes:
        return None
    quote = ""
    if message.quoted_text:
        quoted = message.quoted_text
        if len(quoted) > QUOTE_CHARS:
            quoted = quoted[:QUOTE_CHARS] + "..."
        who = "you" if jid_user(message.quoted_sender) in own else "someone"
        quote = f'[In reply to {who}: "{quoted}"]'
    # A forwarded message is someone else's words: the label in front makes it read as a
    # quotation, and keeps a forwarded "/approve_person ..." from being the sender's command.
    parts = [FORWARDED if message.is_forwarded else "", *notes, quote, message.text]
    incoming = IncomingMessage(
        channel=NAME,
        sender_id=sender_number(message),
        sender_name=scrub(message.push_name),
        text=scrub("\n".join(part for part in parts if part)),
        is_group=message.is_group,
        reply_target=message.chat,
        attachments=attachments,
        assurance="platform",  # WhatsApp's end-to-end session names the sender
    )
    incoming.id = inbox_id(message)
    return incoming


async def download(
    client: WhatsAppClient, media: tuple[Media, ...], max_download: int
) -> tuple[list[Attachment], list[str]]:
    """The message's files (each at most `max_download` bytes), and a note for each that
    could not be had."""
    attachments: list[Attachment] = []
    notes: list[str] = []
    for item in media:
        label = {"voice": "voice note", "image": "photo", "video": "video"}.get(
            item.kind, item.file_name or "file"
        )
        if item.size is not None and item.size > max_download:
            notes.append(f"[The {label} sent here is too large for me to open.]")
            continue
        try:
            data = await client.download(item)
        except Exception as exc:
            log.warning("whatsapp: could not download a %s: %s", item.kind, exc)
            notes.append(f"[The {label} sent here could not be downloaded.]")
            continue
        if len(data) > max_download:
            notes.append(f"[The {label} sent here is too large for me to open.]")
            continue
        kind: Literal["image", "document", "audio", "video"] = (
            "audio"  # a voice note: transcribed by the pipeline
            if item.kind == "voice"
            else "document"  # a music or audio file is kept as a file
            if item.kind == "audio"
            else item.kind
        )
        attachments.append(
            Attachment(kind=kind, data=data, name=item.file_name, mime_type=item.mime_type)
        )
    return attachments, notes
