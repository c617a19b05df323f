"""A `WhatsAppClient` test double at the library boundary: it records every call the channel
makes and lets a test push the events neonize would produce (QR codes, pairing, messages,
disconnects, logouts)."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field

from omega.channels.whatsapp.client import (
    Connected,
    Disconnected,
    EventHandler,
    LoggedOut,
    Media,
    PairSuccess,
    QrCode,
    Received,
    WaMessage,
    WhatsAppEvent,
)

OWNER_NUMBER = "351900000001"
OWNER_JID = f"{OWNER_NUMBER}@s.whatsapp.net"


@dataclass
class Sent:
    """One message the channel sent."""

    chat: str
    text: str
    id: str
    image: bytes | None = None


@dataclass
class FakeWhatsApp:
    """Connected as `account` when it has one; else every connect produces QR codes."""

    account: str = OWNER_JID
    qr_codes: tuple[str, ...] = ("2@first-code", "2@second-code")
    fail_reconnects: int = 0  # reconnect() raises this many times first
    stay_down: bool = False  # reconnect() succeeds but no Connected follows
    calls: list[str] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    composing: list[str] = field(default_factory=list)
    connected: bool = False
    on_event: EventHandler | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # -- the WhatsAppClient protocol ------------------------------------------------------

    async def connect(self, on_event: EventHandler) -> None:
        self.calls.append("connect")
        self.on_event = on_event
        await self._come_up()

    async def reconnect(self) -> None:
        self.calls.append("reconnect")
        if self.fail_reconnects:
            self.fail_reconnects -= 1
            raise ConnectionError("network is unreachable")
        if not self.stay_down:
            await self._come_up()

    async def _come_up(self) -> None:
        if self.account:
            self.connected = True
            await self.push(Connected(self.account))
        else:
            for code in self.qr_codes[:1]:
                await self.push(QrCode(code))

    async def disconnect(self) -> None:
        self.calls.append("disconnect")
        self.connected = False

    def is_connected(self) -> bool:
        return self.connected

    async def send_text(self, chat: str, text: str) -> str:
        message_id = f"3EB0SENT{next(self._ids):04d}"
        self.sent.append(Sent(chat, text, message_id))
        return message_id

    async def send_image(self, chat: str, image: bytes, caption: str) -> str:
        message_id = f"3EB0SENT{next(self._ids):04d}"
        self.sent.append(Sent(chat, caption, message_id, image=image))
        return message_id

    async def send_composing(self, chat: str) -> None:
        self.composing.append(chat)

    async def mark_read(self, message: WaMessage) -> None:
        self.read.append(message.id)

    async def download(self, media: Media) -> bytes:
        if isinstance(media.ref, Exception):
            raise media.ref
        assert isinstance(media.ref, bytes)
        return media.ref

    async def pair_phone(self, phone: str) -> str:
        self.calls.append(f"pair_phone {phone}")
        return "ABCD-1234"

    # -- what a test does -----------------------------------------------------------------

    async def push(self, event: WhatsAppEvent) -> None:
        """Deliver an event as the library would (on the event loop, awaited)."""
        assert self.on_event is not None, "the channel has not connected yet"
        await self.on_event(event)

    async def rotate(self) -> None:
        """The next QR code (whatsmeow refreshes them every 20 s or so)."""
        for code in self.qr_codes[1:]:
            await self.push(QrCode(code))

    async def pair(self, account: str = OWNER_JID) -> None:
        """The phone scanned the code."""
        self.account = account
        self.connected = True
        await self.push(PairSuccess(account))
        await self.push(Connected(account))

    async def drop(self) -> None:
        """The connection breaks."""
        self.connected = False
        await self.push(Disconnected())

    async def log_out(self, reason: str = "logged_out") -> None:
        """The owner removed this linked device on the phone."""
        self.connected = False
        self.account = ""
        await self.push(LoggedOut(reason))

    def texts(self, chat: str = OWNER_JID) -> list[str]:
        """What was sent to `chat`, in order."""
        return [sent.text for sent in self.sent if sent.chat == chat]

    async def wait_sent(self, predicate: object, within: float = 20.0) -> None:
        """Wait until `predicate()` holds (polling the event loop)."""
        assert callable(predicate)
        deadline = asyncio.get_running_loop().time() + within
        while not predicate():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"not sent in time; sent: {self.sent!r}")
            await asyncio.sleep(0.01)


def self_message(
    text: str, message_id: str, media: tuple[Media, ...] = (), account: str = OWNER_JID
) -> Received:
    """A message the owner wrote in their own "message yourself" chat."""
    return Received(
        WaMessage(
            id=message_id,
            chat=account,
            sender=account,
            text=text,
            is_from_me=True,
            push_name="Ana",
            media=media,
        )
    )


def message_from(
    number: str,
    text: str,
    message_id: str,
    *,
    group: str = "",
    mentions: tuple[str, ...] = (),
    quoted_sender: str = "",
    quoted_text: str = "",
    media: tuple[Media, ...] = (),
) -> Received:
    """A message someone else sent (to a bot-mode Omega, or in a group)."""
    sender = f"{number}@s.whatsapp.net"
    return Received(
        WaMessage(
            id=message_id,
            chat=group or sender,
            sender=sender,
            text=text,
            is_group=bool(group),
            push_name=f"Person {number}",
            media=media,
            mentions=mentions,
            quoted_sender=quoted_sender,
            quoted_text=quoted_text,
        )
    )
