"""Due times and repeats of scheduled tasks, read in the user's own timezone."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import parser as date_parser
from dateutil.relativedelta import relativedelta

from omega.errors import OmegaError

log = logging.getLogger(__name__)

Repeat = Literal["once", "daily", "weekly", "monthly", "weekdays"]
REPEATS: tuple[str, ...] = get_args(Repeat)


class ScheduleError(OmegaError, ValueError):
    """A due time or repeat value that cannot be used."""


def parse_repeat(value: str) -> Repeat:
    """Validate a repeat value (case-insensitive); anything unknown is an error, never 'daily'."""
    cleaned = value.strip().lower() or "once"
    if cleaned not in REPEATS:
        raise ScheduleError(f"unknown repeat {value!r} (use one of {', '.join(REPEATS)})")
    return cleaned  # type: ignore[return-value]


def parse_when(value: str) -> datetime:
    """Parse an ISO-8601-ish date/time; the result is naive when the text gave no zone."""
    text = value.strip()
    if not text:
        raise ScheduleError("empty date/time")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    try:
        return date_parser.isoparse(text)
    except (ValueError, OverflowError):
        raise ScheduleError(f"not an ISO date/time: {value!r}") from None


def resolve_timezone(*candidates: str) -> tzinfo:
    """The first valid IANA zone among the candidates (user fact, config), else the system's."""
    for name in candidates:
        name = (name or "").strip()
        if not name:
            continue
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            log.warning("ignoring unknown timezone %r", name)
    local = datetime.now().astimezone().tzinfo
    return local if local is not None else UTC


def timezone_name(zone: tzinfo) -> str:
    """A name for a zone that ZoneInfo can load again (UTC offsets become 'UTC')."""
    key = getattr(zone, "key", None)
    return str(key) if key else "UTC"


