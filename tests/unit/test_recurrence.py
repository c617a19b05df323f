"""Repeating tasks keep their local wall-clock time, skip missed runs and survive DST changes."""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from omega.schedule import REPEATS, ScheduleError, first_occurrence, next_occurrence

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

LISBON = ZoneInfo("Europe/Lisbon")
NEW_YORK = ZoneInfo("America/New_York")
# Lord_Howe (30-minute DST) is left out on purpose: the gap bound below assumes whole hours.
ZONES = [
    "UTC",
    "Europe/Lisbon",
    "America/New_York",
    "Australia/Sydney",
    "Asia/Kolkata",
    "America/Sao_Paulo",
]
PERIODIC = [r for r in REPEATS if r != "once"]


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def run(
    anchor: datetime, repeat: str, zone: ZoneInfo, after: datetime, count: int
) -> list[datetime]:
    """`count` successive occurrences, each found with `after` = the previous one."""
    found: list[datetime] = []
    for _ in range(count):
        nxt = next_occurrence(anchor, repeat, zone, after)
        assert nxt is not None
        found.append(nxt)
        after = nxt
    return found


# --- monthly ---------------------------------------------------------------------------------


def test_monthly_31st_through_a_leap_year() -> None:
    got = run(datetime(2028, 1, 31, 9, 0), "monthly", ZoneInfo("UTC"), utc(2028, 1, 1), 6)
    assert [d.date() for d in got] == [
        date(2028, 1, 31),
        date(2028, 2, 29),
        date(2028, 3, 31),
        date(2028, 4, 30),
        date(2028, 5, 31),
        date(2028, 6, 30),
    ]
    assert all(d.time() == time(9, 0) for d in got)


def test_monthly_31st_in_a_common_year_does_not_drift() -> None:
    got = run(datetime(2027, 1, 31, 9, 0), "monthly", ZoneInfo("UTC"), utc(2027, 1, 31, 9), 3)
    # Feb 28 must not pull March back to the 28th: every month is counted from the anchor.
    assert [d.date() for d in got] == [date(2027, 2, 28), date(2027, 3, 31), date(2027, 4, 30)]


def test_monthly_30th() -> None:
    got = run(datetime(2026, 1, 30, 8, 15), "monthly", ZoneInfo("UTC"), utc(2026, 1, 30, 8, 15), 3)
    assert [d.date() for d in got] == [date(2026, 2, 28), date(2026, 3, 30), date(2026, 4, 30)]
    leap = run(datetime(2028, 1, 30, 8, 15), "monthly", ZoneInfo("UTC"), utc(2028, 2, 1), 2)
    assert [d.date() for d in leap] == [date(2028, 2, 29), date(2028, 3, 30)]


def test_monthly_far_after_the_anchor() -> None:
    got = next_occurrence(datetime(2020, 1, 31, 9, 0), "monthly", ZoneInfo("UTC"), utc(2035, 2, 1))
    assert got == utc(2035, 2, 28, 9, 0)


# --- daily and DST ---------------------------------------------------------------------------


def test_daily_keeps_local_time_across_lisbon_dst() -> None:
    anchor = datetime(2026, 1, 1, 9, 0)
    assert next_occurrence(anchor, "daily", LISBON, utc(2026, 3, 28)) == utc(2026, 3, 28, 9)
    assert next_occurrence(anchor, "daily", LISBON, utc(2026, 3, 28, 9)) == utc(2026, 3, 29, 8)
    assert next_occurrence(anchor, "daily", LISBON, utc(2026, 10, 24)) == utc(2026, 10, 24, 8)
    assert next_occurrence(anchor, "daily", LISBON, utc(2026, 10, 24, 8)) == utc(2026, 10, 25, 9)


def test_daily_keeps_local_time_across_new_york_dst() -> None:
    anchor = datetime(2026, 1, 1, 9, 0)
    assert next_occurrence(anchor, "daily", NEW_YORK, utc(2026, 3, 7)) == utc(2026, 3, 7, 14)
    assert next_occurrence(anchor, "daily", NEW_YORK, utc(2026, 3, 7, 14)) == utc(2026, 3, 8, 13)
    assert next_occurrence(anchor, "daily", NEW_YORK, utc(2026, 10, 31)) == utc(2026, 10, 31, 13)
    assert next_occurrence(anchor, "daily", NEW_YORK, utc(2026, 10, 31, 13)) == utc(2026, 11, 1, 14)


