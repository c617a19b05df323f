"""Run-time state shared by the gateway and the loops (reset to config on restart)."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from omega.channels.base import PairingChannel
from omega.providers.limiter import AdaptiveLimiter
from omega.types import OutgoingMessage

# Locks and semaphores belong to one event loop; tests (and `omega ask`) run several loops.
_PER_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[object, object]] = (
    weakref.WeakKeyDictionary()
)


def _loop_local(key: object, make: Callable[[], object]) -> object:
    table = _PER_LOOP.setdefault(asyncio.get_running_loop(), {})
    if key not in table:
        table[key] = make()
    return table[key]


@dataclass
class RuntimeState:
    """Mutable values markers change while Omega runs, and the events that announce them."""

    heartbeat_interval: int
    started_at: float = field(default_factory=time.monotonic)
    # Set when a task is added or moved, so the scheduler re-plans its sleep at once.
    tasks_changed: asyncio.Event = field(default_factory=asyncio.Event)
    # Set when the heartbeat interval changes, so the heartbeat re-plans its sleep.
    heartbeat_changed: asyncio.Event = field(default_factory=asyncio.Event)
    # Running channels that pair themselves (WhatsApp), by name: `/whatsapp` and the
    # WHATSAPP_QR marker reach them here. The gateway fills it with its channels.
    pairing: dict[str, PairingChannel] = field(default_factory=dict)
    # How code with no outbox of its own tells the owner something (the daily spending cap):
    # the gateway's send, set by the gateway (None outside a running service).
    tell_owner: Callable[[OutgoingMessage], Awaitable[None]] | None = None
    # The system prompt's platform line of every channel plug-in found, built-in or not, by
    # channel name (filled by the composition root from ChannelPlugin.platform_hint()).
    platform_hints: dict[str, str] = field(default_factory=dict)

    def workspace_lock(self, folder: str) -> asyncio.Lock:
        """One turn at a time per workspace folder, so the images a turn made are its own."""
        lock = _loop_local((id(self), "workspace", folder), asyncio.Lock)
        assert isinstance(lock, asyncio.Lock)
        return lock

    def provider_limiter(self, provider: str, ceiling: int) -> AdaptiveLimiter:
        """The provider's adaptive limit on calls in flight (never above `ceiling`), all people
        together, admitted round-robin by sender."""
        limiter = _loop_local(
            (id(self), "provider", provider, ceiling), lambda: AdaptiveLimiter(ceiling)
        )
        assert isinstance(limiter, AdaptiveLimiter)
        return limiter
