"""A channel from a third-party plug-in, run under watch: its failure is reported (log, health
file, owner alert) and stops nothing else; it may only speak as itself.

A plug-in hands messages to the same `submit` as every channel (the durable inbox, then
admission, pairing, limits and the pipeline); this wrapper only makes sure each message
names the plug-in's own channel, so a plug-in cannot pass for the terminal or the web page
(whose users are the owner), and that no message claims a proof of its sender the plug-in does
not declare for its section (`sender_assurance`): a plug-in that says nothing proves nobody."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable

from omega.channels.base import Channel, Submit
from omega.channels.health import HEALTH_EVERY_SECS
from omega.channels.plugin import ChannelContext, ChannelPlugin
from omega.health_file import write_health
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

Alert = Callable[[str], Awaitable[None]]  # tells the owner (the gateway's owner alert)


class SupervisedChannel:
    """Runs `inner` for the plug-in `plugin`; implements the Channel protocol."""

    def __init__(self, plugin: ChannelPlugin, inner: Channel, ctx: ChannelContext) -> None:
        self._plugin = plugin
        self._proof = plugin.sender_assurance(ctx.section)  # the most its messages may claim
        self.inner = inner
        self._health = ctx.health_file
        self.alert: Alert | None = None  # attached once the gateway exists
        self.failure = ""  # why it stopped with an error, "" while it has not

    @property
    def name(self) -> str:
        """The plug-in's name (what its messages must carry)."""
        return self._plugin.name

    async def run(self, submit: Submit) -> None:
        """Run the plug-in's channel; an error is reported, not raised."""

        async def checked(message: IncomingMessage) -> asyncio.Future[None]:
            if message.channel != self.name:
                log.error(
                    "channel plug-in %s submitted a message as %r: dropped",
                    self.name,
                    message.channel,
                )
                dropped: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                dropped.set_result(None)
                return dropped
            if message.origin_id:  # the gateway's to set (the person key's channel id)
                message = dataclasses.replace(message, origin_id="")
            if message.verified and message.assurance != self._proof:
                message = dataclasses.replace(
                    message,
                    assurance="unverified",
                    assurance_detail=f"{self.name} declares its senders {self._proof}",
                )
            return await submit(message)

        keeper = None if self._plugin.reports_health else asyncio.create_task(self._keep_alive())
        try:
            await self.inner.run(checked)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("channel plug-in %s stopped with an error: %r", self.name, exc)
            log.debug("channel plug-in %s's error", self.name, exc_info=exc)  # for its author
            await self.report(f"stopped with an error: {exc!r}")
            return
        finally:
            if keeper is not None:
                keeper.cancel()
        if not self._plugin.reports_health:
            write_health(self._health, state="stopped")

    async def _keep_alive(self) -> None:
        """Say the channel runs, often enough that status does not think it stale."""
        while True:
            write_health(self._health, state="running")
            await asyncio.sleep(HEALTH_EVERY_SECS)

    async def report(self, reason: str) -> None:
        """Record the failure (health file, log) and tell the owner when the gateway is up."""
        self.failure = reason
        write_health(self._health, state="failed", detail=reason)
        if self.alert is not None:
            try:
                await self.alert(f"The {self.name} channel {reason}. The other channels run.")
            except Exception:
                log.exception("could not tell the owner that channel %s failed", self.name)

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver through the plug-in."""
        await self.inner.send(message)

    async def send_typing(self, target: str) -> None:
        """Typing through the plug-in."""
        await self.inner.send_typing(target)

    async def stop(self) -> None:
        """Stop the plug-in."""
        await self.inner.stop()
