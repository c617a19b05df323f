"""`NeonizeClient`: the `WhatsAppClient` over neonize (whatsmeow, WhatsApp Web's multi-device
protocol, in a Go shared library shipped in the wheel). neonize is imported only when a
`NeonizeClient` is built, so Omega without the `whatsapp` extra still runs.

Everything WhatsApp-specific about a message is settled here: nested envelopes are unwrapped
(`deviceSentMessage`, `ephemeralMessage`, `viewOnceMessage*`, `documentWithCaptionMessage`),
the text is taken from whichever field carries it (conversation, extended text, caption), a
forward is flagged from the context info, and JIDs become strings (`user@server`, without the
device part; an interop JID keeps its integrator, `<integrator>-<user>@interop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from omega.channels.whatsapp.client import (
    Connected,
    Disconnected,
    EventHandler,
    LoggedOut,
    Media,
    MediaKind,
    PairFailure,
    PairSuccess,
    QrCode,
    Received,
    WaMessage,
    WhatsAppEvent,
)

log = logging.getLogger(__name__)

# Envelopes whose `.message` is the message itself; unwrapped until none is left.
ENVELOPES = (
    "ephemeralMessage",
    "viewOnceMessage",
    "viewOnceMessageV2",
    "viewOnceMessageV2Extension",
    "documentWithCaptionMessage",
)
MAX_NESTING = 8
# Kinds of message whose `contextInfo` may say the message was forwarded.
CONTEXT_CARRIERS = (
    "extendedTextMessage",
    "imageMessage",
    "audioMessage",
    "documentMessage",
    "videoMessage",
    "stickerMessage",
    "locationMessage",
    "contactMessage",
)
INTEROP_SERVER = "interop"  # third-party messengers (EU DMA), told apart by an integrator id


def _jid_text(jid: Any) -> str:
    """A neonize JID as `user@server` (no device, no agent); an interop JID's integrator
    leads the user part (`7-15551234567@interop`), so no two networks' users share an id."""
    if jid is None or not jid.Server:
        return ""
    if not jid.User:
        return str(jid.Server)
    user = f"{jid.Integrator}-{jid.User}" if jid.Integrator else str(jid.User)
    return f"{user}@{jid.Server}"


def unwrap(message: Any) -> Any:
    """The innermost message of a WAWebProtobufsE2E.Message: device-sent copies (what the
    owner's phone sent, seen by this linked device), disappearing and view-once envelopes."""
    for _ in range(MAX_NESTING):
        if message.HasField("deviceSentMessage") and message.deviceSentMessage.HasField("message"):
            message = message.deviceSentMessage.message
            continue
        for name in ENVELOPES:
            if message.HasField(name) and getattr(message, name).HasField("message"):
                message = getattr(message, name).message
                break
        else:
            return message
    return message


def _quoted_text(quoted: Any) -> str:
    inner = unwrap(quoted)
    if inner.conversation:
        return str(inner.conversation)
    if inner.HasField("extendedTextMessage"):
        return str(inner.extendedTextMessage.text)
    for name in ("imageMessage", "videoMessage", "documentMessage"):
        if inner.HasField(name):
            return str(getattr(inner, name).caption)
    return ""


def _forwarded(inner: Any) -> bool:
    """Whether the message was forwarded: its context info (on whichever kind of message
    carries one) says so, or counts how often it was passed on."""
    for name in CONTEXT_CARRIERS:
        if inner.HasField(name):
            context = getattr(inner, name).contextInfo
            if context.isForwarded or context.forwardingScore > 0:
                return True
    return False