def to_utc(moment: datetime, zone: tzinfo) -> datetime:
    """Interpret a naive time in `zone` (the user's), keep an explicit zone; return UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.astimezone(UTC)


# --- recurrence -------------------------------------------------------------------------------

_WEEK = 7
_WORKDAYS = 5  # Monday..Friday are weekday() 0..4


def _local_to_utc(local: datetime, zone: tzinfo) -> datetime:
    """Naive wall-clock time in `zone` as aware UTC; gaps shift forward, overlaps take fold=0."""
    naive = local.replace(tzinfo=None, fold=0)
    first = naive.replace(tzinfo=zone).astimezone(UTC)
    # A wall-clock time in a spring-forward gap does not survive the round trip back to local.
    if first.astimezone(zone).replace(tzinfo=None) == naive:
        return first
    # In a gap the two folds straddle it; the later one is the time shifted forward by the gap
    # (under zoneinfo that is fold=0, but max() also holds for tzinfos that ignore fold).
    second = naive.replace(tzinfo=zone, fold=1).astimezone(UTC)
    return max(first, second)


def _first_workday(day: date) -> date:
    """`day` itself when it is Monday-Friday, else the following Monday."""
    if day.weekday() >= _WORKDAYS:
        return day + timedelta(days=_WEEK - day.weekday())
    return day


def _nth_local(anchor: datetime, repeat: str, n: int) -> datetime:
    """Naive local wall-clock time of occurrence `n` (0 = the first), counted from the anchor."""
    start = anchor.date()
    if repeat == "daily":
        day = start + timedelta(days=n)
    elif repeat == "weekly":
        day = start + timedelta(days=_WEEK * n)
    elif repeat == "weekdays":
        first = _first_workday(start)
        offset = first.weekday()
        weeks, rest = divmod(offset + n, _WORKDAYS)
        day = first - timedelta(days=offset) + timedelta(days=weeks * _WEEK + rest)
    else:  # monthly: relativedelta clamps to the month's last day, and we always add to the anchor
        day = start + relativedelta(months=n)
    return datetime.combine(day, anchor.time()).replace(fold=0)


def _estimate_index(anchor: datetime, repeat: str, target: date) -> int:
    """Roughly which occurrence falls on local date `target` (may be off by one or two)."""
    start = anchor.date()
    if repeat == "daily":
        return (target - start).days
    if repeat == "weekly":
        return (target - start).days // _WEEK
    if repeat == "weekdays":
        first = _first_workday(start)
        offset = first.weekday()
        weeks, rest = divmod((target - (first - timedelta(days=offset))).days, _WEEK)
        return weeks * _WORKDAYS + min(rest, _WORKDAYS) - offset
    return (target.year - start.year) * 12 + (target.month - start.month)


def _check(anchor_local: datetime, repeat: str, zone: tzinfo) -> datetime:
    """Validate the repeat; return the anchor as a naive local wall-clock time."""
    if repeat not in REPEATS:
        raise ScheduleError(f"unknown repeat {repeat!r} (use one of {', '.join(REPEATS)})")
    if anchor_local.tzinfo is not None:  # an explicit zone: keep the instant, read it locally
        anchor_local = anchor_local.astimezone(zone).replace(tzinfo=None)
    return anchor_local.replace(fold=0)


def wall_clock(moment: datetime, zone: tzinfo) -> datetime:
    """The naive wall-clock time the person meant in `zone` (an explicit zone is converted)."""
    if moment.tzinfo is not None and moment.utcoffset() is not None:
        return moment.astimezone(zone).replace(tzinfo=None, fold=0)
    return moment.replace(tzinfo=None, fold=0)


def plan_task(
    when: datetime, repeat: str, zone: tzinfo, now: datetime
) -> tuple[datetime, datetime]:
    """(first due time in UTC, anchor) for a task asked for `when` in `zone`.

    The anchor is the wall-clock time every repeat keeps (01:30 stays 01:30 across DST, the
    31st stays the 31st). A repeating task whose first time is already past starts at its next
    occurrence after `now`; a one-shot task in the past is due at once."""
    try:
        anchor = wall_clock(when, zone)
        due = first_occurrence(anchor, repeat, zone)
    except OverflowError:  # 0001-01-01 or 9999-12-31 moved into another zone
        raise ScheduleError(f"{when.isoformat()} is too near the ends of the calendar") from None
    if repeat != "once" and due <= now:
        following = next_occurrence(anchor, repeat, zone, now)
        due = following if following is not None else due
    return due, anchor


def first_occurrence(anchor_local: datetime, repeat: str, zone: tzinfo) -> datetime:
    """The task's first occurrence in UTC: the anchor, gap-shifted, or for 'weekdays' the next
    weekday when the anchor falls on a weekend."""
    anchor = _check(anchor_local, repeat, zone)
    if repeat == "weekdays":
        return _local_to_utc(_nth_local(anchor, repeat, 0), zone)
    return _local_to_utc(anchor, zone)


def next_occurrence(
    anchor_local: datetime, repeat: str, zone: tzinfo, after: datetime
) -> datetime | None:
    """The first occurrence of a repeating task strictly after `after`, in UTC (None for 'once').

    Occurrences are counted from the anchor (no drift); missed ones before `after` are skipped."""
    anchor = _check(anchor_local, repeat, zone)
    if after.tzinfo is None or after.utcoffset() is None:
        raise ScheduleError("`after` must be an aware datetime")
    if repeat == "once":
        return None
    after = after.astimezone(UTC)

    def at(n: int) -> datetime:
        return _local_to_utc(_nth_local(anchor, repeat, n), zone)

    try:
        # Jump straight to about the right period, then settle with a step or two either way.
        # Occurrences strictly increase in UTC (periods are >= 23 h), so the scan is exact.
        n = max(0, _estimate_index(anchor, repeat, after.astimezone(zone).date()))
        while n > 0 and at(n) > after:
            n -= 1
        while at(n) <= after:
            n += 1
        return at(n)
    except OverflowError:
        raise ScheduleError(f"no occurrence of {repeat!r} after {after} fits a date") from None
