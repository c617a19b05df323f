"""The Discord channel: the gateway websocket in (discord.py), the REST API out.

discord.py keeps the gateway connection: HELLO, IDENTIFY, heartbeats, and after a dropped
socket or a RECONNECT it RESUMEs the session, so Discord replays the events sent meanwhile.
Each message's id for Omega is `discord:<message id>`, so one replayed or seen twice is
answered once by the durable inbox; a crash after `submit` is answered after the restart.

Messages reach `submit` one at a time, in the order they came, from a queue that `on_message`
fills; attachments are downloaded before `submit`, so their bytes are in the inbox too. Only a
message that cannot be read is given up, after a few tries; one read is submitted until the
store takes it (omega.channels.inbound).
Replies never ping anyone (`AllowedMentions.none()`): a model's "@everyone" stays text.

Nothing of a refused stranger is kept: a channel is remembered for catching up (state.py)
only once Omega has answered in it with anything but a refusal, and the DM channels of users
are looked up when a reply goes out, kept in a bounded map. A guild thread is a channel of its
own, so its reply target (`channel:<thread id>`) makes it a conversation of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import logging
import re
from collections import OrderedDict

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket

from omega.channels import inbound
from omega.channels.base import Submit
from omega.channels.discord.config import DiscordConfig
from omega.channels.discord.files import download_attachments, photo_filename
from omega.channels.discord.pieces import discord_pieces
from omega.channels.discord.state import DiscordState
from omega.channels.health import HealthReporter
from omega.channels.inbound import Dropped
from omega.errors import OmegaError
from omega.text import scrub
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

NAME = "discord"
CHANNEL_TARGET = "channel:"  # a reply target naming a guild channel; a bare id is a user (DM)
RETRY_SECS = (1.0, 5.0, 30.0, 120.0)
HEALTH_REFRESH_SECS = 30.0  # waits after a failed start, the last one repeated
CATCH_UP_LIMIT = 100  # messages read back per channel after a new session
DM_CHANNELS_KEPT = 1000  # users whose DM channel id is remembered, most recently used last
_ANSWERED_TYPES = ("default", "reply")  # joins, pins, boosts... are not messages to answer


class DiscordSendError(OmegaError):
    """Discord refused a message or could not be reached."""


def message_id(message: discord.Message) -> str:
    """The inbox id of a Discord message (the same for the same message, replayed or not)."""
    return f"discord:{message.id}"


def _in_guild(message: discord.Message) -> bool:
    """Whether a message was written in a guild (a server), not in a DM."""
    return message.guild is not None or getattr(message.channel, "guild_id", None) is not None


class DiscordChannel:
    """A Discord bot: DMs, and @mentions in the guild channels it is in."""

    name = NAME

    def __init__(
        self,
        config: DiscordConfig,
        state: DiscordState,
        health: HealthReporter,
        dropped: Dropped | None = None,
    ) -> None:
        self.config = config
        self._dropped = dropped
        self.state = state
        self.health = health
        self.client: discord.Client | None = None
        self.account = ""  # the bot's name once logged in
        self._stop = asyncio.Event()
        # Messages to hand over, in order, each with whether it is a DM (None: as it says).
        self._queue: asyncio.Queue[tuple[discord.Message, bool | None]] = asyncio.Queue()
        self._catching_up: asyncio.Task[None] | None = None
        self._online = False  # the gateway session is up (READY or RESUMED, not since lost)
        self._dm_channels: OrderedDict[str, int] = OrderedDict()  # user id -> DM channel id
        self._saving = asyncio.Lock()

    # -- receiving -----------------------------------------------------------------------

    async def run(self, submit: Submit) -> None:
        """Connect (again after failures) and hand each message to `submit` until `stop`."""
        # Every REST call goes to api_url (a proxy or a test double may stand in for Discord).
        discord.http.Route.BASE = self.config.api_url
        # discord.py's debug log holds every gateway payload (people's messages): never logged.
        logging.getLogger("discord").setLevel(max(logging.INFO, log.getEffectiveLevel()))
        # Omega has no voice channels: no warning that voice's libraries are missing.
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        # Built at start, run when this replica took the channel over: catch up on the
        # channels the last leader left in the store, not those known when it was built.
        await asyncio.to_thread(self.state.refresh)
        consumer = asyncio.create_task(self._consume(submit))
        failures = 0
        try:
            while not self._stop.is_set():
                outcome = await self._session()
                if outcome == "final":
                    return  # its health says why (token or intent refused)
                if self._stop.is_set():
                    break
                failures = failures + 1 if outcome == "failed" else 0
                await self._sleep(RETRY_SECS[min(max(failures - 1, 0), len(RETRY_SECS) - 1)])
        finally:
            for task in (consumer, self._catching_up):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        self.health.report("stopped")

    async def _session(self) -> str:
        """One client from login to close: "final" (token or intents refused: retrying cannot
        help), "failed" (Discord unreachable or the connection lost for good), or "ended"."""
        client = self._new_client()
        self.client = client
        self.health.report("connecting")
        try:
            async with client:
                await client.login(self.config.token())
                self.account = client.user.name if client.user else ""
                # The gateway's address as Discord gives it (GET /gateway/bot).
                _, url, _ = await client.http.get_bot_gateway()
                DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
                connecting = asyncio.create_task(client.connect(reconnect=True))
                stopping = asyncio.create_task(self._stop.wait())
                while not connecting.done() and not stopping.done():
                    await asyncio.wait(
                        {connecting, stopping},
                        timeout=HEALTH_REFRESH_SECS,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if self._online:  # rewritten often, so status can tell it is alive
                        self.health.report("running")
                stopping.cancel()
                if not connecting.done():
                    await client.close()
                await connecting
                return "ended"
        except discord.LoginFailure as exc:
            log.error("discord: the bot token was rejected (%s); check [channel.discord]", exc)
            self.health.report("token rejected", "check bot_token or DISCORD_BOT_TOKEN")
            return "final"
        except discord.PrivilegedIntentsRequired:
            detail = "switch on the Message Content intent in the Bot page, or turn it off here"
            log.error("discord: Discord refused the privileged intent: %s", detail)
            self.health.report("intent refused", detail)
            return "final"
        except (
            discord.HTTPException,
            discord.GatewayNotFound,
            discord.ConnectionClosed,
            aiohttp.ClientError,
            OSError,
            TimeoutError,
        ) as exc:
            log.warning("discord: %s", str(exc)[:300] or type(exc).__name__)
            self.health.report("failed", str(exc)[:300] or type(exc).__name__)
            return "failed"
        except Exception as exc:  # a payload discord.py could not read: start over
            log.exception("discord: the connection failed")
            self.health.report("failed", f"{type(exc).__name__}: {str(exc)[:200]}")
            return "failed"
        finally:
            self._online = False
            self.client = None

    def _new_client(self) -> discord.Client:
        intents = discord.Intents.none()
        intents.guilds = True
        intents.dm_messages = True
        intents.guild_messages = self.config.guilds
        # Not needed for DMs and @mentions (Discord sends their text without it).
        intents.message_content = self.config.message_content_intent
        client = discord.Client(
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            max_messages=None,
            chunk_guilds_at_startup=False,
        )

        async def on_ready() -> None:  # a new session: what it missed is in the history
            self._online = True
            self.health.report("running")
            log.info("discord: connected as %s", self.account)
            self._catching_up = asyncio.create_task(self._catch_up(client))

        async def on_resumed() -> None:
            self._online = True
            self.health.report("running")

        async def on_disconnect() -> None:  # discord.py reconnects (and resumes) by itself
            self._online = False
            self.health.report("reconnecting")

        async def on_message(message: discord.Message) -> None:
            self._queue.put_nowait((message, None))

        for handler in (on_ready, on_resumed, on_disconnect, on_message):
            client.event(handler)
        return client

    async def _consume(self, submit: Submit) -> None:
        """Hand the queued messages to `submit`, in order: each read (or given up unread), then
        stored however long the store is away; `run` cancels it at the stop."""
        while True:
            message, dm = await self._queue.get()
            if dm is None:
                dm = not _in_guild(message)
            try:
                read, incoming = await inbound.read(
                    NAME,
                    str(message.id),
                    functools.partial(self._incoming, message, dm),
                    self._sleep,
                    self._stop,
                    self._dropped,
                )
                if not read:  # given up: logged and reported
                    continue
                if incoming is not None:
                    await inbound.store(NAME, incoming, submit, self._sleep, self._stop)
            except inbound.Stopped:  # left for the next start's catch-up
                return
            if str(message.channel.id) in self.state.channels:  # answered there before
                try:
                    await self._handed(message.channel.id, message.id, dm)
                except Exception:  # stored all the same; only the catch-up mark is behind
                    log.exception("discord: message %s not noted as handed", message.id)

    async def _handed(self, channel_id: int, message_id: int, dm: bool) -> None:
        """Note the newest message of a remembered channel (one change and save at a time:
        receiving and sending both note)."""
        async with self._saving:
            if self.state.handed(channel_id, message_id, dm):
                await asyncio.to_thread(self.state.save)

    async def _catch_up(self, client: discord.Client) -> None:
        """Queue what the remembered channels received after the last message handed over
        (sent while Omega was down, or in a session Discord did not resume)."""
        for channel_id, last, dm in self.state.tracked():
            if dm:
                channel = client.get_partial_messageable(
                    channel_id, type=discord.ChannelType.private
                )
            else:
                channel = client.get_partial_messageable(channel_id)
            try:
                found = await self._history(client, channel, last)
            except (discord.HTTPException, aiohttp.ClientError) as exc:
                log.warning("discord: could not read channel %s's history: %s", channel_id, exc)
                continue
            for message in sorted(found, key=lambda m: m.id):
                self._queue.put_nowait((message, dm))

    async def _history(
        self, client: discord.Client, channel: discord.PartialMessageable, last: int
    ) -> list[discord.Message]:
        """The messages of `channel` after `last` (one page, as `history` reads it); one that
        discord.py cannot parse (an attachment without `size`) is logged, reported, skipped."""
        state = client._connection  # history's own parser, but one message at a time
        found: list[discord.Message] = []
        for raw in await state.http.logs_from(channel.id, CATCH_UP_LIMIT, after=last):
            try:
                found.append(state.create_message(channel=channel, data=raw))
            except Exception as exc:
                ident = str(raw.get("id"))[:30] if isinstance(raw, dict) else "?"
                log.warning("discord: message %s in %s unreadable: %r", ident, channel.id, exc)
                await inbound.report(NAME, self._dropped, ident, 1, exc)
        return found

    async def _incoming(self, message: discord.Message, dm: bool) -> IncomingMessage | None:
        """The IncomingMessage for `message`, or None when it is not for Omega (a bot's, a
        service message, a guild message that does not mention Omega)."""
        client = self.client
        me = client.user if client is not None else None
        if me is None or message.author.bot or message.type.name not in _ANSWERED_TYPES:
            return None
        in_guild = not dm
        if in_guild and (not self.config.guilds or not self._addressed(message, me.id)):
            return None
        text = re.sub(rf"<@!?{me.id}>", "", message.content).strip()
        limit = int(self.config.max_download_mb * 1024 * 1024)
        attachments, notes = await download_attachments(message, limit)
        if not text and not attachments and not notes:
            return None
        return IncomingMessage(
            channel=NAME,
            sender_id=str(message.author.id),
            sender_name=scrub(message.author.display_name),
            text=scrub("\n".join([*notes, text]).strip()),
            is_group=in_guild,
            reply_target=f"{CHANNEL_TARGET}{message.channel.id}" if in_guild else "",
            attachments=attachments,
            id=message_id(message),
            assurance="platform",  # Discord authenticated the account
        )

    @staticmethod
    def _addressed(message: discord.Message, my_id: int) -> bool:
        """Mentioned by name (@everyone does not count), or a reply to Omega's message."""
        if any(user.id == my_id for user in message.mentions):
            return True
        resolved = message.reference.resolved if message.reference is not None else None
        return isinstance(resolved, discord.Message) and resolved.author.id == my_id

    # -- sending -------------------------------------------------------------------------

    async def _channel_id(self, target: str, remember: bool = True) -> int:
        """The channel a target names: a guild channel, or the DM channel of a user id
        (asked of Discord once, then remembered unless `remember` is False: a refusal)."""
        if not target.removeprefix(CHANNEL_TARGET).isdecimal():
            raise DiscordSendError(f"not a Discord user or channel: {target[:80]!r}")
        if target.startswith(CHANNEL_TARGET):
            return int(target.removeprefix(CHANNEL_TARGET))
        known = self._dm_channels.get(target)
        if known is not None:
            self._dm_channels.move_to_end(target)
            return known
        client = self._connected()
        data = await client.http.start_private_message(int(target))
        if remember:
            self._dm_channels[target] = int(data["id"])
            while len(self._dm_channels) > DM_CHANNELS_KEPT:
                self._dm_channels.popitem(last=False)
        return int(data["id"])

    def _connected(self) -> discord.Client:
        if self.client is None or self.client.user is None:
            raise DiscordSendError("Discord is not connected")
        return self.client

    async def send(self, message: OutgoingMessage) -> None:
        """Send text in pieces of at most 2,000 characters; a photo as a file (with the first
        piece as its text)."""
        client = self._connected()
        refusal = message.kind == "denied"
        channel_id = await self._channel_id(message.target, remember=not refusal)
        channel = client.get_partial_messageable(channel_id)
        text, filename = message.text, ""
        if message.photo is not None:
            filename = photo_filename(message.photo, text if message.kind == "photo" else "")
            if filename == text:
                text = ""  # the file's name is all the text a photo has; Discord shows it
        pieces = discord_pieces(text)
        sent: discord.Message | None = None
        try:
            if message.photo is not None:
                photo = discord.File(io.BytesIO(message.photo), filename=filename)
                sent = await channel.send(content=pieces.pop(0) if pieces else None, file=photo)
            for piece in pieces:
                sent = await channel.send(content=piece)
        except discord.HTTPException as exc:
            raise DiscordSendError(f"Discord refused the message: {exc}") from None
        if sent is not None and not refusal and str(channel_id) not in self.state.channels:
            # Answered here: from now on its messages are caught up on after a new session.
            dm = not message.target.startswith(CHANNEL_TARGET)
            await self._handed(channel_id, sent.id, dm)

    async def send_typing(self, target: str) -> None:
        """Show "Omega is typing..." in the target's channel (Discord shows it ~10 s)."""
        client = self._connected()
        await client.http.send_typing(await self._channel_id(target))

    # -- stopping ------------------------------------------------------------------------

    async def stop(self) -> None:
        """Close the gateway connection; `run` returns soon after."""
        self._stop.set()

    async def _sleep(self, secs: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), secs)
