"""Self-healing (spec 000): the lifecycle the gateway, not the model, runs.

This module is the package's public face: callers outside `omega.evolution.heal` import from
here.
- lifecycle: the markers' lifecycle: notices, checks, escalation and the owner's view
- sessions: a healing session in the store, each change one transaction; the 24-hour cap

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.evolution.heal.lifecycle import (
        clear_escalation,
        self_heal,
        self_heal_resolved,
    )
    from omega.evolution.heal.sessions import SelfHealStore

__all__ = [
    "SelfHealStore",
    "clear_escalation",
    "self_heal",
    "self_heal_resolved",
]

__getattr__ = loader(
    __name__,
    {
        "SelfHealStore": "sessions",
        "clear_escalation": "lifecycle",
        "self_heal": "lifecycle",
        "self_heal_resolved": "lifecycle",
    },
)
