"""Execution planning: how an order of a given size should reach the market."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Strategy = Literal["Immediate", "TWAP", "NoTrade"]
IMMEDIATE_BELOW = 0.001  # < 0.1% of daily volume: one order
NO_TRADE_ABOVE = 0.01  # > 1% of daily volume: too much market impact, don't
MIN_SLICES = 3
MAX_SLICES = 20


@dataclass(frozen=True)
class ExecutionPlan:
    """The strategy, its number of slices (1 for Immediate, 0 for NoTrade) and the order's
    participation (order size / expected daily volume)."""

    strategy: Strategy
    slices: int
    participation: float

    def as_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return {
            "strategy": self.strategy,
            "slices": self.slices,
            "participation": self.participation,
        }


def plan_execution(quantity: float, daily_volume: float) -> ExecutionPlan:
    """Immediate below 0.1% of daily volume, TWAP from 0.1% to 1% with 3..20 slices growing
    linearly with participation, NoTrade above 1% (and for no order or no known volume)."""
    qty = abs(quantity)
    if qty <= 0 or not math.isfinite(qty):
        return ExecutionPlan("NoTrade", 0, 0.0)
    if daily_volume <= 0 or not math.isfinite(daily_volume):
        return ExecutionPlan("NoTrade", 0, 0.0)
    participation = qty / daily_volume
    if participation < IMMEDIATE_BELOW:
        return ExecutionPlan("Immediate", 1, participation)
    if participation > NO_TRADE_ABOVE:
        return ExecutionPlan("NoTrade", 0, participation)
    share = (participation - IMMEDIATE_BELOW) / (NO_TRADE_ABOVE - IMMEDIATE_BELOW)
    slices = MIN_SLICES + round(share * (MAX_SLICES - MIN_SLICES))
    return ExecutionPlan("TWAP", min(MAX_SLICES, max(MIN_SLICES, slices)), participation)
