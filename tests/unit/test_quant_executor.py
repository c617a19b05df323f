"""The guarded executor: paper by default, live only after the owner's code, circuit breaker,
daily limits, write-ahead intents that survive a crash without a duplicate order, audit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omega.memory import Store
from omega.quant.broker import BrokerResult, OrderRequest, PaperBroker
from omega.quant.executor import Limits, QuantExecutor
from omega.quant.ledger import client_order_id
from omega.quant.settings import QuantStateStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "memory.db")
    yield s
    s.close()


def sig(
    t: str,
    direction: str = "Long",
    qty: int = 10,
    price: float = 100.0,
    strategy: str = "Immediate",
    slices: int = 1,
) -> dict[str, Any]:
    return {
        "time": t,
        "price": price,
        "direction": direction,
        "quantity": qty,
        "execution": {"strategy": strategy, "slices": slices, "participation": 0.0},
    }


def events(store: Store) -> list[tuple[str, str, dict[str, Any]]]:
    rows = store.audit_entries(200)
    return [
        (str(r["event"]), str(r["status"]), json.loads(str(r["detail"])))
        for r in reversed(rows)
        if str(r["event"]).startswith("quant_")
    ]


class FlakyBroker(PaperBroker):
    def __init__(self, fail: int) -> None:
        super().__init__()
        self.fail = fail

    async def place(self, order: OrderRequest) -> BrokerResult:
        if self.fail:
            self.fail -= 1
            raise ConnectionError("gateway down")
        return await super().place(order)


async def test_paper_by_default_with_intent_result_and_audit(store: Store) -> None:
    paper, live = PaperBroker(), PaperBroker()
    ex = QuantExecutor(store, paper, live)
    out = await ex.on_signal(sig("t1"), "SPY", 100.5)
    assert out.status == "filled" and out.side == "BUY" and out.quantity == 10
    assert len(paper.placed) == 1 and not live.placed
    [row] = store.query("SELECT * FROM quant_orders")
    assert (row["mode"], row["status"], row["quantity"], row["fill_price"]) == (
        "paper",
        "filled",
        10,
        100.5,
    )
    assert ex.ledger.position("SPY", "paper") == (10, 100.5)
    kinds = [e[0] for e in events(store)]
    assert kinds == ["quant_order_intent", "quant_order_result"]
    assert events(store)[0][2]["client_order_id"] == out.client_order_id


async def test_a_repeated_signal_never_doubles_the_order(store: Store) -> None:
    paper = PaperBroker()
    ex = QuantExecutor(store, paper)
    first = await ex.on_signal(sig("t1"), "SPY", 100.0)
    again = await ex.on_signal(sig("t1"), "SPY", 100.0)
    later = await ex.on_signal(sig("t2"), "SPY", 100.0)  # same target: nothing to trade
    assert first.status == "filled"
    assert again.status in {"duplicate", "skipped"}
    assert later.status == "skipped"
    assert len(paper.placed) == 1
    flip = await ex.on_signal(sig("t3", "Short", 4), "SPY", 101.0)
    assert (flip.status, flip.side, flip.quantity) == ("filled", "SELL", 14)
    assert ex.ledger.position("SPY", "paper") == (-4, 101.0)
    [pnl] = [r["realized_pnl"] for r in store.query("SELECT * FROM quant_orders WHERE side='SELL'")]
    assert pnl == pytest.approx(10 * 1.0)


async def test_twap_trades_one_slice_per_signal(store: Store) -> None:
    paper = PaperBroker()
    ex = QuantExecutor(store, paper)
    out = await ex.on_signal(sig("t1", qty=100, strategy="TWAP", slices=4), "SPY", 100.0)
    assert out.quantity == 25
    assert (await ex.on_signal(sig("t1", strategy="NoTrade"), "SPY", 100.0)).status == "skipped"
    assert (await ex.on_signal(sig("t2", "Flat"), "SPY", 100.0)).status == "skipped"


async def test_crash_after_the_intent_resumes_without_a_duplicate(store: Store) -> None:
    paper = PaperBroker()
    ex = QuantExecutor(store, paper)
    coid = client_order_id("SPY", "t1", "BUY", 10, "paper")
    # The broker got the order but we died before recording the answer.
    ex.ledger.write_intent(coid, "paper", "SPY", "BUY", 10, "t1", 100.0)
    await paper.place(OrderRequest(coid, "SPY", "BUY", 10, 100.0))
    restarted = QuantExecutor(store, paper)
    out = await restarted.on_signal(sig("t1"), "SPY", 100.0)
    assert out.status == "filled"
    assert len(paper.placed) == 1  # asked the broker, did not place again
    assert restarted.ledger.position("SPY", "paper") == (10, 100.0)
    # And when the broker never received it, it is placed exactly once.
    coid2 = client_order_id("QQQ", "t1", "BUY", 10, "paper")
    restarted.ledger.write_intent(coid2, "paper", "QQQ", "BUY", 10, "t1", 100.0)
    fresh = PaperBroker()
    out2 = await QuantExecutor(store, fresh).on_signal(sig("t1"), "QQQ", 100.0)
    assert out2.status == "filled" and len(fresh.placed) == 1
    assert (await QuantExecutor(store, fresh).on_signal(sig("t1"), "QQQ", 100.0)).status in {
        "duplicate",
        "skipped",
    }
    assert len(fresh.placed) == 1


async def test_price_deviation_blocks_and_three_failures_trip_the_breaker(store: Store) -> None:
    paper = PaperBroker()
    ex = QuantExecutor(store, paper)
    out = await ex.on_signal(sig("t1"), "SPY", 102.01)  # 2.01% away
    assert out.status == "blocked" and "deviation" in out.reason
    assert (await ex.on_signal(sig("t2"), "SPY", 101.99)).status == "filled"  # within 2%
    assert ex.breaker()["failures"] == 0  # a success resets the count
    for t in ("t3", "t4", "t5"):
        assert (await ex.on_signal(sig(t, qty=20), "SPY", 90.0)).status == "blocked"
    assert ex.breaker()["open"] is True
    assert (await ex.on_signal(sig("t6", qty=20), "SPY", 100.0)).reason.startswith(
        "circuit breaker open"
    )
    assert len(paper.placed) == 1
    assert ("quant_breaker_open", "denied") in [(e[0], e[1]) for e in events(store)]
    ex.reset_breaker()
    assert (await ex.on_signal(sig("t7", qty=20), "SPY", 100.0)).status == "filled"


async def test_broker_failures_trip_the_breaker(store: Store) -> None:
    broker = FlakyBroker(fail=3)
    ex = QuantExecutor(store, broker)
    for t in ("t1", "t2", "t3"):
        out = await ex.on_signal(sig(t), "SPY", 100.0)
        assert out.status == "rejected" and "gateway down" in out.reason
    assert ex.breaker()["open"] is True
    assert (await ex.on_signal(sig("t4"), "SPY", 100.0)).status == "blocked"
    results = [e for e in events(store) if e[0] == "quant_order_result"]
    assert [e[1] for e in results] == ["error"] * 3


async def test_daily_order_limit(store: Store) -> None:
    ex = QuantExecutor(store, PaperBroker(), limits=Limits(max_daily_orders=2))
    assert (await ex.on_signal(sig("t1", qty=1), "SPY", 100.0)).status == "filled"
    assert (await ex.on_signal(sig("t2", qty=2), "SPY", 100.0)).status == "filled"
    out = await ex.on_signal(sig("t3", qty=3), "SPY", 100.0)
    assert out.status == "blocked" and "order limit" in out.reason
    tomorrow = QuantExecutor(
        store, PaperBroker(), limits=Limits(max_daily_orders=2), today=lambda: "2999-01-01"
    )
    assert (await tomorrow.on_signal(sig("t3", qty=3), "SPY", 100.0)).status == "filled"


async def test_daily_loss_limit_counts_the_open_position(store: Store) -> None:
    QuantStateStore(store).update(portfolio=10_000.0)
    ex = QuantExecutor(
        store, PaperBroker(), limits=Limits(daily_loss_limit=0.02, max_deviation=0.5)
    )
    assert (await ex.on_signal(sig("t1", qty=100, price=100.0), "SPY", 100.0)).status == "filled"
    # 100 shares down 2.5 = -250 > 2% of 10,000: no more orders today.
    out = await ex.on_signal(sig("t2", qty=150, price=97.5), "SPY", 97.5)
    assert out.status == "blocked" and "loss limit" in out.reason


async def test_live_needs_the_owner_code_in_time(store: Store) -> None:
    state = QuantStateStore(store)
    paper, live = PaperBroker(), PaperBroker()
    ex = QuantExecutor(store, paper, live)
    with pytest.raises(ValueError, match="live"):
        state.update(mode="live")
    assert state.settings().mode == "paper"
    code = state.start_live_confirmation(now=1000.0)
    assert not state.confirm_live("000000" if code != "000000" else "111111", now=1001.0)
    assert not state.confirm_live(code, now=1002.0)  # the code was consumed by the wrong try
    code = state.start_live_confirmation(now=2000.0)
    assert not state.confirm_live(code, now=2000.0 + 121)  # expired
    assert state.settings().mode == "paper"
    await ex.on_signal(sig("t1"), "SPY", 100.0)
    assert len(paper.placed) == 1 and not live.placed
    code = state.start_live_confirmation(now=3000.0)
    assert state.confirm_live(code, now=3030.0)
    assert state.settings().mode == "live"
    out = await ex.on_signal(sig("t2", qty=3), "SPY", 100.0)
    assert out.status == "filled" and len(live.placed) == 1  # paper position does not carry
    assert ex.ledger.position("SPY", "live") == (3, 100.0)
    state.update(mode="paper")
    assert state.settings().mode == "paper"


async def test_live_mode_without_a_live_broker_is_blocked(store: Store) -> None:
    state = QuantStateStore(store)
    assert state.confirm_live(state.start_live_confirmation())
    out = await QuantExecutor(store, PaperBroker(), None).on_signal(sig("t1"), "SPY", 100.0)
    assert out.status == "blocked" and "no live broker" in out.reason