def test_spring_forward_gap_new_york() -> None:
    # 2026-03-08 02:00 EST jumps to 03:00 EDT: 02:30 does not exist that day.
    anchor = datetime(2026, 3, 1, 2, 30)
    got = run(anchor, "daily", NEW_YORK, utc(2026, 3, 7, 8), 2)
    assert [d.astimezone(NEW_YORK).replace(tzinfo=None) for d in got] == [
        datetime(2026, 3, 8, 3, 30),
        datetime(2026, 3, 9, 2, 30),
    ]
    assert got == [utc(2026, 3, 8, 7, 30), utc(2026, 3, 9, 6, 30)]


def test_spring_forward_gap_lisbon() -> None:
    # Lisbon's gap is 01:00 -> 02:00 WEST (2026-03-29), so 01:30 is the missing time there.
    anchor = datetime(2026, 3, 1, 1, 30)
    got = run(anchor, "daily", LISBON, utc(2026, 3, 28, 2), 2)
    assert [d.astimezone(LISBON).replace(tzinfo=None) for d in got] == [
        datetime(2026, 3, 29, 2, 30),
        datetime(2026, 3, 30, 1, 30),
    ]


def test_first_occurrence_in_a_gap_moves_forward() -> None:
    assert first_occurrence(datetime(2026, 3, 8, 2, 30), "once", NEW_YORK) == utc(2026, 3, 8, 7, 30)
    assert first_occurrence(datetime(2026, 1, 1, 9), "daily", LISBON) == utc(2026, 1, 1, 9)


def test_fall_back_overlap_takes_the_first() -> None:
    # 01:30 happens twice on 2026-11-01 in New York (EDT, then EST); the EDT one is used.
    anchor = datetime(2026, 10, 1, 1, 30)
    assert next_occurrence(anchor, "daily", NEW_YORK, utc(2026, 10, 31, 12)) == utc(
        2026, 11, 1, 5, 30
    )
    # Lisbon: 2026-10-25 01:30 WEST (00:30 UTC) comes before 01:30 WET (01:30 UTC).
    assert next_occurrence(anchor, "daily", LISBON, utc(2026, 10, 24, 12)) == utc(
        2026, 10, 25, 0, 30
    )
    # Between the two wall-clock 01:30s the task does not fire a second time that day.
    assert next_occurrence(anchor, "daily", LISBON, utc(2026, 10, 25, 0, 30)) == utc(
        2026, 10, 26, 1, 30
    )


# --- weekly and weekdays ---------------------------------------------------------------------


def test_weekdays_friday_to_monday() -> None:
    friday = datetime(2026, 1, 2, 7, 45)
    got = run(friday, "weekdays", LISBON, utc(2026, 1, 1), 4)
    assert [d.date() for d in got] == [
        date(2026, 1, 2),
        date(2026, 1, 5),
        date(2026, 1, 6),
        date(2026, 1, 7),
    ]


def test_weekdays_saturday_anchor_starts_monday() -> None:
    saturday = datetime(2026, 1, 3, 7, 45)
    assert first_occurrence(saturday, "weekdays", ZoneInfo("UTC")) == utc(2026, 1, 5, 7, 45)
    assert next_occurrence(saturday, "weekdays", ZoneInfo("UTC"), utc(2025, 1, 1)) == utc(
        2026, 1, 5, 7, 45
    )
    # Other repeats keep a weekend anchor as it is.
    assert first_occurrence(saturday, "weekly", ZoneInfo("UTC")) == utc(2026, 1, 3, 7, 45)


