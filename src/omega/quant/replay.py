"""Replaying bars from a CSV file through the engine (no network, no look-ahead)."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from omega.errors import OmegaError
from omega.quant.engine import Bar, QuantEngine, QuantParams, QuantSignal

COLUMNS = ("time", "open", "high", "low", "close", "volume")
REPLAY_FIELDS = (
    "time",
    "price",
    "kalman_price",
    "kalman_trend",
    "ewma_vol",
    "hurst",
    "regime",
    "regime_probs",
    "merton",
    "kelly",
    "direction",
    "action",
    "confidence",
    "quantity",
    "execution",
    "warm",
)


class BarsError(OmegaError, ValueError):
    """A malformed bars file; the message names the line."""


def _number(text: str, column: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BarsError(f"line {line}: {column} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise BarsError(f"line {line}: {column} is not finite: {text!r}")
    return value


def read_bars(stream: TextIO) -> Iterator[Bar]:
    """Bars from CSV text with a header naming time,open,high,low,close,volume (in any order;
    other columns are ignored). Raises BarsError naming the line of the first bad row."""
    reader = csv.reader(stream)
    header: list[str] | None = None
    for row in reader:
        line = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise BarsError(
                    f"line {line}: the header must name {','.join(COLUMNS)}; "
                    f"missing: {','.join(missing)}"
                )
            index = {c: header.index(c) for c in COLUMNS}
            continue
        if len(row) != len(header):
            raise BarsError(f"line {line}: expected {len(header)} fields, found {len(row)}")
        o, h, lo, c, v = (_number(row[index[col]].strip(), col, line) for col in COLUMNS[1:])
        if min(o, h, lo, c) <= 0:
            raise BarsError(f"line {line}: prices must be positive")
        if h < lo or not lo <= c <= h or not lo <= o <= h:
            raise BarsError(f"line {line}: high/low do not bracket open and close")
        if v < 0:
            raise BarsError(f"line {line}: volume is negative")
        yield Bar(row[index["time"]].strip(), o, h, lo, c, v)
    if header is None:
        raise BarsError("line 1: the file is empty (no header)")


def replay(bars: Iterable[Bar], params: QuantParams | None = None) -> Iterator[QuantSignal]:
    """Each bar through one engine, in order: the signal of bar t sees bars 0..t only."""
    engine = QuantEngine(params)
    for bar in bars:
        yield engine.process(bar)


def replay_file(path: Path, params: QuantParams | None = None) -> Iterator[QuantSignal]:
    """`replay` over a CSV file (see `read_bars`)."""
    with path.open(newline="", encoding="utf-8") as stream:
        yield from replay(read_bars(stream), params)


def human_line(signal: QuantSignal) -> str:
    """One readable line per bar (the replay CLI without --json)."""
    plan = signal.execution
    how = f"{plan.strategy}" + (f"x{plan.slices}" if plan.strategy == "TWAP" else "")
    return (
        f"{signal.time}  close={signal.price:g}  kalman={signal.kalman_price:.4f}"
        f" trend={signal.kalman_trend:+.5f}  vol={signal.ewma_vol:.5f}  H={signal.hurst:.2f}"
        f"  {signal.regime} {signal.confidence:.0%}  {signal.direction} {signal.action}"
        f" qty={signal.quantity}  merton={signal.merton:+.2f} kelly={signal.kelly:.3f}  {how}"
    )
