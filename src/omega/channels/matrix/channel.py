"""The Matrix channel: the homeserver's /sync in, room messages out (matrix-nio).

Exactly once: a message's id for Omega is `matrix:<event_id>`, so the durable inbox answers an
event seen twice once. The sync token is saved (state.py) only after every event of its sync
was handed to `submit` (durable by then): a crash in between syncs from the older token after
the restart, and the inbox drops what it already has. The very first sync only marks where to
start, so a new account's history is never answered. Replies go with a transaction id made
from the reply's stable id, so a reply re-sent after a crash is recognised by the homeserver.

In a room of more than two members Omega answers only when mentioned; a room of two is a
direct chat. A message in a thread (`m.thread`) is answered in that thread, a conversation of
its own (its key, and reply target, is `<room id> <root event id>`); a group room without a
thread is one conversation, apart from the person's direct chat. End-to-end encrypted rooms
cannot be read (no libolm): each gets one plain notice saying so, and the self-check warns.

One module because receiving and sending share one nio client, one room lookup (which rooms
are direct, the direct room of a person) and one stop signal; logging in is session.py and
the message contents are events.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from omega.channels import inbound
from omega.channels.base import Submit
from omega.channels.health import HealthReporter
from omega.channels.matrix.config import MAX_MESSAGE_UNITS, MatrixConfig
from omega.channels.matrix.events import (
    addressed,
    image_content,
    in_thread,
    parse_target,
    since_invited,
    strip_reply_fallback,
    text_contents,
    thread_root,
    thread_target,
    transaction_id,
)
from omega.channels.matrix.session import (
    HomeserverError,
    LoginRefusedError,
    log_in,
    new_client,
)
from omega.channels.matrix.state import SyncState
from omega.channels.text import split_text
from omega.errors import OmegaError
from omega.text import scrub
from omega.types import Attachment, IncomingMessage, OutgoingMessage

if TYPE_CHECKING:
    from nio import AsyncClient

log = logging.getLogger(__name__)

NAME = "matrix"
RETRY_SECS = (1.0, 5.0, 30.0, 120.0)  # waits after a failure, the last repeated
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024
LOGIN_WAIT_SECS = 60.0  # how long a send waits for the login (a reply replayed at start)
TIMELINE_LIMIT = 50  # events per room per sync; a longer gap is fetched with /messages
ENCRYPTED_NOTICE = (
    "This room is end-to-end encrypted, and I cannot read encrypted messages (my Matrix "
    "connection has no end-to-end encryption). Please talk to me in a room without encryption."
)
MEDIA: dict[str, Literal["image", "document", "audio", "video"]] = {
    "m.image": "image",
    "m.file": "document",
    "m.audio": "audio",  # a voice message when it carries VOICE
    "m.video": "video",
}
VOICE = "org.matrix.msc3245.voice"  # what marks an m.audio as a recorded voice message
SYNC_FILTER = {
    "presence": {"not_types": ["*"]},
    "account_data": {"not_types": ["*"]},
    "room": {
        "timeline": {"limit": TIMELINE_LIMIT},
        "state": {"lazy_load_members": False},
        "ephemeral": {"not_types": ["*"]},
        "account_data": {"not_types": ["*"]},
    },
}

T = TypeVar("T")


class MatrixSendError(OmegaError):
    """The homeserver refused a message or an upload."""


class StoppedError(OmegaError):
    """`stop` was called while waiting on the homeserver."""


class MatrixChannel:
    """Syncs with the homeserver and hands each message for Omega to the gateway."""

    name = NAME

    def __init__(
        self,
        config: MatrixConfig,
        state: SyncState,
        health: HealthReporter,
        owners: tuple[str, ...] = (),
        dropped: inbound.Dropped | None = None,
    ) -> None:
        self.config = config
        self.dropped = dropped  # told of an event skipped unread (audited, the owner told)
        self.state = state
        self.health = health
        self.owners = owners  # owners' Matrix ids, whose invitations are always accepted
        self.client: AsyncClient = new_client(config, state)
        self.display_name = ""
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()  # logged in: sends wait for it (a replay comes early)
        self._lock = asyncio.Lock()  # the state is saved by the sync loop and by sends

    # -- receiving ---------------------------------------------------------------------------

    async def run(self, submit: Submit) -> None:
        """Log in, then sync until `stop`; failures are reported and retried."""
        from aiohttp import ClientError

        # Built at start, run when this replica took the channel over: sync on from the token
        # the last leader left in the store.
        await asyncio.to_thread(self.state.refresh)

        failures = 0
        try:
            while not self._stop.is_set():
                try:
                    self.health.report("logging in")
                    await self._until_stopped(log_in(self.client, self.config, self.state))
                    self._ready.set()
                    await self._learn_own_name()
                    await self._sync_forever(submit)
                except StoppedError:
                    break
                except LoginRefusedError as exc:
                    log.error("matrix: %s; check [channel.matrix]. Not started.", exc)
                    self.health.report("login refused", str(exc))
                    return
                except (TimeoutError, HomeserverError, ClientError, OSError) as exc:
                    detail = str(exc)[:300] or type(exc).__name__
                    log.warning("matrix: %s", detail)
                    self.health.report("failed", detail)
                    await self._sleep(RETRY_SECS[min(failures, len(RETRY_SECS) - 1)])
                    failures += 1
            self.health.report("stopped")
        finally:
            await self.client.close()

    async def _learn_own_name(self) -> None:
        from nio import ProfileGetDisplayNameResponse

        answer = await self._until_stopped(self.client.get_displayname(self.client.user_id))
        if isinstance(answer, ProfileGetDisplayNameResponse):
            self.display_name = answer.displayname or ""

    async def _sync_forever(self, submit: Submit) -> None:
        from nio import SyncError

        full_state = True  # the first sync of a process learns every room's members
        while not self._stop.is_set():
            answer = await self._until_stopped(
                self.client.sync(
                    timeout=int(self.config.sync_timeout_secs * 1000),
                    sync_filter=SYNC_FILTER,
                    since=self.state.next_batch or None,
                    full_state=full_state,
                )
            )
            if isinstance(answer, SyncError):
                if answer.status_code == "M_UNKNOWN_TOKEN":
                    raise HomeserverError("the access token is no longer valid; logging in")
                raise HomeserverError(f"sync failed: {answer.message}")
            full_state = False
            self.health.report("syncing", self._encrypted_detail())
            first = not self.state.next_batch
            for room_id, info in answer.rooms.invite.items():
                await self._invited(room_id, info.invite_state)
            if not first:  # the first sync is history from before Omega: not answered
                for room_id, joined in answer.rooms.join.items():
                    sources = [event.source for event in joined.timeline.events]
                    new_room = since_invited(sources, self.client.user_id) is not None
                    if joined.timeline.limited and joined.timeline.prev_batch and not new_room:
                        gap = await self._gap(room_id, joined.timeline.prev_batch)
                        sources = [*(event.source for event in gap), *sources]
                    for source in sources[since_invited(sources, self.client.user_id) or 0 :]:
                        await self._event(room_id, source, submit)
            async with self._lock:
                self.state.next_batch = answer.next_batch
                await asyncio.to_thread(self.state.save)

    async def _gap(self, room_id: str, prev_batch: str) -> list[Any]:
        """The events between the saved token and a limited timeline, oldest first."""
        from nio import MessageDirection, RoomMessagesResponse

        found: list[Any] = []
        start = prev_batch
        for _ in range(20):  # at most 20 pages of 100 events
            page = await self._until_stopped(
                self.client.room_messages(
                    room_id,
                    start,
                    end=self.state.next_batch,
                    direction=MessageDirection.back,
                    limit=100,
                )
            )
            if not isinstance(page, RoomMessagesResponse) or not page.chunk:
                break
            found.extend(page.chunk)
            if not page.end or page.end == start:
                break
            start = page.end
        return list(reversed(found))

    async def _invited(self, room_id: str, invite_state: list[Any]) -> None:
        """Join a room Omega is invited to, unless only allowed people's invitations count
        (`invites`)."""
        inviter = ""
        for event in invite_state:
            source = getattr(event, "source", {})
            if (
                source.get("type") == "m.room.member"
                and source.get("state_key") == self.client.user_id
            ):
                inviter = str(source.get("sender") or "")
        trusted = inviter in self.config.allowed_users or inviter in self.owners
        if not trusted and not self.config.invites_from_anyone():
            log.info("matrix: declined %s's invitation to %s", inviter or "someone", room_id)
            await self._until_stopped(self.client.room_leave(room_id))
            return
        from nio import JoinError

        joined = await self._until_stopped(self.client.join(room_id))
        if isinstance(joined, JoinError):
            log.warning("matrix: could not join %s: %s", room_id, joined.message)

    async def _event(self, room_id: str, source: Mapping[str, Any], submit: Submit) -> None:
        """Hand one timeline event to Omega when it is a message for it. One that cannot be
        read is skipped, logged and reported (its sync would bring it back, and stop the
        channel, forever); the homeserver away is raised: synced again. One read is submitted
        until the store takes it (a store failure ended the channel), or StoppedError."""
        from aiohttp import ClientError

        event_id = str(source.get("event_id"))[:100]
        try:
            message = await self._incoming(room_id, source)
        except (StoppedError, TimeoutError, HomeserverError, ClientError, OSError):
            raise
        except Exception as exc:
            log.exception("matrix: event %s in %s could not be read; skipped", event_id, room_id)
            if self.dropped is not None:
                try:
                    await self.dropped(event_id, 1, repr(exc)[:300])
                except Exception:
                    log.exception("matrix: the skipped event %s could not be reported", event_id)
            return
        if message is not None:
            try:  # the sync token is saved only once this returned
                await inbound.store(NAME, message, submit, self._sleep, self._stop)
            except inbound.Stopped:
                raise StoppedError from None

    async def _incoming(self, room_id: str, source: Mapping[str, Any]) -> IncomingMessage | None:
        """What a timeline event says to Omega, or None when it is not a message for it (an
        encrypted room's is not: the room is told once that it cannot be read)."""
        sender = str(source.get("sender") or "")
        kind = source.get("type")
        if sender == self.client.user_id or not sender:
            return None
        if kind == "m.room.encrypted":
            await self._tell_encrypted(room_id)
            return None
        content = source.get("content")
        if kind != "m.room.message" or not isinstance(content, Mapping):
            return None
        relation = content.get("m.relates_to")
        if isinstance(relation, Mapping) and relation.get("rel_type") == "m.replace":
            return None  # an edit: the first version was answered already
        msgtype = content.get("msgtype")
        if msgtype == "m.notice":
            return None  # other bots' notices: answering them makes loops
        is_group = await self._members(room_id) > 2
        if is_group and not addressed(content, self.client.user_id, self.display_name):
            return None
        text, attachments = await self._content(content)
        if not text and not attachments:
            return None
        room = self.client.rooms.get(room_id)
        name = (room.user_name(sender) if room is not None else None) or sender
        root = thread_root(content)
        return IncomingMessage(
            channel=NAME,
            sender_id=sender,
            sender_name=scrub(name),
            text=scrub(text),
            is_group=is_group,
            reply_target=thread_target(room_id, root),
            thread=thread_target(room_id, root) if root else "",
            attachments=attachments,
            id=f"matrix:{source.get('event_id')}",
            assurance="platform",  # the sender's homeserver signs for its users
        )

    async def _content(self, content: Mapping[str, Any]) -> tuple[str, list[Attachment]]:
        """A message's text and its file, downloaded (a note instead when it cannot be)."""
        msgtype = str(content.get("msgtype") or "")
        body = str(content.get("body") or "")
        if msgtype not in MEDIA:
            return strip_reply_fallback(body), []
        kind = MEDIA[msgtype]
        if kind == "audio" and VOICE not in content:
            kind = "document"  # a music or audio file: kept as a file, not transcribed
        filename = str(content.get("filename") or body or "file")
        caption = body if content.get("filename") and body != filename else ""
        info = content.get("info")
        info = info if isinstance(info, Mapping) else {}
        mime = str(info.get("mimetype") or "")
        size = info.get("size")
        url = content.get("url")
        if not isinstance(url, str) or not url.startswith("mxc://"):
            return f"[The file {filename} sent here is encrypted; I cannot open it.]", []
        if isinstance(size, int) and size > MAX_DOWNLOAD_BYTES:
            return f"[The file {filename} sent here is too large for me to open.] {caption}", []
        data = await self._download(url)
        if data is None or len(data) > MAX_DOWNLOAD_BYTES:
            return f"[The file {filename} sent here could not be downloaded.] {caption}", []
        return caption, [Attachment(kind=kind, data=data, name=filename, mime_type=mime)]

    async def _download(self, url: str) -> bytes | None:
        from nio import MemoryDownloadResponse

        try:
            answer = await self._until_stopped(self.client.download(mxc=url))
        except ValueError as exc:  # no URL nio can make of it ("mxc://[x", a lone surrogate)
            log.warning("matrix: could not download %r: %s", url[:200], exc)
            return None
        if isinstance(answer, MemoryDownloadResponse):
            return bytes(answer.body)
        log.warning("matrix: could not download %s: %s", url, getattr(answer, "message", ""))
        return None

    async def _members(self, room_id: str) -> int:
        """How many people are in the room (joined or invited), Omega included."""
        room = self.client.rooms.get(room_id)
        if room is not None and room.member_count:
            return int(room.member_count)
        from nio import JoinedMembersResponse

        answer = await self._until_stopped(self.client.joined_members(room_id))
        return len(answer.members) if isinstance(answer, JoinedMembersResponse) else 3

    async def _tell_encrypted(self, room_id: str) -> None:
        """Say once in an encrypted room that Omega cannot read it."""
        if room_id in self.state.told_encrypted:
            return
        log.warning("matrix: room %s is end-to-end encrypted; its messages are not read", room_id)
        content: dict[str, object] = {"msgtype": "m.notice", "body": ENCRYPTED_NOTICE}
        await self._send_content(room_id, content, transaction_id(f"encrypted:{room_id}", "0"))
        async with self._lock:
            self.state.tell_encrypted(room_id)
            await asyncio.to_thread(self.state.save)
        self.health.report("syncing", self._encrypted_detail())

    def _encrypted_detail(self) -> str:
        count = len(self.state.told_encrypted)
        return f"{count} encrypted room(s) not answered" if count else ""

    # -- sending -----------------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> None:
        """Send a reply (split when long, as Matrix HTML) and its picture to the room."""
        try:
            await asyncio.wait_for(self._until_stopped(self._ready.wait()), LOGIN_WAIT_SECS)
        except TimeoutError:
            raise MatrixSendError("not logged in to the homeserver (yet)") from None
        target, root = parse_target(message.target)
        room_id = await self._room_for(target)
        if message.photo is not None:
            await self._send_photo(room_id, message.photo, message.id, root)
        if message.text.strip():
            pieces = split_text(message.text, MAX_MESSAGE_UNITS)
            for index, content in enumerate(text_contents(pieces)):
                txn = transaction_id(message.id, str(index))
                await self._send_content(room_id, in_thread(content, root), txn)
        if message.kind in ("reply", "error"):  # the answer: done typing (not after a welcome)
            await self._until_stopped(self.client.room_typing(room_id, False))

    async def _send_photo(self, room_id: str, data: bytes, message_id: str, root: str) -> None:
        import io

        from nio import UploadResponse

        mime = "image/png" if data.startswith(b"\x89PNG") else "image/jpeg"
        name = "image.png" if mime == "image/png" else "image.jpg"
        uploaded, _ = await self._until_stopped(
            self.client.upload(io.BytesIO(data), mime, name, filesize=len(data))
        )
        if not isinstance(uploaded, UploadResponse):
            raise MatrixSendError(f"the upload failed: {getattr(uploaded, 'message', '')}")
        content = in_thread(image_content(uploaded.content_uri, data, name, mime), root)
        await self._send_content(room_id, content, transaction_id(message_id, "photo"))

    async def _send_content(self, room_id: str, content: dict[str, object], txn: str) -> None:
        from nio import RoomSendResponse

        answer = await self._until_stopped(
            self.client.room_send(room_id, "m.room.message", content, tx_id=txn)
        )
        if not isinstance(answer, RoomSendResponse):
            raise MatrixSendError(f"{room_id} refused a message: {answer.message}")

    async def _room_for(self, target: str) -> str:
        """The room a message to `target` goes to: a room id as it is; for a person's id
        their direct room with Omega, made (and remembered) when there is none."""
        if not target.startswith("@"):
            return target
        known = self.state.direct.get(target)
        if known:  # made by Omega, perhaps not synced yet
            return known
        for room_id, room in self.client.rooms.items():
            if room.member_count == 2 and target in room.users:
                return await self._remember_direct(target, room_id)
        from nio import RoomCreateResponse

        made = await self._until_stopped(self.client.room_create(is_direct=True, invite=[target]))
        if not isinstance(made, RoomCreateResponse):
            raise MatrixSendError(f"could not open a direct room with {target}: {made.message}")
        return await self._remember_direct(target, made.room_id)

    async def _remember_direct(self, user_id: str, room_id: str) -> str:
        async with self._lock:
            self.state.direct[user_id] = room_id
            await asyncio.to_thread(self.state.save)
        return room_id

    async def send_typing(self, target: str) -> None:
        """Show Omega typing in the room (for 30 s, or until its reply)."""
        if self._ready.is_set():
            room_id = await self._room_for(parse_target(target)[0])
            await self._until_stopped(self.client.room_typing(room_id, True, timeout=30_000))

    async def stop(self) -> None:
        """End `run`: a sync in flight is cancelled."""
        self._stop.set()

    # -- waiting -----------------------------------------------------------------------------

    async def _until_stopped(self, work: Awaitable[T]) -> T:
        """`work`'s result, or StoppedError as soon as `stop` is called."""
        task = asyncio.ensure_future(work)
        stopper = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        if not task.done():
            task.cancel()
            raise StoppedError
        return task.result()

    async def _sleep(self, secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), secs)
