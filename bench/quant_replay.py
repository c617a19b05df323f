"""Quant engine throughput: bars per second through `QuantEngine.process`, on one core.

Target: a year of 5-second bars (~1.6 M) in under a minute. Usage:

    PYTHONPATH=src python bench/quant_replay.py [N_BARS] [--csv]

With --csv the bars are first written to a temporary CSV and read back through the replay
path (parsing included), as `omega quant replay` does.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from omega.quant.engine import Bar, QuantEngine
from omega.quant.replay import replay_file


def synthetic_closes(n: int, seed: int = 7) -> tuple[list[float], list[float]]:
    """A regime-switching random walk (drift flips every ~5000 bars) and volumes."""
    rng = np.random.default_rng(seed)
    drift = np.repeat(rng.choice([-3e-5, 0.0, 3e-5], size=n // 5000 + 1), 5000)[:n]
    closes = 100.0 * np.exp(np.cumsum(drift + rng.normal(0, 2e-4, n)))
    volumes = rng.integers(50, 5000, n).astype(float)
    return closes.tolist(), volumes.tolist()


def main() -> None:
    """Run the benchmark and print the figures."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 1_600_000
    closes, volumes = synthetic_closes(n)
    if "--csv" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bars.csv"
            with path.open("w") as f:
                f.write("time,open,high,low,close,volume\n")
                for i, (c, v) in enumerate(zip(closes, volumes, strict=True)):
                    f.write(f"{i * 5},{c!r},{c!r},{c!r},{c!r},{v:g}\n")
            start = time.perf_counter()
            count = sum(1 for _ in replay_file(path))
            elapsed = time.perf_counter() - start
        label = "CSV replay (parse + engine)"
    else:
        pairs = enumerate(zip(closes, volumes, strict=True))
        bars = [Bar(str(i * 5), c, c, c, c, v) for i, (c, v) in pairs]
        engine = QuantEngine()
        start = time.perf_counter()
        for bar in bars:
            engine.process(bar)
        elapsed = time.perf_counter() - start
        count = len(bars)
        label = "engine"
    rate = count / elapsed
    print(f"{label}: {count} bars in {elapsed:.1f} s = {rate:,.0f} bars/s")
    print(f"a year of 5-second bars (1.6 M) would take {1_600_000 / rate:.1f} s")


if __name__ == "__main__":
    main()
