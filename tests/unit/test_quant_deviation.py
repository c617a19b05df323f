"""The 2% deviation guard against a bad print from the live feed: the signal's price is the
bar's own close, so the feed hands the executor the previous bar's close as an independent
price, and a bar too far from it is blocked (audited, counted by the breaker), not traded."""

from __future__ import annotations

import asyncio
import json

import pytest

from omega.memory import Store
from omega.quant.broker import PaperBroker
from omega.quant.engine import Bar
from omega.quant.executor import Outcome, QuantExecutor
from omega.quant.feed import QuantFeed
from omega.quant.settings import QuantStateStore
from tests.unit.test_quant_feed import FakeIB, store, trending_bars

__all__ = ["store"]  # the fixture, shared with the feed's tests


class Recording(QuantExecutor):
    """The real executor, keeping what it decided for each bar (by the signal's time)."""

    def __init__(self, store: Store, paper: PaperBroker) -> None:
        super().__init__(store, paper)
        self.decided: dict[str, tuple[dict[str, object], Outcome]] = {}

    async def on_signal(
        self, signal: dict[str, object], symbol: str, market_price: float, reference: float = 0.0
    ) -> Outcome:
        out = await super().on_signal(signal, symbol, market_price, reference)
        self.decided[str(signal["time"])] = (signal, out)
        return out


async def feed_through(store: Store, bars: list[Bar]) -> tuple[Recording, PaperBroker]:
    """Run `bars` through the real QuantFeed (fake IB client), paper trading."""
    QuantStateStore(store).update(enabled=True, symbol="MSFT", portfolio=100_000.0)
    stop = asyncio.Event()
    fake = FakeIB([bars], stop)
    paper = PaperBroker()
    executor = Recording(store, paper)

    async def sleep(seconds: float) -> None:
        return None

    feed = QuantFeed(store, lambda: fake, executor, sleep=sleep)
    await asyncio.wait_for(feed.run(stop), timeout=120)
    return executor, paper


def held(store: Store) -> int:
    rows = store.query("SELECT quantity FROM quant_positions WHERE symbol = 'MSFT'")
    return int(rows[0]["quantity"]) if rows else 0


@pytest.mark.parametrize("factor", [1.10, 0.90])
async def test_a_bad_print_from_the_feed_is_blocked_not_traded(store: Store, factor: float) -> None:
    bars = trending_bars(300)
    true = bars[-1].close
    bad = true * factor
    bars += [Bar("bad", bad, bad, bad, bad, 1e7), Bar("next", true, true, true, true, 1e7)]
    executor, paper = await feed_through(store, bars)

    # The bars before traded (the guard lets ordinary bars through) ...
    assert paper.placed and all(o.reference_price != bad for o in paper.placed)
    _, before = executor.decided[bars[-3].time]
    assert before.status in {"filled", "skipped"}
    # ... the bad print came with a directional signal that wanted an order ...
    signal, out = executor.decided["bad"]
    assert signal["direction"] == "Long" and signal["price"] == bad
    assert int(str(signal["quantity"])) != held(store)
    # ... and was blocked against the previous close, audited, counted by the breaker.
    assert out.status == "blocked"
    assert out.reason == "price deviation 10.00% from the reference price > 2%"
    blocked = [
        json.loads(str(e["detail"]))
        for e in store.audit_entries(50)
        if e["event"] == "quant_order_blocked"
    ]
    assert {"symbol": "MSFT", "mode": "paper", "reason": out.reason} in blocked
    assert executor.breaker()["failures"] == 1
    # Back at the true price, the position is still the one sized before the bad print.
    assert executor.decided["next"][1].status == "skipped"


async def test_the_executor_checks_the_reference_price_itself(store: Store) -> None:
    """Market price equal to the signal's (the feed's case): the reference decides."""
    signal: dict[str, object] = {
        "time": "t1",
        "price": 110.0,
        "direction": "Long",
        "quantity": 10,
        "execution": {"strategy": "Immediate", "slices": 1},
    }
    executor = QuantExecutor(store, PaperBroker())
    out = await executor.on_signal(signal, "SPY", 110.0, reference=100.0)
    assert out.status == "blocked" and "reference price" in out.reason
    out = await executor.on_signal({**signal, "time": "t2"}, "SPY", 110.0, reference=108.0)
    assert out.status == "filled"  # within 2% of the reference
    out = await executor.on_signal({**signal, "time": "t3", "quantity": 20}, "SPY", 110.0)
    assert out.status == "filled"  # no reference: the signal's price alone, as before
