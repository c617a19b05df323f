"""The WhatsApp library boundary: plain events in, a few calls out.

The channel (channel.py) only knows the `WhatsAppClient` protocol and the dataclasses here;
`NeonizeClient` (neonize_client.py) is the real implementation over neonize, and the only
module that knows neonize's messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

MediaKind = Literal["image", "voice", "audio", "document", "video"]


@dataclass(frozen=True)
class Media:
    """A file a message carries; `ref` is what the client needs to download it."""

    kind: MediaKind
    mime_type: str = ""
    file_name: str = ""
    size: int | None = None
    ref: Any = None


@dataclass(frozen=True)
class WaMessage:
    """One received message, unwrapped. JIDs are `user@server` strings (an interop JID's user
    part led by its integrator: `7-15551234567@interop`)."""

    id: str
    chat: str
    sender: str
    text: str = ""
    is_from_me: bool = False
    is_group: bool = False
    sender_alt: str = ""  # the sender's other JID (phone number for a LID sender, or the LID)
    push_name: str = ""
    media: tuple[Media, ...] = ()
    mentions: tuple[str, ...] = ()  # JIDs mentioned with @
    quoted_sender: str = ""  # author of the message this one replies to
    quoted_text: str = ""
    is_edit: bool = False
    is_forwarded: bool = False  # someone else's message, passed on: never the sender's words


@dataclass(frozen=True)
class QrCode:
    """A pairing code to show as a QR; each new one replaces the one before."""

    code: str


@dataclass(frozen=True)
class PairSuccess:
    """The phone scanned the code (or entered the phone code): this device is linked."""

    account: str


@dataclass(frozen=True)
class PairFailure:
    """Pairing failed (the phone refused, or the codes ran out)."""

    error: str


@dataclass(frozen=True)
class Connected:
    """Connected and logged in as `account` (a JID, empty when not known yet)."""

    account: str = ""


@dataclass(frozen=True)
class Disconnected:
    """The connection dropped."""


@dataclass(frozen=True)
class LoggedOut:
    """The session was ended from the phone (or by WhatsApp); pairing is needed again."""

    reason: str = ""


@dataclass(frozen=True)
class Received:
    """A message arrived."""

    message: WaMessage


WhatsAppEvent = QrCode | PairSuccess | PairFailure | Connected | Disconnected | LoggedOut | Received
EventHandler = Callable[[WhatsAppEvent], Awaitable[None]]


@runtime_checkable
class WhatsAppClient(Protocol):
    """What the channel needs from a WhatsApp library."""

    async def connect(self, on_event: EventHandler) -> None:
        """Start connecting (pairing by QR when there is no session); events go to `on_event`."""
        ...

    async def reconnect(self) -> None:
        """Drop whatever connection is left and connect again."""
        ...

    async def disconnect(self) -> None:
        """Close the connection; the session stays for the next start."""
        ...

    def is_connected(self) -> bool:
        """Whether the connection is up now."""
        ...

    async def send_text(self, chat: str, text: str) -> str:
        """Send a text to `chat` (a JID); the sent message's id."""
        ...

    async def send_image(self, chat: str, image: bytes, caption: str) -> str:
        """Send an image with a caption; the sent message's id."""
        ...

    async def send_composing(self, chat: str) -> None:
        """Show "typing..." in `chat`."""
        ...

    async def mark_read(self, message: WaMessage) -> None:
        """Tell the sender the message was read (blue ticks)."""
        ...

    async def download(self, media: Media) -> bytes:
        """The bytes of a received file."""
        ...

    async def pair_phone(self, phone: str) -> str:
        """Ask for a pairing code to type on the phone (instead of scanning a QR)."""
        ...


def jid_user(jid: str) -> str:
    """The user part of a JID (`15551234567` of `15551234567:3@s.whatsapp.net`)."""
    return jid.partition("@")[0].partition(":")[0].partition(".")[0]
