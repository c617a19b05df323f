"""Due times and repeats as a model or a person writes them, fuzzed: parse_when and
parse_repeat raise only ScheduleError, quickly; a parsed time re-rendered parses the same; and
planning any time parse_when accepts, in any zone, raises only ScheduleError (a date at the
ends of the calendar once raised OverflowError, an "internal error" for the SCHEDULE marker)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from omega.schedule import REPEATS, ScheduleError, parse_repeat, parse_when, plan_task

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

any_text = st.text(st.characters(codec=None, categories=None), max_size=60)
repetitive = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from(["a:", "1", "0:", "T", "+", "-", "2026-", "[", "9"]),
    st.integers(1, 10_000),
)
iso_like = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)
).map(lambda d: d.isoformat(timespec="minutes"))
zones = st.sampled_from(
    [ZoneInfo(name) for name in ("UTC", "America/Adak", "Pacific/Kiritimati", "Europe/Lisbon")]
)
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@settings(max_examples=300, deadline=None)
@given(any_text | repetitive | iso_like)
def test_parse_when_raises_only_schedule_error_and_fast(text: str) -> None:
    started = time.perf_counter()
    try:
        parse_when(text)
    except ScheduleError as exc:
        assert str(exc)
    assert time.perf_counter() - started < 1.0


@settings(max_examples=200, deadline=None)
@given(any_text | st.sampled_from(REPEATS).map(lambda r: f"  {r.upper()} "))
def test_parse_repeat_raises_only_schedule_error_and_is_idempotent(text: str) -> None:
    try:
        repeat = parse_repeat(text)
    except ScheduleError:
        return
    assert repeat in REPEATS
    assert parse_repeat(repeat) == repeat


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.none() | st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m))),
)
def test_a_parsed_time_rendered_again_parses_the_same(
    moment: datetime, zone: timezone | None
) -> None:
    moment = moment.replace(tzinfo=zone)
    parsed = parse_when(moment.isoformat())
    assert parsed == moment and parsed.utcoffset() == moment.utcoffset()
    assert parse_when(parsed.isoformat()) == parsed


@settings(max_examples=300, deadline=None)
@given(
    iso_like | iso_like.map(lambda s: s + "+14:00") | iso_like.map(lambda s: s + "-12:00"),
    st.sampled_from(REPEATS),
    zones,
)
@example("9999-12-31T23:59", "once", ZoneInfo("America/Adak"))
@example("0001-01-01T00:00", "daily", ZoneInfo("America/Adak"))
@example("0001-01-01T00:00+14:00", "once", ZoneInfo("UTC"))
def test_planning_any_parsed_time_raises_only_schedule_error(
    text: str, repeat: str, zone: ZoneInfo
) -> None:
    try:
        due, anchor = plan_task(parse_when(text), repeat, zone, NOW)
    except ScheduleError as exc:
        assert str(exc)
        return
    assert due.tzinfo is not None and anchor.tzinfo is None


def test_a_date_at_the_end_of_the_calendar_is_a_clear_schedule_error() -> None:
    with pytest.raises(ScheduleError, match="ends of the calendar"):
        plan_task(parse_when("9999-12-31T23:59"), "once", ZoneInfo("America/Adak"), NOW)
