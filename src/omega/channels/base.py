"""The Channel protocol: where messages come from and replies go."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from omega.types import IncomingMessage, OutgoingMessage

# Hands a message to the gateway once it is durable; the future resolves when the message has
# been handled completely (answered, silent, or failed), for channels that wait for that.
Submit = Callable[[IncomingMessage], Awaitable["asyncio.Future[None]"]]
# The gateway's `send`: delivers on any running channel, or to the owner wherever they are.
Send = Callable[[OutgoingMessage], Awaitable[None]]
# The terminal's platform line: the `prompt_hint` of the terminal plug-in
# (omega.channels.builtin.TERMINAL), and of `omega ask`, which prints to a terminal without
# running a channel; here so that ask's lean path reads it without loading any channel.
TERMINAL_HINT = "Platform: terminal. Plain text; no Markdown tables."


@runtime_checkable
class Channel(Protocol):
    """A messaging platform seen from the gateway."""

    @property
    def name(self) -> str:
        """Channel name, as in config and audit (`terminal`, `telegram`, ...)."""
        ...

    async def run(self, submit: Submit) -> None:
        """Receive messages and hand each to `submit` until input ends or `stop` is called."""
        ...

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver one outgoing message."""
        ...

    async def send_typing(self, target: str) -> None:
        """Show a typing indicator to `target`, where the platform has one."""
        ...

    async def stop(self) -> None:
        """Stop receiving; `run` returns soon after."""
        ...


@runtime_checkable
class PairingChannel(Protocol):
    """A channel that links itself to an account by pairing (WhatsApp's QR code).

    The gateway attaches its `send` (so pairing codes and news reach whoever asked, on any
    channel) and makes the channel reachable to `/whatsapp` and the WHATSAPP_QR marker."""

    @property
    def name(self) -> str:
        """Channel name, as in config."""
        ...

    def attach(self, send: Send) -> None:
        """Where the channel sends what is not a reply (pairing codes, pairing outcomes)."""
        ...

    async def request_pairing(self, channel: str, target: str, phone: str = "") -> str:
        """Start pairing for whoever asked on (`channel`, `target`): codes and the outcome go
        there. With `phone`, a code to type on that phone instead. Returns the answer to give
        now."""
        ...
