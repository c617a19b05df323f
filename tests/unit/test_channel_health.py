"""The one health reporter both live channels keep their health file with."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from omega.channels.health import HealthReporter, describe_health
from omega.health_file import read_health, write_health

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_a_report_is_written_on_change_and_refreshed_only_now_and_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    path = tmp_path / "health.json"
    account = [""]
    reporter = HealthReporter(path, lambda: account[0], every=60.0, mode="bot")

    reporter.report("starting")
    first = read_health(path) or {}
    assert {k: v for k, v in first.items() if k != "updated_at"} == {
        "account": "",
        "state": "starting",
        "detail": "",
        "mode": "bot",
    }
    account[0] = "@omega_bot"
    clock[0] += 1
    reporter.report("polling")  # a change: written at once, with the account known now
    assert (read_health(path) or {})["account"] == "@omega_bot"
    path.unlink()
    clock[0] += 30
    reporter.report("polling")  # the same state soon after: not rewritten
    assert not path.exists()
    clock[0] += 31
    reporter.report("polling")  # the same state a minute on: rewritten (status sees it alive)
    assert (read_health(path) or {})["state"] == "polling"
    reporter.report("polling failing", "timeout")
    assert (read_health(path) or {})["detail"] == "timeout"


def test_without_a_file_nothing_is_written(tmp_path: Path) -> None:
    reporter = HealthReporter(None, lambda: "x")
    reporter.report("starting")
    assert list(tmp_path.iterdir()) == []


def test_an_old_report_says_omega_stopped_but_a_failure_stays_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "fifo.health.json"
    write_health(path, state="running")
    later = time.time() + 600
    assert "Omega is probably not running" in describe_health(path, now=later)
    write_health(path, state="failed", detail="could not be loaded: ImportError()")
    assert describe_health(path, now=later) == "failed (could not be loaded: ImportError())"
