"""The quant feed's connection and last bar in words, for /quant status and `omega status`.

The running feed (inside `omega start`) writes its report to memory.db (see feed.py); this
module only reads it, so no numpy and no ib_async are imported here.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from omega.memory.store import Store
from omega.quant.service import feed_unavailable
from omega.quant.settings import QuantStateStore

# A report older than this comes from a feed that is no longer running (it re-stamps it every
# feed.HEARTBEAT seconds while it runs, bars or not).
STALE_SECONDS = 180.0


def _clock(epoch: float) -> str:
    """`epoch` as UTC wall-clock text."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ago(seconds: float) -> str:
    """A duration in the largest whole unit."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def _number(value: Any) -> float:
    """A number from the report, 0.0 when missing or malformed."""
    return float(value) if isinstance(value, int | float) else 0.0


def _state_text(record: dict[str, Any]) -> str:
    """What the feed said it was doing."""
    state = str(record.get("state") or "unknown")
    endpoint = str(record.get("endpoint") or "IB Gateway/TWS")
    symbol = str(record.get("symbol") or "")
    since = _number(record.get("since"))
    error = str(record.get("error") or "")
    if state == "connected":
        return f"connected to IB {endpoint} for {symbol} since {_clock(since)}"
    if state == "connecting":
        return f"connecting to IB {endpoint} for {symbol}"
    if state == "disconnected":
        retry = _number(record.get("retry_in"))
        why = error or "the connection ended"
        return f"NOT connected to IB {endpoint} ({why}); retrying in {retry:g} s"
    if state == "disabled":
        return "idle: /quant is disabled"
    if state == "unavailable":
        return f"cannot run here: {error}"
    if state == "stopped":
        return f"not running (stopped {_clock(since)}, when `omega start` ended)"
    return f"{state} (IB {endpoint})"


def _bar_text(record: dict[str, Any] | None, now: float) -> str:
    """When the last bar came, and which."""
    bar = record.get("last_bar") if record else None
    if not isinstance(bar, dict):
        return "no bar received yet"
    at = _number(bar.get("at"))
    return (
        f"last bar {bar.get('time')} ({bar.get('symbol')}, close {_number(bar.get('close')):g}) "
        f"received {_clock(at)}, {_ago(now - at)} ago"
    )


def describe_feed(
    record: dict[str, Any] | None, enabled: bool, unavailable: str = "", now: float | None = None
) -> str:
    """One line: whether the feed is connected (to what, since when) or why not, and when the
    last bar came. `unavailable` is why the feed cannot run on this machine ("" when it can)."""
    moment = now if now is not None else time.time()
    if record is None:
        if not enabled:
            head = "off (/quant enable starts it under `omega start`)"
        elif unavailable:
            head = f"cannot run here: {unavailable}"
        else:
            head = "no report yet (the feed runs inside `omega start`: is it running?)"
        return f"{head}; {_bar_text(None, moment)}"
    head = _state_text(record)
    state = record.get("state")
    age = moment - _number(record.get("updated_at"))
    if state not in ("stopped", "unavailable") and age > STALE_SECONDS:
        head = (
            f"not running: no report for {_ago(age)}, is `omega start` running? "
            f"(it last said: {head})"
        )
    return f"{head}; {_bar_text(record, moment)}"


def feed_line(store: Store, now: float | None = None) -> str:
    """The feed's line for /quant status, from memory.db."""
    state = QuantStateStore(store)
    return describe_feed(state.feed(), state.settings().enabled, feed_unavailable(), now)


def status_row(store: Store, now: float | None = None) -> str:
    """The quant row of `omega status`: on or off, the symbol and mode, and the feed."""
    settings = QuantStateStore(store).settings()
    head = "enabled" if settings.enabled else "disabled"
    return f"{head}, {settings.symbol}, {settings.mode} mode; feed: {feed_line(store, now)}"
