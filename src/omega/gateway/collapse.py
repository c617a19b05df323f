"""The owner's hourly limit: at most `[limits] max_owner_alerts_per_hour` alerts go out one by
one; the rest wait in one message sent when the hour allows (never lost, never a flood).

Kept in this process (a stop sends what waits, `close`); what passes it has already passed the
notification gate (gateway.notify), and its digest passes the gate again."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

from omega.config.safety import LimitsSection
from omega.owner import owner_alert
from omega.types import OutgoingMessage

WINDOW_SECS = 3600.0
Send = Callable[[OutgoingMessage], Awaitable[None]]


class AlertCollapse:
    """Counts the owner's alerts of the last hour; collapses the ones past the limit."""

    def __init__(
        self,
        limits: Callable[[], LimitsSection],
        send: Callable[[OutgoingMessage], Awaitable[None]],
    ) -> None:
        self._limits = limits
        self._send = send
        self._times: deque[float] = deque()
        self._waiting: list[str] = []
        self._task: asyncio.Task[None] | None = None

    def allowed(self, message: OutgoingMessage) -> bool:
        """True when the alert goes out now; else it waits for the collapsed digest."""
        now = time.monotonic()
        while self._times and now - self._times[0] >= WINDOW_SECS:
            self._times.popleft()
        if len(self._times) < self._limits().max_owner_alerts_per_hour:
            self._times.append(now)
            return True
        self._waiting.append(message.text)
        if self._task is None or self._task.done():
            wait = WINDOW_SECS - (now - self._times[0])
            self._task = asyncio.create_task(self._flush_after(wait), name="alert-digest")
        return False

    async def _flush_after(self, wait: float) -> None:
        await asyncio.sleep(max(wait, 0.0))
        await self.flush()

    async def flush(self) -> None:
        """Send the alerts collapsed so far as one message to the owner (kept if unreachable)."""
        if not self._waiting:
            return
        items, self._waiting = self._waiting, []
        self._times.append(time.monotonic())
        lines = "\n".join(f"- {text.splitlines()[0][:200]}" for text in items if text)
        text = f"{len(items)} more alerts (collapsed into this digest):\n{lines}"
        await self._send(owner_alert(text, kind="status", priority="low"))

    async def close(self) -> None:
        """Stop waiting for the hour; send what waits now."""
        if self._task is not None:
            self._task.cancel()
        await self.flush()
