"""`omega start` with `[quant] enabled`: without ib_async it says so and runs on."""

from __future__ import annotations

import importlib.util
import time

import pytest

from omega.config import QuantSection
from omega.memory import Store
from omega.quant import service
from tests.conftest import openai_env
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_start import Running


def test_start_with_quant_enabled_runs_and_says_when_ib_async_is_missing(
    fake_openai: FakeOpenAI,
) -> None:
    running = Running(openai_env(fake_openai, OMEGA_QUANT__ENABLED="true"))
    missing = importlib.util.find_spec("ib_async") is None
    deadline = time.monotonic() + (20 if missing else 3)
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
