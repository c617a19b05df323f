"""Position sizing: Merton's optimal allocation and fractional Kelly."""

from __future__ import annotations

import math

MERTON_MIN = -0.5
MERTON_MAX = 1.5
KELLY_FRACTION = 0.25
KELLY_CAP = 0.10
MIN_CONFIDENCE = 0.55


def merton_fraction(mu: float, r: float, gamma: float, sigma: float) -> float:
    """Merton's optimal risky share (mu - r) / (gamma * sigma^2), clamped to [-0.5, 1.5].

    mu, r and sigma must be in the same time unit (per bar here; the ratio does not depend on
    the unit). A zero or non-finite sigma gives the clamp bound in the sign of the excess
    return (0 when there is none)."""
    excess = mu - r
    denom = gamma * sigma * sigma
    if not math.isfinite(excess):
        return 0.0
    if denom <= 0 or not math.isfinite(denom):
        raw = math.copysign(math.inf, excess) if excess else 0.0
    else:
        raw = excess / denom
    return min(MERTON_MAX, max(MERTON_MIN, raw))


def full_kelly(p: float, b: float = 1.0) -> float:
    """Full Kelly fraction for a bet won with probability p paying b per 1 staked:
    f* = p - (1 - p) / b (negative: the bet has no edge)."""
    return p - (1.0 - p) / b


def kelly_fraction(
    confidence: float,
    payoff: float = 1.0,
    fraction: float = KELLY_FRACTION,
    cap: float = KELLY_CAP,
    min_confidence: float = MIN_CONFIDENCE,
) -> float:
    """Fractional Kelly: `fraction` (25%) of full Kelly, clamped to [0, cap] (10% of the
    portfolio), and 0 below `min_confidence` (55%)."""
    if not math.isfinite(confidence) or confidence < min_confidence:
        return 0.0
    return min(cap, max(0.0, fraction * full_kelly(confidence, payoff)))
