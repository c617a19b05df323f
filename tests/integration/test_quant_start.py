"""`omega start` with `[quant] enabled`: without ib_async it says so and runs on."""

from __future__ import annotations

import importlib.util
import re
import socket
import time
from pathlib import Path

import pytest

from omega.config.quant import QuantSection
from omega.memory import Store
from omega.quant import service
from omega.quant.settings import QuantStateStore
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_start import Running


def test_start_with_quant_enabled_runs_and_says_when_ib_async_is_missing(
    fake_openai: FakeOpenAI,
) -> None:
    running = Running(openai_env(fake_openai, OMEGA_QUANT__ENABLED="true"))
    missing = importlib.util.find_spec("ib_async") is None
    # Waits until the line comes (a start on a loaded machine once took over 20 s).
    deadline = time.monotonic() + (90 if missing else 3)
    while time.monotonic() < deadline and not any("[quant]" in line for line in running.stderr):
        time.sleep(0.05)
    code, stderr = running.terminate()
    assert code == 0, stderr
    if missing:
        assert "[quant] is enabled but the quant feed needs ib_async" in stderr
    else:  # the feed runs (and, with no gateway here, keeps retrying quietly)
        assert "[quant]" not in stderr


def test_build_feed_uses_the_configured_limits_and_a_closed_live_broker(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    pytest.importorskip("ib_async")
    from omega.quant.live import IbLiveBroker

    made: list[object] = []
    store = Store(Path(str(tmp_path)) / "m.db")
    config = QuantSection(
        max_daily_orders=3, daily_loss_limit=0.01, limit_slippage=0.002, fill_timeout_secs=9
    )
    feed = service.build_feed(store, config, ib_factory=lambda: made.append(1))
    live = feed.executor.live
    assert isinstance(live, IbLiveBroker) and not live.is_open and not made  # not connected
    assert (live.client_id, live.slippage, live.fill_timeout) == (18, 0.002, 9)
    with pytest.raises(ValueError, match="order_client_id"):
        QuantSection(client_id=5, order_client_id=5)
    assert feed.executor.limits.max_daily_orders == 3
    assert feed.executor.limits.daily_loss_limit == 0.01
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert "ib_async" in service.feed_unavailable()
    store.close()


def _closed_port() -> int:
    """A local port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_quant_enable_in_chat_starts_the_feed_without_config_and_status_shows_it(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """No [quant] section anywhere: `/quant enable` alone makes the running `omega start` run
    the feed, and `/quant status` and `omega status` say whether it is connected (here: not,
    nothing listens on the port, with the error and the retry) and that no bar came yet."""
    port = _closed_port()
    env = openai_env(fake_openai, OMEGA_QUANT__PORT=str(port))
    running = Running(env)
    try:
        assert running.proc.stdin is not None
        running.proc.stdin.write(jsonl({"text": "/quant enable"}))
        running.proc.stdin.flush()
        enabled = running.wait_for("command")[-1]["text"]
        assert "Quant enabled for SPY" in str(enabled)
        with_ib = importlib.util.find_spec("ib_async") is not None
        expected = (
            f"NOT connected to IB 127.0.0.1:{port} (ConnectionRefusedError"
            if with_ib
            else "cannot run here: the quant feed needs ib_async"
        )
        deadline = time.monotonic() + 30
        status = ""
        while time.monotonic() < deadline and expected not in status:
            time.sleep(0.5)
            status = run_omega("status", env=env).stdout
        row = next((line for line in status.splitlines() if line.startswith("quant ")), "")
        assert expected in row, status
        assert "enabled, SPY, paper mode; feed: " in row and "no bar received yet" in row
        running.proc.stdin.write(jsonl({"text": "/quant status"}))
        running.proc.stdin.flush()
        replies = running.wait_for("command", 2)
        text = str(replies[-1]["text"])
        assert f"Feed: {expected}" in text and "no bar received yet" in text
    finally:
        code, stderr = running.terminate()
    assert code == 0, stderr
    after = run_omega("status", env=env).stdout
    assert "feed: not running (stopped" in after or "cannot run here" in after, after


def test_omega_status_shows_a_connected_feed_and_when_its_last_bar_came(
    isolated_env: Path,
) -> None:
    """`omega status` (another process than `omega start`) reads the running feed's report."""
    assert run_omega("status").returncode == 0  # creates the home and memory.db
    store = Store(isolated_env / "memory.db")
    state = QuantStateStore(store)
    state.update(enabled=True, symbol="AAPL")
    now = time.time()
    bar = {"symbol": "AAPL", "time": "2026-11-25 14:30:05+00:00", "close": 190.5, "at": now - 4}
    state.save_feed(
        {
            "state": "connected",
            "endpoint": "127.0.0.1:4002",
            "symbol": "AAPL",
            "since": now - 60,
            "error": "",
            "retry_in": 0.0,
            "last_bar": bar,
        }
    )
    store.close()
    result = run_omega("status")
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("quant "))
    assert "enabled, AAPL, paper mode; feed: connected to IB 127.0.0.1:4002 for AAPL since" in row
    assert "; last bar 2026-11-25 14:30:05+00:00 (AAPL, close 190.5) received " in row
    assert re.search(r"received \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, \d+ s ago$", row), row
