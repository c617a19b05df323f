"""Due times and repeats of scheduled tasks, read in the user's own timezone."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, tzinfo
from typing import Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import parser as date_parser

log = logging.getLogger(__name__)

Repeat = Literal["once", "daily", "weekly", "monthly", "weekdays"]
REPEATS: tuple[str, ...] = get_args(Repeat)


class ScheduleError(ValueError):
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
