"""Run-time state shared by the gateway and the loops (reset to config on restart)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class RuntimeState:
    """Mutable values markers change while Omega runs."""

    heartbeat_interval: int
    started_at: float = field(default_factory=time.monotonic)
