"""The Channel protocol: where messages come from and replies go."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from omega.types import IncomingMessage, OutgoingMessage

# Hands a message to the gateway once it is durable; the future resolves when the message has
# been handled completely (answered, silent, or failed), for channels that wait for that.
Submit = Callable[[IncomingMessage], Awaitable["asyncio.Future[None]"]]


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
