"""What leaves Omega: each outgoing message redacted and delivered on its channel; the owner's
on the first of their routes that takes it, or kept (in memory.db) until a channel for them
runs. What is sent unasked passes the notification gate first (notify.py), and the owner's
alerts the hourly collapse (collapse.py)."""

from __future__ import annotations

import dataclasses
import getpass
import logging
from collections.abc import Callable, Mapping

from omega.channels.base import Channel
from omega.gateway.collapse import AlertCollapse
from omega.gateway.notify import NotificationGate
from omega.logs import redact, redact_known
from omega.owner import OWNER, owner_addresses, owner_alert
from omega.text import scrub
from omega.turn import PipelineDeps
from omega.types import OutgoingKind, OutgoingMessage

log = logging.getLogger(__name__)

# What Omega itself writes (errors, progress, alerts, notices): every credential shape is
# hidden. What the model or a person wrote (replies, reminders, commands' listings of what a
# person said): only the configured secrets, so ordinary text is never mangled.
_FULLY_REDACTED: frozenset[str] = frozenset({"error", "status", "alert", "denied", "notice", "ack"})


def redacted(message: OutgoingMessage) -> OutgoingMessage:
    """The message as it may leave Omega: no configured secret, no credential in errors, no
    lone surrogate (which would make the channel fail and the message be lost)."""
    target = scrub(message.target)
    text = scrub(message.text)
    if message.kind != "photo":
        text = redact(text) if message.kind in _FULLY_REDACTED else redact_known(text)
    if text == message.text and target == message.target:
        return message
    return dataclasses.replace(message, text=text, target=target)


def _kind(value: str) -> OutgoingKind:
    return "status" if value == "status" else "alert"


class Outbound:
    """Delivers on the running channels (`channels`, by name); `on_sent` hears of every
    message a channel took (the sender workers note which messages are answered)."""

    def __init__(
        self,
        deps: PipelineDeps,
        channels: Mapping[str, Channel],
        on_sent: Callable[[OutgoingMessage], None],
    ) -> None:
        self.deps = deps
        self.channels = channels
        self._on_sent = on_sent
        self.collapse = AlertCollapse(lambda: self.deps.config.limits, self.send)
        self.notify = NotificationGate(deps, self._release, self.owner_routes_now)

    async def deliver(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel, raising when that is not possible; one sent
        unasked passes the notification gate first, which may hold it (gateway.notify)."""
        if await self.notify.admit(message):
            await self._deliver(message)

    async def _release(self, message: OutgoingMessage) -> None:
        """A digest of held messages: the owner's kept when unreachable, a person's raising."""
        await (self._send(message) if message.channel == OWNER else self._deliver(message))

    async def _deliver(self, message: OutgoingMessage) -> None:
        if message.channel == OWNER:
            if message.kind == "alert" and not self.collapse.allowed(message):
                return
            if await self._to_owner(message) is None:
                raise LookupError("no running channel reaches the owner")
            return
        channel = self.channels.get(message.channel)
        if channel is None:
            raise LookupError(f"channel {message.channel!r} is not running")
        await channel.send(redacted(message))
        self._on_sent(message)

    def owner_routes(self) -> list[tuple[str, str]]:
        """Where the owner can be reached now: configured addresses on running channels, then
        the terminal (whoever sits at it is the owner), then a channel that knows the owner is
        there now (the web page while it is open)."""
        routes = [route for route in owner_addresses(self.deps.config) if route[0] in self.channels]
        if "terminal" in self.channels:
            routes.append(("terminal", getpass.getuser()))
        for name, channel in self.channels.items():
            present = getattr(channel, "owner_target", None)
            target = present() if callable(present) else None
            if isinstance(target, str) and target:
                routes.append((name, target))
        return list(dict.fromkeys(routes))

    async def owner_routes_now(self) -> list[tuple[str, str]]:
        """`owner_routes`, with the owners let in at run time (`omega people allow --owner`,
        read from memory.db now) after the configured ones: a revoked owner is no route."""
        routes = self.owner_routes()
        store = self.deps.store
        try:
            grants = await store.call(store.grants)
        except Exception:
            log.exception("could not read the owners granted at run time")
            return routes
        granted = [
            (g.channel, g.sender_id)
            for g in grants
            if g.role == "owner" and g.channel in self.channels
        ]
        configured = len([r for r in owner_addresses(self.deps.config) if r[0] in self.channels])
        return list(dict.fromkeys([*routes[:configured], *granted, *routes[configured:]]))

    async def _to_owner(self, message: OutgoingMessage) -> tuple[str, str] | None:
        """Deliver to the first owner route that takes it; the route used, or None."""
        for channel, target in await self.owner_routes_now():
            try:
                await self._deliver(dataclasses.replace(message, channel=channel, target=target))
                return channel, target
            except Exception as exc:
                log.warning("owner %s not delivered on %s: %s", message.kind, channel, exc)
        return None

    async def flush_owner_alerts(self) -> int:
        """Deliver alerts kept while no owner channel was running; return how many went out."""
        store = self.deps.store
        if not await self.owner_routes_now():
            return 0
        sent = 0
        for alert in await store.call(store.pending_owner_alerts):
            route = await self._to_owner(owner_alert(alert.text, kind=_kind(alert.kind)))
            if route is None:
                break
            await store.call(store.owner_alert_delivered, alert.id, *route)
            sent += 1
        return sent

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel; failures are logged, never raised.

        One sent unasked passes the notification gate first (gateway.notify). A message for the
        owner goes to wherever the owner can be reached, or is kept (in memory.db, shown by
        `omega status` and /status) until a channel for them runs."""
        if await self.notify.admit(message):
            await self._send(message)

    async def _send(self, message: OutgoingMessage) -> None:
        if message.channel == OWNER:
            if await self._to_owner(message) is None:
                log.warning("no channel reaches the owner now; %s kept for later", message.kind)
                try:
                    await self.deps.store.call(
                        self.deps.store.keep_owner_alert, message.text, message.kind
                    )
                except Exception:
                    log.exception("could not keep the owner %s: %.200s", message.kind, message.text)
            return
        try:
            await self._deliver(message)
        except LookupError as exc:
            log.warning("outgoing %s message dropped: %s", message.kind, exc)
        except Exception:
            log.exception("sending on %s failed", message.channel)

    async def typing(self, channel_name: str, target: str) -> None:
        """Show a typing indicator; failures are logged, never raised."""
        channel = self.channels.get(channel_name)
        if channel is None:
            return
        try:
            await channel.send_typing(target)
        except Exception as exc:
            log.debug("typing indicator on %s failed: %s", channel_name, exc)