def convert(event: Any) -> WaMessage:
    """A neonize `Message` event as a `WaMessage` (unwrapped, media described, not fetched)."""
    from neonize.proto.waE2E.WAWebProtobufsE2E_pb2 import Message

    source = event.Info.MessageSource
    inner = unwrap(event.Message)
    text = ""
    media: list[Media] = []
    context = None
    if inner.conversation:
        text = str(inner.conversation)
    if inner.HasField("extendedTextMessage"):
        text = str(inner.extendedTextMessage.text)
        context = inner.extendedTextMessage.contextInfo
    if inner.HasField("imageMessage"):
        image = inner.imageMessage
        text = text or str(image.caption)
        context = image.contextInfo
        ref = Message(imageMessage=image)
        media.append(
            Media("image", image.mimetype or "image/jpeg", "photo.jpg", image.fileLength, ref)
        )
    if inner.HasField("audioMessage"):
        audio = inner.audioMessage
        context = audio.contextInfo
        kind: MediaKind = "voice" if audio.PTT else "audio"
        name = "voice.ogg" if audio.PTT else "audio"
        ref = Message(audioMessage=audio)
        media.append(Media(kind, audio.mimetype or "audio/ogg", name, audio.fileLength, ref))
    if inner.HasField("documentMessage"):
        document = inner.documentMessage
        text = text or str(document.caption)
        context = document.contextInfo
        ref = Message(documentMessage=document)
        name = str(document.fileName or document.title or "document")
        media.append(Media("document", document.mimetype, name, document.fileLength, ref))
    if inner.HasField("videoMessage"):
        video = inner.videoMessage
        text = text or str(video.caption)
        context = video.contextInfo
        ref = Message(videoMessage=video)
        media.append(
            Media("video", video.mimetype or "video/mp4", "video.mp4", video.fileLength, ref)
        )
    mentions: tuple[str, ...] = ()
    quoted_sender = quoted_text = ""
    if context is not None:
        mentions = tuple(str(jid) for jid in context.mentionedJID)
        quoted_sender = str(context.participant)
        if context.HasField("quotedMessage"):
            quoted_text = _quoted_text(context.quotedMessage)
    return WaMessage(
        id=str(event.Info.ID),
        chat=_jid_text(source.Chat),
        sender=_jid_text(source.Sender),
        text=text,
        is_from_me=bool(source.IsFromMe),
        is_group=bool(source.IsGroup),
        sender_alt=_jid_text(source.SenderAlt) if source.HasField("SenderAlt") else "",
        push_name=str(event.Info.Pushname),
        media=tuple(media),
        mentions=mentions,
        quoted_sender=quoted_sender,
        quoted_text=quoted_text,
        is_edit=bool(event.IsEdit),
        is_forwarded=_forwarded(inner),
    )


def _to_jid(jid: str) -> Any:
    """A `user@server` string (as `_jid_text` writes it) as a neonize JID."""
    from neonize.utils.jid import build_jid

    user, _, server = jid.partition("@")
    integrator, dash, rest = user.partition("-")
    if server == INTEROP_SERVER and dash and integrator.isdigit():
        built = build_jid(rest, server)
        built.Integrator = int(integrator)
        return built
    return build_jid(user, server or "s.whatsapp.net")


