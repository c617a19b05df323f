"""An in-process outbox double for tests that drive the pipeline and the loops without a
channel: it keeps what is sent, and can be made to fail."""

from __future__ import annotations

from omega.types import OutgoingMessage


class Recorder:
    """An Outbox that keeps what is sent. The next `failures` sends or deliveries fail (a send
    drops its message quietly, as the gateway's does; `deliver`, the scheduler's strict send,
    raises ConnectionError); while `fail_delivery` is set every delivery fails and sends still
    go through."""

    def __init__(self, failures: int = 0) -> None:
        self.sent: list[OutgoingMessage] = []
        self.failures = failures
        self.fail_delivery = False

    async def send(self, message: OutgoingMessage) -> None:
        """Keep the message, unless a failure is due."""
        if self.failures:
            self.failures -= 1
            return
        self.sent.append(message)

    async def deliver(self, message: OutgoingMessage) -> None:
        """Keep the message, or raise ConnectionError when a failure is due."""
        if self.fail_delivery:
            raise ConnectionError("the channel is down")
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the channel is down")
        self.sent.append(message)

    async def typing(self, channel: str, target: str) -> None:
        """Typing indicators are not kept."""
        return None
