"""The 2% deviation guard against a bad print from the live feed: a bar too far from the last
close is held back from the engine until the next bar confirms the move (quant/prints.py), and
the executor checks each order against the previous bar's close as an independent price (the
signal's price is the bar's own close)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from omega.memory import Store
from omega.quant.broker import PaperBroker
from omega.quant.engine import Bar
from omega.quant.executor import QuantExecutor
from omega.quant.feed import QuantFeed
from omega.quant.ledger import Outcome
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


def audited(store: Store, event: str) -> list[dict[str, object]]:
    return [json.loads(str(e["detail"])) for e in store.audit_entries(50) if e["event"] == event]


def engine_after(store: Store) -> dict[str, object]:
    """What the feed saved of the engine when it stopped."""
    saved = QuantStateStore(store).engine_state("MSFT")
    assert saved is not None
    return saved


@pytest.mark.parametrize("factor", [1.10, 0.90])
async def test_a_bad_print_from_the_feed_is_held_back_never_traded_nor_learnt(
    store: Store, tmp_path: Path, factor: float
) -> None:
    bars = trending_bars(300)
    true = bars[-1].close
    bad = true * factor
    after = Bar("next", true, true, true, true, 1e7)
    executor, paper = await feed_through(store, [*bars, Bar("bad", bad, bad, bad, bad, 1e7), after])

    # The bars before traded (the screen lets ordinary bars through) ...
    assert paper.placed and all(o.reference_price != bad for o in paper.placed)
    _, before = executor.decided[bars[-1].time]
    assert before.status in {"filled", "skipped"}
    # ... the bad print reached neither the executor nor the engine: held, then dropped when the
    # next bar came back to the old level, both audited; the breaker counted nothing ...
    assert "bad" not in executor.decided
    assert audited(store, "quant_bar_held") == [
        {"symbol": "MSFT", "time": "bad", "close": bad, "last": true}
    ]
    assert audited(store, "quant_bar_dropped") == [
        {"symbol": "MSFT", "time": "bad", "close": bad, "last": true}
    ]
    assert executor.breaker()["failures"] == 0
    # ... the next bar was decided as any other (not blocked against a bad close) ...
    assert executor.decided["next"][1].status in {"filled", "skipped"}
    # ... and the engine ends exactly as if the bad print had never come.
    clean = Store(tmp_path / "clean.db")
    try:
        await feed_through(clean, [*bars, after])
        assert engine_after(store) == engine_after(clean)
    finally:
        clean.close()


async def test_a_real_jump_is_taken_one_bar_late_and_traded_at_the_new_level(
    store: Store,
) -> None:
    bars = trending_bars(300)
    level = bars[-1].close * 1.05
    jump = [Bar("jump", level, level, level, level, 1e7)]
    jump.append(Bar("again", level * 1.001, level * 1.001, level * 1.001, level * 1.001, 1e7))
    executor, _ = await feed_through(store, [*bars, *jump])
    # The first bar at the new level was held; the second confirmed it: the engine took both,
    # and the executor decided the second, checked against the first (not blocked).
    assert "jump" not in executor.decided
    signal, out = executor.decided["again"]
    assert out.status in {"filled", "skipped"}, out.reason
    assert signal["price"] == level * 1.001
    assert engine_after(store)["state"]["bars"] == len(bars) + 2  # type: ignore[index]
    assert audited(store, "quant_bar_dropped") == []
    assert [e["time"] for e in audited(store, "quant_bar_held")] == ["jump"]


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