class NeonizeClient:
    """`WhatsAppClient` over neonize's asyncio client; the session is a SQLite file in
    `session_dir` (whatsmeow's device store), kept across restarts."""

    def __init__(self, session_dir: Path, device_name: str = "Omega") -> None:
        from neonize.aioze.client import NewAClient
        from neonize.proto.waCompanionReg.WAWebProtobufsCompanionReg_pb2 import DeviceProps

        self.session_dir = session_dir
        self.database = session_dir / "session.db"
        props = DeviceProps(os=device_name, platformType=DeviceProps.DESKTOP)
        self.client = NewAClient(str(self.database), props=props)
        self._on_event: EventHandler | None = None
        self._register()

    def _register(self) -> None:
        """Route neonize's callbacks to `_emit` as plain events."""
        from neonize.aioze.events import (
            ConnectedEv,
            DisconnectedEv,
            LoggedOutEv,
            MessageEv,
            PairStatusEv,
        )
        from neonize.proto.Neonize_pb2 import PairStatus

        client = self.client

        async def on_qr(_: Any, data: bytes) -> None:
            await self._emit(QrCode(data.decode()))

        async def on_connected(_: Any, __: Any) -> None:
            me = getattr(client, "me", None)
            await self._emit(Connected(_jid_text(me.JID) if me is not None else ""))

        async def on_disconnected(_: Any, __: Any) -> None:
            await self._emit(Disconnected())

        async def on_logged_out(_: Any, event: Any) -> None:
            reason = LoggedOutEv.DESCRIPTOR.fields_by_name["Reason"].enum_type
            await self._emit(LoggedOut(reason.values_by_number[event.Reason].name.lower()))

        async def on_pair(_: Any, event: Any) -> None:
            if event.Status == PairStatus.SUCCESS:
                await self._emit(PairSuccess(_jid_text(event.ID)))
            else:
                await self._emit(PairFailure(str(event.Error) or "pairing failed"))

        async def on_message(_: Any, event: Any) -> None:
            try:
                message = convert(event)
            except Exception:
                log.exception("whatsapp: a message could not be read")
                return
            await self._emit(Received(message))

        client.qr(on_qr)
        client.event(ConnectedEv)(on_connected)
        client.event(DisconnectedEv)(on_disconnected)
        client.event(LoggedOutEv)(on_logged_out)
        client.event(PairStatusEv)(on_pair)
        client.event(MessageEv)(on_message)

    async def _emit(self, event: WhatsAppEvent) -> None:
        if self._on_event is not None:
            await self._on_event(event)

    async def connect(self, on_event: EventHandler) -> None:
        """Start the Go client (it runs in a thread until `disconnect`)."""
        self._on_event = on_event
        await self.client.connect()

    async def reconnect(self) -> None:
        """Stop the Go client, wait for it to end, and start it again."""
        await self.disconnect()
        await self.client.connect()

    async def disconnect(self) -> None:
        """Stop the Go client and wait (briefly) for its thread to end."""
        task = self.client.connect_task
        with contextlib.suppress(Exception):
            await self.client.stop()
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 10)

    def is_connected(self) -> bool:
        """Whether whatsmeow's websocket is up (asked of the Go library directly: neonize's
        asyncio client returns an un-awaited coroutine from its `is_connected` property)."""
        from neonize._binder import gocode

        try:
            return bool(gocode.IsConnected(self.client.uuid))
        except Exception:
            return False

    async def send_text(self, chat: str, text: str) -> str:
        """Send a text; the message id."""
        response = await self.client.send_message(_to_jid(chat), text)
        return str(response.ID)

    async def send_image(self, chat: str, image: bytes, caption: str) -> str:
        """Upload and send an image; the message id."""
        message = await self.client.build_image_message(image, caption=caption or None)
        response = await self.client.send_message(_to_jid(chat), message)
        return str(response.ID)

    async def send_composing(self, chat: str) -> None:
        """ "typing..." in the chat."""
        from neonize.utils.enum import ChatPresence, ChatPresenceMedia

        await self.client.send_chat_presence(
            _to_jid(chat),
            ChatPresence.CHAT_PRESENCE_COMPOSING,
            ChatPresenceMedia.CHAT_PRESENCE_MEDIA_TEXT,
        )

    async def mark_read(self, message: WaMessage) -> None:
        """A read receipt for the message."""
        from neonize.utils.enum import ReceiptType

        await self.client.mark_read(
            message.id,
            chat=_to_jid(message.chat),
            sender=_to_jid(message.sender),
            receipt=ReceiptType.READ,
        )

    async def download(self, media: Media) -> bytes:
        """Download and decrypt a received file."""
        data = await self.client.download_any(media.ref)
        return bytes(data or b"")

    async def pair_phone(self, phone: str) -> str:
        """A code to enter on the phone under Linked devices > Link with phone number."""
        return str(await self.client.PairPhone(phone, show_push_notification=True))
