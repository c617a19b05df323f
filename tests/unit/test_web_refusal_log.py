"""RefusalLog: a refused Host is logged once a window, with the count of those left unlogged."""

from __future__ import annotations

from omega.web.hosts import RefusalLog


def test_a_name_is_logged_once_a_window_with_what_was_left_out() -> None:
    log = RefusalLog(window=60.0, names=2)
    assert log.record("evil.example", now=0.0) == 0
    assert [log.record("evil.example", now=float(t)) for t in range(1, 11)] == [None] * 10
    assert log.record("evil.example", now=61.0) == 10  # the next window: the ten left out
    assert log.record("evil.example", now=62.0) is None


def test_only_the_newest_names_are_remembered() -> None:
    log = RefusalLog(window=60.0, names=2)
    for name in ("a.example", "b.example", "c.example"):
        assert log.record(name, now=0.0) == 0
    assert log.record("c.example", now=1.0) is None
    assert log.record("a.example", now=1.0) == 0  # forgotten: told again, never unbounded
    assert len(log._seen) == 2
