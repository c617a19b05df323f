"""The WhatsApp channel: events from a `WhatsAppClient` in, replies in WhatsApp's marks out.

Two modes. `personal`: Omega is linked to the owner's own account and answers only the
"message yourself" chat (a message from the account itself whose chat is the account). `bot`:
Omega has its own number; people message it, groups follow the group rules (answered when
Omega is mentioned or replied to).

Each message gets a stable inbox id (`whatsapp:<chat>:<message id>`), so a message WhatsApp
delivers again is recognised and not handled twice; its files are downloaded before `submit`,
and it is marked read only once it is in the durable inbox. What Omega sends is remembered by
id (a bounded set) so its own replies, which in personal mode land in the very chat it
listens to, are never taken for new messages. A forwarded message is someone else's words:
it follows a `[Forwarded message]:` label, so it is never run as the sender's command.

Pairing: with no session the client reports QR codes; each is printed in the terminal (Unicode
half-blocks), saved as `qr.png` in the session folder and sent as a photo to whoever asked
(the owner, on whatever channel reaches them, at an unpaired start). The outcome - paired,
failed, timed out, and later a logout from the phone - is told to them too.

One module because the channel is one state machine driven by the client's events:
connecting, pairing, receiving and sending share the client, the session folder and the set of
sent ids, and one event (a logout, a reconnect) moves several of them at once. What a received
message becomes (whether it is for Omega, its sender, text and files) is inbound.py; the library
boundary is client.py and neonize_client.py; WhatsApp's text marks are format.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import sys
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, TextIO

from omega.channels import inbound
from omega.channels.base import Submit
from omega.channels.health import HealthReporter
from omega.channels.text import split_text, utf16_len
from omega.channels.whatsapp.client import (
    Connected,
    Disconnected,
    LoggedOut,
    PairFailure,
    PairSuccess,
    QrCode,
    Received,
    WaMessage,
    WhatsAppClient,
    WhatsAppEvent,
    jid_user,
)
from omega.channels.whatsapp.format import render_whatsapp
from omega.channels.whatsapp.inbound import USER_SERVER, to_incoming, wanted
from omega.config.channels import WhatsAppConfig
from omega.owner import OWNER
from omega.paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE
from omega.types import OutgoingMessage

log = logging.getLogger(__name__)

NAME = "whatsapp"
RECONNECT_FIRST_SECS = 5.0
RECONNECT_MAX_SECS = 300.0
PAIR_TIMEOUT_SECS = 180.0  # whatsmeow's codes run out after about this long
SENT_IDS_KEPT = 2000  # ids of sent messages remembered for echo prevention
MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024
MAX_CAPTION_UNITS = 1024

Send = Callable[[OutgoingMessage], Awaitable[None]]
Audience = tuple[str, str]  # (channel, target) told about pairing

QR_TEXT = (
    "Scan this QR code with WhatsApp on your phone: Settings > Linked devices > Link a device. "
    "It replaces any earlier code and is valid for about a minute (code {n})."
)


def chat_jid(target: str) -> str:
    """A reply target as a JID: a bare phone number becomes `<digits>@s.whatsapp.net`."""
    target = target.strip()
    if "@" in target:
        return target
    return f"{''.join(ch for ch in target if ch.isdigit())}@{USER_SERVER}"


def phone_of(account: str) -> str:
    """`+<digits>` of a JID, for people to read; empty when not a phone-number JID."""
    user = jid_user(account)
    return f"+{user}" if user.isdigit() else user


def qr_png(code: str) -> bytes:
    """The code as a PNG a phone can scan."""
    import segno

    buffer = io.BytesIO()
    segno.make_qr(code, error="l").save(buffer, kind="png", scale=8, border=4)
    return buffer.getvalue()


def qr_terminal(code: str) -> str:
    """The code drawn with Unicode half-blocks, two rows of modules per line."""
    import segno

    buffer = io.StringIO()
    segno.make_qr(code, error="l").terminal(out=buffer, compact=True)
    return buffer.getvalue()


class WhatsAppChannel:
    """Runs a `WhatsAppClient`: pairing, receiving, sending, reconnecting, health."""

    def __init__(
        self,
        config: WhatsAppConfig,
        client: WhatsAppClient,
        session_dir: Path,
        health_file: Path | None = None,
        terminal: TextIO | None = None,
        reconnect_first: float = RECONNECT_FIRST_SECS,
        reconnect_max: float = RECONNECT_MAX_SECS,
        pair_timeout: float = PAIR_TIMEOUT_SECS,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
    ) -> None:
        self.config = config
        self.client = client
        self.session_dir = session_dir
        self._health = HealthReporter(
            health_file, lambda: phone_of(self.account) if self.account else "", mode=config.mode
        )
        self._terminal = terminal if terminal is not None else sys.stderr
        self._reconnect_first = reconnect_first
        self._reconnect_max = reconnect_max
        self._pair_timeout = pair_timeout
        self._max_download = max_download_bytes
        self._submit: Submit | None = None
        self._notify: Send | None = None
        self._stop = asyncio.Event()
        self._receiving = asyncio.Lock()  # messages one at a time, in arrival order
        self._sent: OrderedDict[str, None] = OrderedDict()
        self._sending = 0
        self._sends_idle = asyncio.Event()
        self._sends_idle.set()
        self._reconnecting: asyncio.Task[None] | None = None
        self._pair_timer: asyncio.Task[None] | None = None
        self._audience: list[Audience] = [(OWNER, OWNER)]
        self._qr_count = 0
        self._qr_png: bytes | None = None
        self.account = ""  # the linked account's JID once known
        self.state: Literal[
            "starting",
            "pairing",
            "connected",
            "disconnected",
            "logged out",
            "not paired",
            "stopped",
        ] = "starting"

    @property
    def name(self) -> str:
        return NAME

    @property
    def qr_file(self) -> Path:
        """Where the current pairing QR is saved."""
        return self.session_dir / "qr.png"

    def attach(self, send: Send) -> None:
        """Where pairing news goes (the gateway's `send`: any channel, or the owner)."""
        self._notify = send

    async def _tell(self, text: str, photo: bytes | None = None) -> None:
        """Tell the pairing audience (by default the owner) something; never raises."""
        if self._notify is None:
            log.info("whatsapp: %s", text)
            return
        for channel, target in self._audience:
            kind: Literal["photo", "status"] = "photo" if photo is not None else "status"
            try:
                await self._notify(OutgoingMessage(channel, target, text, kind=kind, photo=photo))
            except Exception:
                log.exception("whatsapp: could not tell %s about pairing", channel)

    # -- running -------------------------------------------------------------------------

    async def run(self, submit: Submit) -> None:
        """Connect (pairing first when there is no session) and serve until `stop`."""
        self._submit = submit
        self.session_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.session_dir, PRIVATE_DIR_MODE)
        self._health.report("starting")
        try:
            await self.client.connect(self.on_event)
        except Exception as exc:
            log.exception("whatsapp: could not start the client")
            self._health.report("cannot start", str(exc)[:200])
            self._schedule_reconnect()
        await self._stop.wait()
        for task in (self._reconnecting, self._pair_timer):
            if task is not None:
                task.cancel()
        with contextlib.suppress(Exception):
            await self.client.disconnect()
        self.state = "stopped"
        self._health.report("stopped")

    async def stop(self) -> None:
        self._stop.set()

    async def on_event(self, event: WhatsAppEvent) -> None:
        """React to one event of the client."""
        try:
            if isinstance(event, Received):
                await self._received(event.message)
            elif isinstance(event, QrCode):
                await self._qr(event.code)
            elif isinstance(event, PairSuccess):
                await self._paired(event.account)
            elif isinstance(event, PairFailure):
                await self._pair_failed(event.error)
            elif isinstance(event, Connected):
                self._connected(event.account)
            elif isinstance(event, Disconnected):
                self._disconnected()
            elif isinstance(event, LoggedOut):
                await self._logged_out(event.reason)
        except Exception:
            log.exception("whatsapp: handling %s failed", type(event).__name__)

    def _connected(self, account: str) -> None:
        self.account = account or self.account
        self.state = "connected"
        if self._reconnecting is not None and self._reconnecting is not asyncio.current_task():
            self._reconnecting.cancel()
        self._reconnecting = None
        log.info("whatsapp: connected as %s", phone_of(self.account) or "(unknown)")
        self._health.report("connected")

    def _disconnected(self) -> None:
        if self._stop.is_set() or self.state in ("logged out", "not paired"):
            return
        self.state = "disconnected"
        log.warning("whatsapp: disconnected; reconnecting in %.0f s", self._reconnect_first)
        self._health.report("disconnected", "reconnecting")
        self._schedule_reconnect()

    def _schedule_reconnect(self) -> None:
        if self._reconnecting is None or self._reconnecting.done():
            self._reconnecting = asyncio.create_task(self._reconnect(), name="whatsapp-reconnect")

    async def _reconnect(self) -> None:
        """Connect again 5 s after a drop, backing off while it keeps failing."""
        delay = self._reconnect_first
        while not self._stop.is_set():
            await self._sleep(delay)
            if self._stop.is_set() or self.state in ("connected", "logged out", "not paired"):
                return
            if self.client.is_connected():
                return  # the library reconnected by itself; Connected follows
            try:
                await self.client.reconnect()
                log.info("whatsapp: reconnect attempt made")
            except Exception as exc:
                log.warning("whatsapp: reconnect failed (%s); next in %.0f s", exc, delay * 2)
                self._health.report("disconnected", f"reconnect failed: {str(exc)[:150]}")
            delay = min(delay * 2, self._reconnect_max)

    async def _logged_out(self, reason: str) -> None:
        self.state = "logged out"
        self._health.report("logged out", "send /whatsapp to pair again")
        log.warning("whatsapp: logged out (%s)", reason or "from the phone")
        self._audience = [(OWNER, OWNER)]
        await self._tell(
            f"WhatsApp was logged out ({reason or 'from the phone'}): Omega no longer receives "
            "WhatsApp messages. Send /whatsapp to pair again."
        )

    # -- pairing -------------------------------------------------------------------------

    async def request_pairing(self, channel: str, target: str, phone: str = "") -> str:
        """Start (or join) pairing for whoever asked: QR codes, then the outcome, go to them.
        With `phone`, a code to type on that phone instead. Returns the immediate answer."""
        if self.state == "connected" and self.account:
            return (
                f"WhatsApp is already paired as {phone_of(self.account)}. To link another "
                "phone, remove Omega under Linked devices on the phone, then send /whatsapp."
            )
        self._audience = [(channel, target)]
        if phone:
            digits = "".join(ch for ch in phone if ch.isdigit())
            if self.state != "pairing":
                await self._restart_client()
            try:
                code = await self.client.pair_phone(digits)
            except Exception as exc:
                return f"WhatsApp could not give a phone code ({exc}); scan the QR code instead."
            return (
                f"On the phone with +{digits}: WhatsApp > Settings > Linked devices > Link a "
                f"device > Link with phone number instead, and enter {code}."
            )
        if self.state == "pairing" and self._qr_png is not None:
            await self._tell(QR_TEXT.format(n=self._qr_count), self._qr_png)
            return "Pairing is under way; the current QR code is sent to you."
        await self._restart_client()
        return (
            "Pairing started: a QR code follows in a moment (also saved as "
            f"{self.qr_file}). New codes replace old ones until it is paired or times out."
        )

    async def _restart_client(self) -> None:
        self.state = "pairing"
        self._health.report("pairing", "waiting for a QR scan")
        if self._reconnecting is not None:
            self._reconnecting.cancel()
            self._reconnecting = None
        await self.client.reconnect()

    async def _qr(self, code: str) -> None:
        self.state = "pairing"
        self._qr_count += 1
        png = qr_png(code)
        self._qr_png = png
        try:
            self.session_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.qr_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
            with os.fdopen(fd, "wb") as handle:
                handle.write(png)
        except OSError as exc:
            log.warning("whatsapp: could not save %s: %s", self.qr_file, exc)
        with contextlib.suppress(Exception):
            self._terminal.write(
                f"\nWhatsApp pairing: scan this code (Linked devices > Link a device); "
                f"also saved as {self.qr_file}\n{qr_terminal(code)}\n"
            )
            self._terminal.flush()
        self._health.report("pairing", "waiting for a QR scan")
        if self._pair_timer is None or self._pair_timer.done():
            self._pair_timer = asyncio.create_task(self._pair_deadline(), name="whatsapp-pairing")
        await self._tell(QR_TEXT.format(n=self._qr_count), png)

    async def _pair_deadline(self) -> None:
        await self._sleep(self._pair_timeout)
        if self._stop.is_set() or self.state != "pairing":
            return
        await self._end_pairing()
        self.state = "not paired"
        self._health.report("not paired", "pairing timed out; send /whatsapp to try again")
        with contextlib.suppress(Exception):
            await self.client.disconnect()
        await self._tell(
            "WhatsApp pairing timed out: no code was scanned. Send /whatsapp to try again."
        )

    async def _end_pairing(self) -> None:
        self._qr_png = None
        self._qr_count = 0
        with contextlib.suppress(OSError):
            self.qr_file.unlink()
        if self._pair_timer is not None and self._pair_timer is not asyncio.current_task():
            self._pair_timer.cancel()
        self._pair_timer = None

    async def _paired(self, account: str) -> None:
        await self._end_pairing()
        self.account = account or self.account
        number = jid_user(self.account)
        text = f"WhatsApp paired as {phone_of(self.account)}."
        allowed = self.config.allowed_users
        if self.config.mode == "personal" and "*" not in allowed and number not in allowed:
            text += (
                f' To talk to me in your "message yourself" chat, add "{number}" to '
                '[channel.whatsapp] allowed_users (and "whatsapp:' + number + '" to [auth] owners).'
            )
        log.info("whatsapp: paired as %s", phone_of(self.account))
        await self._tell(text)  # told where the codes went, before WhatsApp is a route itself
        self._audience = [(OWNER, OWNER)]
        self.state = "connected"
        self._health.report("connected")

    async def _pair_failed(self, error: str) -> None:
        await self._end_pairing()
        self.state = "not paired"
        self._health.report("not paired", f"pairing failed: {error[:150]}")
        await self._tell(f"WhatsApp pairing failed: {error}. Send /whatsapp to try again.")

    # -- receiving -----------------------------------------------------------------------

    def _own_users(self) -> set[str]:
        return {jid_user(self.account)} - {""}

    def _echo(self, message: WaMessage) -> bool:
        return message.id in self._sent

    def _remember_sent(self, message_id: str) -> None:
        if not message_id:
            return
        self._sent[message_id] = None
        self._sent.move_to_end(message_id)
        while len(self._sent) > SENT_IDS_KEPT:
            self._sent.popitem(last=False)

    async def _received(self, message: WaMessage) -> None:
        async with self._receiving:
            if message.is_from_me and self._sending:
                # Our own reply may come back before its send returned its id.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._sends_idle.wait(), 30)
            own = self._own_users()
            if self._echo(message) or not wanted(self.config.mode, own, message):
                return
            incoming = await to_incoming(self.client, message, own, self._max_download)
            if incoming is None or self._submit is None:
                return
            try:  # WhatsApp does not deliver it again: tried until the store takes it
                await inbound.store(NAME, incoming, self._submit, self._sleep, self._stop)
            except inbound.Stopped:
                return
            try:
                await self.client.mark_read(message)
            except Exception as exc:
                log.debug("whatsapp: read receipt failed: %s", exc)

    # -- sending -------------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> None:
        """Send text (WhatsApp marks, in pieces within 4096) or a photo with its caption.

        Raises while no account is linked, so what is meant for the owner goes to another
        channel that reaches them (the gateway tries the next route)."""
        if self.state in ("pairing", "logged out", "not paired"):
            raise ConnectionError(f"WhatsApp is {self.state}: no account is linked")
        chat = chat_jid(message.target)
        text = message.text
        self._sending += 1
        self._sends_idle.clear()
        try:
            if message.photo is not None:
                caption = ""
                if utf16_len(text) <= MAX_CAPTION_UNITS:
                    caption, text = text, ""
                rendered, _ = render_whatsapp(caption)
                self._remember_sent(await self.client.send_image(chat, message.photo, rendered))
            code = False
            for piece in split_text(text):
                rendered, code = render_whatsapp(piece, code)
                if rendered.strip():
                    self._remember_sent(await self.client.send_text(chat, rendered))
        finally:
            self._sending -= 1
            if not self._sending:
                self._sends_idle.set()

    async def send_typing(self, target: str) -> None:
        await self.client.send_composing(chat_jid(target))

    async def _sleep(self, secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), secs)
