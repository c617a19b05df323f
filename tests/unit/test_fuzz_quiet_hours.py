"""Quiet hours as a person types them (`/quiet 22:00-07:30`), fuzzed: QuietHours.parse raises
only ValueError, parse_hhmm only ever returns a time or None, and what is stored re-reads the
same (str(parse(x)) parses back to the same window)."""

from __future__ import annotations

from datetime import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.hours import QuietHours, parse_hhmm, quiet_hours_of

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

any_text = st.text(st.characters(codec=None, categories=None), max_size=30)
clock = st.builds(
    lambda h, m, pad: f"{h:02d}:{m:02d}" if pad else f"{h}:{m:02d}",
    st.integers(0, 25),
    st.integers(0, 61),
    st.booleans(),
)
windows = st.builds(
    lambda a, sep, b: f"{a}{sep}{b}",
    clock | any_text,
    st.sampled_from(["-", " - ", "–", "--", ""]),
    clock | any_text,
)
repetitive = st.builds(
    lambda u, n: u * n, st.sampled_from(["1", ":", "-", "0:", "22:00-"]), st.integers(1, 10_000)
)


@settings(max_examples=300, deadline=None)
@given(windows | any_text | repetitive)
def test_parse_raises_only_value_error_and_round_trips(text: str) -> None:
    try:
        hours = QuietHours.parse(text)
    except ValueError as exc:
        assert str(exc)
        assert quiet_hours_of(text) is None
        return
    assert hours.start != hours.end
    assert QuietHours.parse(str(hours)) == hours == quiet_hours_of(text)


@settings(max_examples=200, deadline=None)
@given(clock | any_text)
def test_parse_hhmm_returns_a_time_or_none(text: str) -> None:
    found = parse_hhmm(text)
    assert found is None or (isinstance(found, time) and parse_hhmm(f"{found:%H:%M}") == found)
