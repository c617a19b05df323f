"""Run-time state shared by the gateway and the loops (reset to config on restart)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass
class RuntimeState:
    """Mutable values markers change while Omega runs, and the events that announce them."""

    heartbeat_interval: int
    started_at: float = field(default_factory=time.monotonic)
    # Set when a task is added or moved, so the scheduler re-plans its sleep at once.
    tasks_changed: asyncio.Event = field(default_factory=asyncio.Event)
    # Set when the heartbeat interval changes, so the heartbeat re-plans its sleep.
    heartbeat_changed: asyncio.Event = field(default_factory=asyncio.Event)
