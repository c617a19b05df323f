"""An in-process channel double for tests that drive the gateway: the terminal, which answers
only from the process it was typed into, recording what it was sent."""

from __future__ import annotations

import asyncio

from omega.types import OutgoingMessage


class RecordingTerminal:
    """A local channel (named "terminal") that keeps what it is sent."""

    name = "terminal"
    answers_from_any_replica = False

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []

    async def run(self, submit: object) -> None:
        """Receive nothing until stopped (tests submit to the gateway themselves)."""
        await asyncio.Event().wait()

    async def send(self, message: OutgoingMessage) -> None:
        """Keep the message."""
        self.sent.append(message)

    async def send_typing(self, target: str) -> None:
        """Typing indicators are not kept."""
        return None

    async def stop(self) -> None:
        """Nothing to stop."""
        return None
