"""Due times are read in the user's timezone; unknown repeats are rejected."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from omega.schedule import (
    ScheduleError,
    parse_repeat,
    parse_when,
    resolve_timezone,
    timezone_name,
    to_utc,
)

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_naive_time_is_read_in_the_users_zone() -> None:
    lisbon = ZoneInfo("Europe/Lisbon")
    assert to_utc(parse_when("2026-07-01T09:00"), lisbon) == datetime(2026, 7, 1, 8, 0, tzinfo=UTC)
    assert to_utc(parse_when("2026-12-01 09:00"), lisbon) == datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_explicit_zone_wins() -> None:
    moment = to_utc(parse_when("2026-07-01T09:00+02:00"), ZoneInfo("America/New_York"))
    assert moment == datetime(2026, 7, 1, 7, 0, tzinfo=UTC)
    assert to_utc(parse_when("2026-07-01T09:00Z"), ZoneInfo("Asia/Tokyo")).hour == 9


@pytest.mark.parametrize("value", ["", "tomorrow", "09:00 next week", "2026-13-01T09:00"])
def test_unparseable_times_are_errors(value: str) -> None:
    with pytest.raises(ScheduleError):
        parse_when(value)


def test_repeats() -> None:
    assert parse_repeat(" Daily ") == "daily"
    assert parse_repeat("") == "once"
    for bad in ("hourly", "every day", "yearly", "%"):
        with pytest.raises(ScheduleError, match="unknown repeat"):
            parse_repeat(bad)


def test_timezone_resolution_order() -> None:
    assert timezone_name(resolve_timezone("Europe/Paris", "Asia/Tokyo")) == "Europe/Paris"
    assert timezone_name(resolve_timezone("Not/AZone", "Asia/Tokyo")) == "Asia/Tokyo"
    assert resolve_timezone("", "") is not None  # the system zone