def test_weekly_keeps_the_weekday() -> None:
    wednesday = datetime(2026, 1, 7, 18, 0)
    got = run(wednesday, "weekly", NEW_YORK, utc(2026, 2, 27), 6)
    assert all(d.astimezone(NEW_YORK).weekday() == 2 for d in got)
    assert all(d.astimezone(NEW_YORK).time() == time(18, 0) for d in got)
    assert got[0].date() == date(2026, 3, 4)


# --- skipping and edges ----------------------------------------------------------------------


def test_after_equal_to_an_occurrence_returns_the_following_one() -> None:
    anchor = datetime(2026, 5, 1, 9, 0)
    assert next_occurrence(anchor, "daily", ZoneInfo("UTC"), utc(2026, 5, 3, 9)) == utc(
        2026, 5, 4, 9
    )
    just_before = utc(2026, 5, 3, 9) - timedelta(microseconds=1)
    assert next_occurrence(anchor, "daily", ZoneInfo("UTC"), just_before) == utc(2026, 5, 3, 9)


def test_before_the_anchor_returns_the_anchor() -> None:
    anchor = datetime(2026, 5, 1, 9, 0)
    for repeat in PERIODIC:
        assert next_occurrence(anchor, repeat, LISBON, utc(2020, 1, 1)) == utc(2026, 5, 1, 8)


def test_a_week_of_downtime_fires_once() -> None:
    anchor = datetime(2026, 5, 1, 9, 0)
    last_run = utc(2026, 5, 10, 9)
    back_on = last_run + timedelta(days=7, hours=3)
    # One next occurrence, the one after the machine came back, not the seven it missed.
    assert next_occurrence(anchor, "daily", ZoneInfo("UTC"), back_on) == utc(2026, 5, 18, 9)


