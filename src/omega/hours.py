"""Daily windows of wall-clock time: the heartbeat's active hours and a person's quiet hours
(`22:00-07:30`; a window past midnight wraps)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo

_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
QUIET_FACT = "quiet_hours"  # the person's fact that holds their quiet hours ("22:00-07:30")


def parse_hhmm(value: str) -> time | None:
    """`HH:MM` as a time, None when empty or malformed."""
    match = _HHMM.match(value.strip())
    return time(int(match.group(1)), int(match.group(2))) if match else None


def within_active_hours(now: time, start: str, end: str) -> bool:
    """Whether `now` is inside [start, end); a window past midnight (22:00-06:00) wraps."""
    begin, finish = parse_hhmm(start), parse_hhmm(end)
    if begin is None or finish is None or begin == finish:
        return True
    if begin < finish:
        return begin <= now < finish
    return now >= begin or now < finish


def next_wall_time(now: datetime, at: time, zone: tzinfo) -> datetime:
    """The first moment after `now` whose wall-clock time in `zone` is `at`, in UTC."""
    local = now.astimezone(zone)
    day = local.date()
    for _ in range(3):  # today, tomorrow, or (across a skipped hour) the day after
        candidate = datetime.combine(day, at).replace(tzinfo=zone).astimezone(UTC)
        if candidate > now:
            return candidate
        day += timedelta(days=1)
    return now + timedelta(days=1)


@dataclass(frozen=True)
class QuietHours:
    """A person's quiet hours: [start, end) every day, in their time zone."""

    start: time
    end: time

    @classmethod
    def parse(cls, text: str) -> QuietHours:
        """`HH:MM-HH:MM` (a window past midnight, 22:00-07:30, wraps); ValueError otherwise."""
        first, sep, second = text.strip().partition("-")
        begin, finish = parse_hhmm(first), parse_hhmm(second)
        if not sep or begin is None or finish is None:
            raise ValueError(f"{text.strip()!r} is not HH:MM-HH:MM (e.g. 22:00-07:30)")
        if begin == finish:
            raise ValueError("quiet hours must start and end at different times")
        return cls(begin, finish)

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"

    def contains(self, moment: time) -> bool:
        """Whether a wall-clock time falls inside the quiet hours."""
        return within_active_hours(moment, f"{self.start:%H:%M}", f"{self.end:%H:%M}")

    def next_end(self, now: datetime, zone: tzinfo) -> datetime:
        """When the quiet hours next end after `now` (UTC): the end of this stretch when inside."""
        return next_wall_time(now, self.end, zone)


def quiet_hours_of(value: str | None) -> QuietHours | None:
    """A person's stored quiet hours, None when unset or unreadable."""
    if not value:
        return None
    try:
        return QuietHours.parse(value)
    except ValueError:
        return None
