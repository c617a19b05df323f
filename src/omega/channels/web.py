"""The web page's chat as a channel: the owner talks through the same pipeline as anywhere.

Everything said on the page and everything Omega sends to it (replies, commands' answers,
reminders, alerts, images) is kept in memory.db (`web_events`), so a reload shows the
conversation, and is pushed to every open page as it happens (Server-Sent Events). Images are
kept under $OMEGA_HOME/web-media (0600) and served back only to a logged-in page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from omega.channels.base import Submit
from omega.memory.db import utc_now
from omega.memory.store import Store
from omega.paths import PRIVATE_DIR_MODE
from omega.text import scrub
from omega.types import Attachment, IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

CHANNEL = "web"
KEEP_EVENTS = 2000  # the page's history beyond this is in the audit log and conversations
START_WAIT_SECS = 10.0  # a page may be faster than the gateway's start
MAX_QUEUE = 500  # a page that does not read its events is dropped, never Omega held up
IMAGE_TYPES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif"}
IMAGE_TYPES |= {"webp": "image/webp"}
MEDIA_NAME = re.compile(r"^[0-9a-f]{32}\.(png|jpg|jpeg|gif|webp)$")
_MAGIC = {
    b"\x89PNG": "png",
    b"\xff\xd8\xff": "jpg",
    b"GIF8": "gif",
}


@dataclass(frozen=True)
class WebEvent:
    """One line of the page's chat: said by the owner ("in") or sent by Omega ("out")."""

    id: int
    created_at: str
    direction: Literal["in", "out"]
    kind: str
    text: str
    media: str = ""

    def as_json(self) -> dict[str, Any]:
        """The event as the page receives it."""
        data = asdict(self)
        data["media_url"] = f"/media/{self.media}" if self.media else ""
        return data


def image_extension(data: bytes) -> str | None:
    """The image type of `data` (by its first bytes, never by a name); None when it is not
    an image the page shows."""
    for magic, ext in _MAGIC.items():
        if data.startswith(magic):
            return ext
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


class WebChannel:
    """The `web` channel: one owner, any number of open pages."""

    def __init__(self, store: Store, media: Path, owner_id: str) -> None:
        self.store = store
        self.media = media
        self.owner_id = owner_id
        self._submit: Submit | None = None
        self._running = asyncio.Event()
        self._stopped = asyncio.Event()
        self._viewers: set[asyncio.Queue[dict[str, Any] | None]] = set()

    @property
    def name(self) -> str:
        """Channel name, as in config and audit."""
        return CHANNEL

    @property
    def stopped(self) -> bool:
        """Whether the channel has stopped (pages' event streams end)."""
        return self._stopped.is_set()

    def owner_target(self) -> str | None:
        """Where the owner is reached on this channel now: only while a page is open (an alert
        nobody sees is kept by the gateway until someone does)."""
        return self.owner_id if self._viewers and not self.stopped else None

    async def run(self, submit: Submit) -> None:
        """Take messages from the page (`say`) until the channel is stopped."""
        self._submit = submit
        self._running.set()
        await self._stopped.wait()
        self._submit = None

    async def stop(self) -> None:
        """Stop taking messages; open pages' event streams end."""
        self._stopped.set()
        for queue in list(self._viewers):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    # ---- the page's side --------------------------------------------------------------------

    async def say(self, text: str, image: bytes | None = None) -> WebEvent:
        """The owner wrote on the page: keep it, show it on every open page, hand it to the
        gateway. Raises RuntimeError when Omega is not taking messages (stopping, or not
        started within a few seconds)."""
        if not self._running.is_set() and not self.stopped:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._running.wait(), START_WAIT_SECS)
        submit = self._submit
        if submit is None or self.stopped:
            raise RuntimeError("Omega is not taking messages now")
        text = scrub(text)
        attachments: list[Attachment] = []
        media = ""
        if image is not None:
            ext = image_extension(image)
            if ext is None:
                raise ValueError("only PNG, JPEG, GIF and WebP images can be sent")
            media = await asyncio.to_thread(self._keep_image, image, ext)
            attachments.append(
                Attachment(
                    kind="image", data=image, name=f"image.{ext}", mime_type=IMAGE_TYPES[ext]
                )
            )
        event = await self._record("in", "message", text, media)
        await submit(
            IncomingMessage(
                channel=CHANNEL,
                sender_id=self.owner_id,
                sender_name="owner",
                text=text,
                attachments=attachments,
                assurance="local",  # the page's login token
            )
        )
        return event

    def subscribe(self) -> asyncio.Queue[dict[str, Any] | None]:
        """A queue of what happens on the chat from now on (None: the stream ends)."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(MAX_QUEUE)
        self._viewers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        """The page closed its stream."""
        self._viewers.discard(queue)

    def history(self, limit: int = 200) -> list[WebEvent]:
        """The latest chat events, oldest first (run on the database thread)."""
        rows = self.store.query(
            "SELECT * FROM (SELECT * FROM web_events ORDER BY id DESC LIMIT ?) AS latest "
            "ORDER BY id",
            (limit,),
        )
        return [WebEvent(**dict(row)) for row in rows]

    # ---- the gateway's side -----------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> None:
        """Keep and show one outgoing message (images are kept as files and shown inline)."""
        media = ""
        text = message.text
        if message.photo is not None:
            ext = image_extension(message.photo)
            if ext is None:
                text = f"[a file that is not an image was not shown: {message.text}]"
            else:
                media = await asyncio.to_thread(self._keep_image, message.photo, ext)
        await self._record("out", message.kind, text, media)

    async def send_typing(self, target: str) -> None:
        """Show "typing..." on open pages (not kept)."""
        self._broadcast({"kind": "typing", "direction": "out", "text": ""})

    # ---- internals ---------------------------------------------------------------------------

    async def _record(
        self, direction: Literal["in", "out"], kind: str, text: str, media: str
    ) -> WebEvent:
        event_id, created = await self.store.call(self._insert, direction, kind, text, media)
        event = WebEvent(event_id, created, direction, kind, text, media)
        self._broadcast(event.as_json())
        return event

    def _insert(self, direction: str, kind: str, text: str, media: str) -> tuple[int, str]:
        created = utc_now()
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO web_events (created_at, direction, kind, text, media) "
                "VALUES (?, ?, ?, ?, ?)",
                (created, direction, kind, text, media),
            )
            event_id = int(cursor.lastrowid or 0)
            conn.execute("DELETE FROM web_events WHERE id <= ?", (event_id - KEEP_EVENTS,))
        return event_id, created

    def _broadcast(self, data: dict[str, Any]) -> None:
        for queue in list(self._viewers):
            try:
                queue.put_nowait(data)
            except asyncio.QueueFull:  # a page that stopped reading: its stream is ended
                log.warning("a web page stopped reading its events; its stream is closed")
                self._viewers.discard(queue)

    def _keep_image(self, data: bytes, ext: str) -> str:
        self.media.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        name = f"{uuid.uuid4().hex}.{ext}"
        fd = os.open(self.media / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return name

    def media_file(self, name: str) -> tuple[Path, str] | None:
        """The kept image of this name and its content type; None for anything else."""
        match = MEDIA_NAME.match(name)
        if match is None:
            return None
        path = self.media / name
        if path.is_symlink() or not path.is_file():
            return None
        return path, IMAGE_TYPES[match.group(1)]
