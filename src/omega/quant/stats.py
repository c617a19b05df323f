"""EWMA volatility and the Hurst exponent by rescaled-range (R/S) analysis."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def ewma_variance(previous: float, r: float, lam: float) -> float:
    """RiskMetrics EWMA: sigma2_t = lam * sigma2_{t-1} + (1 - lam) * r_t^2."""
    return lam * previous + (1.0 - lam) * r * r


def _scales(n: int, min_scale: int) -> list[int]:
    """Chunk sizes: powers of two from `min_scale` up to n // 2."""
    out = []
    size = min_scale
    while size <= n // 2:
        out.append(size)
        size *= 2
    return out


def expected_rs(n: int) -> float:
    """Anis-Lloyd (1976) expected R/S of n i.i.d. normal increments, with Peters' (n-1/2)/n
    small-sample factor; the gamma ratio is replaced by its asymptote for n > 340."""
    if n <= 340:
        front = math.exp(math.lgamma((n - 1) / 2) - math.lgamma(n / 2)) / math.sqrt(math.pi)
    else:
        front = 1.0 / math.sqrt(n * math.pi / 2)
    total = sum(math.sqrt((n - i) / i) for i in range(1, n))
    return (n - 0.5) / n * front * total


_EXPECTED: dict[int, float] = {}


def _expected(n: int) -> float:
    value = _EXPECTED.get(n)
    if value is None:
        value = _EXPECTED[n] = expected_rs(n)
    return value


def rescaled_range(x: FloatArray, n: int) -> float:
    """Mean R/S over the non-overlapping chunks of size n of `x` (chunks with zero spread are
    skipped; NaN when every chunk is flat)."""
    chunks = x[: (len(x) // n) * n].reshape(-1, n)
    dev = chunks - chunks.sum(axis=1, keepdims=True) / n
    walk = np.cumsum(dev, axis=1)
    r = walk.max(axis=1) - walk.min(axis=1)
    s = np.sqrt(np.einsum("ij,ij->i", dev, dev) / n)
    ok = s > 0
    if not ok.any():
        return math.nan
    return float((r[ok] / s[ok]).mean())


def hurst_rs(increments: FloatArray, min_scale: int = 8, corrected: bool = True) -> float:
    """Hurst exponent of a series of increments (e.g. log returns) by R/S analysis.

    For chunk sizes n = min_scale, 2*min_scale, ... <= len/2, the mean rescaled range R/S(n)
    is computed and H is the least-squares slope of log R/S(n) against log n. With
    `corrected` (the default) the Anis-Lloyd-Peters expectation for i.i.d. noise is
    subtracted first and 0.5 added back, which removes classic R/S's small-sample upward
    bias: white noise (a random walk's increments) gives ~0.5, persistent (trending) series
    more, anti-persistent (mean-reverting) ones less. Returns 0.5 when the series is too
    short or flat, and always a value clamped to [0, 1].
    """
    x = np.asarray(increments, dtype=np.float64)
    scales = _scales(len(x), min_scale)
    if len(scales) < 2:
        return 0.5
    logs_n, logs_rs = [], []
    for n in scales:
        rs = rescaled_range(x, n)
        if not math.isfinite(rs) or rs <= 0:
            continue
        logs_n.append(math.log(n))
        logs_rs.append(math.log(rs) - (math.log(_expected(n)) if corrected else 0.0))
    if len(logs_n) < 2:
        return 0.5
    mean_n = sum(logs_n) / len(logs_n)
    mean_rs = sum(logs_rs) / len(logs_rs)
    sxx = sum((a - mean_n) ** 2 for a in logs_n)
    sxy = sum((a - mean_n) * (b - mean_rs) for a, b in zip(logs_n, logs_rs, strict=True))
    slope = sxy / sxx
    h = 0.5 + slope if corrected else slope
    if not math.isfinite(h):
        return 0.5
    return min(1.0, max(0.0, h))
