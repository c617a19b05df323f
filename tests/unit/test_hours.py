"""Quiet hours: parsing, windows past midnight, when they end (across a DST change), and that
a model cannot set them."""

from __future__ import annotations

from datetime import UTC, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from omega.hours import QUIET_FACT, QuietHours, quiet_hours_of
from omega.memory import Store

MADRID = ZoneInfo("Europe/Madrid")


@pytest.mark.no_store
def test_quiet_hours_parse_and_wrap_past_midnight() -> None:
    night = QuietHours.parse(" 22:00-7:30 ")
    assert str(night) == "22:00-07:30"
    assert night.contains(time(23, 0)) and night.contains(time(3, 0))
    assert night.contains(time(22, 0)) and not night.contains(time(7, 30))
    assert not night.contains(time(12, 0))
    siesta = QuietHours.parse("14:00-16:00")
    assert siesta.contains(time(15, 0)) and not siesta.contains(time(22, 0))
    for bad in ("22:00", "25:00-07:00", "22:00-07:60", "10:00-10:00", "night", ""):
        with pytest.raises(ValueError):
            QuietHours.parse(bad)
    assert quiet_hours_of("garbage") is None and quiet_hours_of(None) is None


@pytest.mark.no_store
def test_quiet_hours_end_at_the_wall_clock_time_across_a_dst_change() -> None:
    night = QuietHours.parse("22:00-07:30")
    # The night of the spring change (Sunday 30 March 2025, 02:00 -> 03:00 in Madrid).
    now = datetime(2025, 3, 29, 23, 0, tzinfo=MADRID).astimezone(UTC)
    end = night.next_end(now, MADRID)
    assert end.astimezone(MADRID).replace(tzinfo=None) == datetime(2025, 3, 30, 7, 30)
    # Already past today's end: tomorrow's.
    noon = datetime(2025, 3, 30, 12, 0, tzinfo=MADRID).astimezone(UTC)
    assert night.next_end(noon, MADRID).astimezone(MADRID).day == 31


def test_a_model_cannot_set_quiet_hours(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        assert not store.set_learned_fact("ana", QUIET_FACT, "00:00-23:59")
        assert store.get_fact("ana", QUIET_FACT) is None
    finally:
        store.close()