def test_after_in_another_zone_is_compared_as_an_instant() -> None:
    anchor = datetime(2026, 5, 1, 9, 0)
    after = datetime(2026, 5, 3, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # = 08:00 UTC
    assert next_occurrence(anchor, "daily", LISBON, after) == utc(2026, 5, 4, 8)


def test_unknown_repeat_raises() -> None:
    with pytest.raises(ScheduleError):
        next_occurrence(datetime(2026, 1, 1, 9), "hourly", LISBON, utc(2026, 1, 1))
    with pytest.raises(ScheduleError):
        first_occurrence(datetime(2026, 1, 1, 9), "fortnightly", LISBON)


def test_naive_after_raises() -> None:
    with pytest.raises(ScheduleError):
        next_occurrence(datetime(2026, 1, 1, 9), "daily", LISBON, datetime(2026, 1, 1))


def test_once_has_no_next() -> None:
    assert next_occurrence(datetime(2030, 1, 1, 9), "once", LISBON, utc(2026, 1, 1)) is None


# --- properties ------------------------------------------------------------------------------

# Times around the DST changes of the zones above, so gaps and overlaps are hit often.
_EDGE_TIMES = [time(0, 0), time(0, 30), time(1, 0), time(1, 30), time(2, 0), time(2, 30), time(3)]
anchors = st.builds(
    datetime.combine,
    st.dates(min_value=date(2020, 1, 1), max_value=date(2035, 12, 31)),
    st.one_of(st.sampled_from(_EDGE_TIMES), st.times()),
)
zones = st.sampled_from(ZONES).map(ZoneInfo)
periodic = st.sampled_from(PERIODIC)
offsets = st.timedeltas(min_value=timedelta(days=-3 * 366), max_value=timedelta(days=3 * 366))


def local(moment: datetime, zone: ZoneInfo) -> datetime:
    return moment.astimezone(zone).replace(tzinfo=None)


def in_gap(wall: datetime, zone: ZoneInfo) -> bool:
    # Through UTC: astimezone() to the datetime's own zone would return it unchanged.
    return local(wall.replace(tzinfo=zone).astimezone(UTC), zone) != wall


def oracle(anchor: datetime, repeat: str, zone: ZoneInfo, after: datetime) -> datetime:
    """Brute force: walk every local date from the anchor (slow, but obviously right)."""
    day = anchor.date()
    while True:
        if repeat == "daily":
            hit = True
        elif repeat == "weekly":
            hit = (day - anchor.date()).days % 7 == 0
        elif repeat == "weekdays":
            hit = day.weekday() < 5
        else:
            hit = day.day == min(anchor.day, calendar.monthrange(day.year, day.month)[1])
        if hit:
            # zoneinfo's fold=0 reading of a gap time is the time shifted forward by the gap, and
            # of an overlap time its first occurrence (schedule.py: overlaps take fold=0), whatever
            # fold the anchor carried.
            wall = anchor.time().replace(fold=0)
            moment = datetime.combine(day, wall).replace(tzinfo=zone).astimezone(UTC)
            if moment > after:
                return moment
        day += timedelta(days=1)


@settings(max_examples=300, deadline=None)
@given(anchors, periodic, zones, offsets)
@example(  # an anchor inside the spring-forward gap (the test's gap check once missed it)
    datetime(2028, 3, 12, 2, 0), "daily", ZoneInfo("America/New_York"), timedelta(days=-1)
)
def test_next_occurrence_properties(
    anchor: datetime, repeat: str, zone: ZoneInfo, offset: timedelta
) -> None:
    first = first_occurrence(anchor, repeat, zone)
    after = first + offset
    result = next_occurrence(anchor, repeat, zone, after)
    assert result is not None
    assert result.tzinfo == UTC
    assert result > after
    if after < first:
        assert result == first

    wall = local(result, zone)
    expected = datetime.combine(wall.date(), anchor.time())
    if wall != expected:
        # Only a spring-forward gap may move it, and then forward by at most an hour.
        assert in_gap(expected, zone)
        assert timedelta(0) < wall - expected <= timedelta(hours=1)
    else:
        # An ambiguous wall-clock time takes its first (fold=0) instant.
        assert result == expected.replace(tzinfo=zone, fold=0).astimezone(UTC)

    # Once past the first occurrence, the result is at most one period (+ a DST hour) away.
    late = after >= first
    if repeat == "daily":
        assert not late or result < after + timedelta(days=2)
    elif repeat == "weekly":
        assert wall.weekday() == anchor.weekday()
        assert not late or result < after + timedelta(days=7, hours=2)
    elif repeat == "weekdays":
        assert wall.weekday() < 5
        assert not late or result < after + timedelta(days=3, hours=2)
    else:
        assert wall.day == min(anchor.day, calendar.monthrange(wall.year, wall.month)[1])

    following = next_occurrence(anchor, repeat, zone, result)
    assert following is not None
    assert following > result
    nxt = local(following, zone).date()
    if repeat == "daily":
        assert nxt == wall.date() + timedelta(days=1)
    elif repeat == "weekly":
        assert nxt == wall.date() + timedelta(days=7)
    elif repeat == "weekdays":
        assert nxt == wall.date() + timedelta(days=3 if wall.weekday() == 4 else 1)
    else:
        assert nxt.year * 12 + nxt.month == wall.year * 12 + wall.month + 1


@settings(max_examples=200, deadline=None)
@given(anchors, periodic, zones, offsets)
@example(  # an anchor carrying fold=1, repeated into the autumn overlap: the first 01:00 counts
    datetime(2020, 7, 11, 1, 0, fold=1), "daily", ZoneInfo("Europe/Lisbon"), timedelta(days=840)
)
def test_next_occurrence_matches_brute_force(
    anchor: datetime, repeat: str, zone: ZoneInfo, offset: timedelta
) -> None:
    after = first_occurrence(anchor, repeat, zone) + offset
    assert next_occurrence(anchor, repeat, zone, after) == oracle(anchor, repeat, zone, after)


@given(anchors, zones)
def test_first_occurrence_is_the_anchor_unless_in_a_gap(anchor: datetime, zone: ZoneInfo) -> None:
    first = first_occurrence(anchor, "daily", zone)
    if not in_gap(anchor, zone):
        assert first == anchor.replace(tzinfo=zone, fold=0).astimezone(UTC)
    else:
        assert timedelta(0) < local(first, zone) - anchor <= timedelta(hours=1)
    assert next_occurrence(anchor, "daily", zone, first - timedelta(microseconds=1)) == first
