"""The live broker against a fake IB at the library boundary: the fake stands in for
`ib_async.IB` (one connection) over a scripted gateway (IB's side, which outlives our
restarts), and uses ib_async's own Trade, Order, OrderStatus, Execution and Fill objects.
The tests push order statuses, fills and rejections the way ib_async's wrapper does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omega.memory import Store
from omega.quant.broker import PaperBroker
from omega.quant.engine import Bar
from omega.quant.executor import Limits, QuantExecutor
from omega.quant.feed import QuantFeed
from omega.quant.ledger import client_order_id
from omega.quant.live import IbLiveBroker, limit_price
from omega.quant.settings import QuantStateStore

ib_async = pytest.importorskip("ib_async")


class Crash(BaseException):
    """The process dies here (nothing catches it, like a kill)."""


class Gateway:
    """IB Gateway's side: orders and executions survive our process."""

    def __init__(self) -> None:
        self.trades: list[Any] = []
        self.fills: list[Any] = []
        self.placed: list[tuple[Any, Any]] = []
        self.cancels: list[str] = []
        self.connects: list[dict[str, Any]] = []
        self.on_place: Callable[[Any], None] | None = None
        self.crash: str = ""  # "before" or "after" placeOrder reaches IB
        self.next_id = 1

    def fill(self, trade: Any, qty: float, price: float) -> None:
        """An execution, as IB reports it (execDetails + orderStatus)."""
        execution = ib_async.Execution(
            execId=f"e{len(self.fills) + 1}",
            time=datetime.now(UTC),
            side="BOT" if trade.order.action == "BUY" else "SLD",
            shares=qty,
            price=price,
            permId=trade.order.permId,
            orderId=trade.order.orderId,
            orderRef=trade.order.orderRef,
        )
        fill = ib_async.Fill(trade.contract, execution, ib_async.CommissionReport(), execution.time)
        self.fills.append(fill)
        trade.fills.append(fill)
        status = trade.orderStatus
        status.filled = sum(f.execution.shares for f in trade.fills)
        status.remaining = trade.order.totalQuantity - status.filled
        status.avgFillPrice = price
        status.status = "Filled" if status.remaining <= 0 else "Submitted"
        trade.statusEvent.emit(trade)

    def reject(self, trade: Any, code: int, message: str) -> None:
        """An order error, as ib_async's wrapper.error records it."""
        trade.orderStatus.status = "Cancelled"
        trade.log.append(ib_async.TradeLogEntry(datetime.now(UTC), "Cancelled", message, code))
        trade.statusEvent.emit(trade)


class FakeIB:
    """One connection, with the ib_async.IB methods the live broker uses."""

    def __init__(self, gw: Gateway) -> None:
        self.gw = gw
        self.connected = False
        self.mine: list[Any] = []

    async def connectAsync(self, host: str, port: int, **kw: Any) -> None:
        self.gw.connects.append({"host": host, "port": port, **kw})
        self.connected = True

    def isConnected(self) -> bool:
        return self.connected

    def disconnect(self) -> None:
        self.connected = False

    def trades(self) -> list[Any]:
        return list(self.mine)

    async def qualifyContractsAsync(self, *contracts: Any) -> list[Any]:
        for c in contracts:
            c.conId = 756733
        return list(contracts)

    def placeOrder(self, contract: Any, order: Any) -> Any:
        if self.gw.crash == "before":
            self.gw.crash = ""
            raise Crash
        order.orderId, order.permId = self.gw.next_id, 9000 + self.gw.next_id
        self.gw.next_id += 1
        trade = ib_async.Trade(
            contract, order, ib_async.OrderStatus(orderId=order.orderId, status="PendingSubmit")
        )
        self.gw.trades.append(trade)
        self.gw.placed.append((contract, order))
        self.mine.append(trade)
        if self.gw.on_place:
            self.gw.on_place(trade)
        if self.gw.crash == "after":
            self.gw.crash = ""
            raise Crash
        return trade

    def cancelOrder(self, order: Any) -> Any:
        self.gw.cancels.append(order.orderRef)
        for trade in self.gw.trades:
            if trade.order is order and not trade.isDone():
                trade.orderStatus.status = "Cancelled"
                return trade
        return None

    async def reqAllOpenOrdersAsync(self) -> list[Any]:
        return [t for t in self.gw.trades if not t.isDone()]

    async def reqExecutionsAsync(self, exec_filter: Any = None) -> list[Any]:
        return list(self.gw.fills)

    async def reqCompletedOrdersAsync(self, api_only: bool) -> list[Any]:
        return [t for t in self.gw.trades if t.isDone()]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "memory.db")
    yield s
    s.close()


def go_live(store: Store, portfolio: float = 100_000.0) -> None:
    state = QuantStateStore(store)
    state.update(enabled=True, portfolio=portfolio)
    assert state.confirm_live(state.start_live_confirmation())


def broker(gw: Gateway, fill_timeout: float = 1.0) -> IbLiveBroker:
    return IbLiveBroker(
        "127.0.0.1",
        4002,
        18,
        slippage=0.001,
        fill_timeout=fill_timeout,
        cancel_timeout=0.05,
        poll=0.001,
        ib_factory=lambda: FakeIB(gw),
    )


def sig(t: str, direction: str = "Long", qty: int = 10, price: float = 100.0) -> dict[str, Any]:
    return {
        "time": t,
        "price": price,
        "direction": direction,
        "quantity": qty,
        "execution": {"strategy": "Immediate", "slices": 1, "participation": 0.0},
    }


def fill_at_limit(gw: Gateway) -> Callable[[Any], None]:
    return lambda trade: gw.fill(trade, trade.order.totalQuantity, trade.order.lmtPrice)


def audit(store: Store, event: str) -> list[dict[str, Any]]:
    return [json.loads(str(r["detail"])) for r in store.audit_entries(500) if r["event"] == event]


@pytest.mark.no_store
def test_limit_price_is_on_the_tick_and_never_beyond_the_slippage() -> None:
    assert limit_price("BUY", 100.0, 0.001) == 100.1
    assert limit_price("SELL", 100.0, 0.001) == 99.9
    assert limit_price("BUY", 123.457, 0.001) == 123.58  # 123.580457 rounded down
    assert limit_price("SELL", 123.457, 0.001) == 123.34  # 123.333543 rounded up
    assert limit_price("BUY", 0.5, 0.0) == 0.5


async def test_a_confirmed_live_order_is_placed_once_as_a_limit_order_with_order_ref(
    store: Store,
) -> None:
    go_live(store)
    gw = Gateway()
    gw.on_place = fill_at_limit(gw)
    paper = PaperBroker()
    ex = QuantExecutor(store, paper, broker(gw))
    assert await ex.sync_mode() == "live"
    assert [c["readonly"] for c in gw.connects] == [False]  # its own, not read-only
    assert gw.connects[0]["clientId"] == 18
    out = await ex.on_signal(sig("t1"), "SPY", 100.02)
    assert (out.status, out.side, out.quantity) == ("filled", "BUY", 10)
    [(contract, order)] = gw.placed
    assert (contract.symbol, contract.exchange, contract.currency) == ("SPY", "SMART", "USD")
    assert (order.orderType, order.action, order.totalQuantity) == ("LMT", "BUY", 10)
    assert order.lmtPrice == 100.1 and order.tif == "DAY"  # the signal's price + 0.1%
    assert order.orderRef == client_order_id("SPY", "t1", "BUY", 10, "live")
    assert order.orderRef == out.client_order_id
    assert (await ex.on_signal(sig("t1"), "SPY", 100.0)).status in {"duplicate", "skipped"}
    assert len(gw.placed) == 1 and not paper.placed
    [row] = store.query("SELECT * FROM quant_orders")
    assert (row["mode"], row["status"], row["filled_qty"], row["fill_price"]) == (
        "live",
        "filled",
        10,
        100.1,
    )
    assert row["broker_order_id"] == "9001"
    assert ex.ledger.position("SPY", "live") == (10, 100.1)
    assert ex.ledger.position("SPY", "paper") == (0, 0.0)
    sell = await ex.on_signal(sig("t2", "Short", 5, price=101.0), "SPY", 101.0)
    assert (sell.status, sell.side, sell.quantity) == ("filled", "SELL", 15)
    assert gw.placed[1][1].lmtPrice == 100.9  # the signal's price - 0.1%


async def test_crash_after_the_order_reached_ib_restart_finds_it_by_order_ref(
    store: Store,
) -> None:
    go_live(store)
    gw = Gateway()
    gw.crash = "after"  # IB has the order; we die before its answer
    with pytest.raises(Crash):
        await QuantExecutor(store, PaperBroker(), broker(gw)).on_signal(sig("t1"), "SPY", 100.0)
    [row] = store.query("SELECT status FROM quant_orders")
    assert row["status"] == "intent"
    gw.fill(gw.trades[0], 10, 100.05)  # it filled while we were down
    # The restart: a new process, a new connection, the next bar's signal.
    ex = QuantExecutor(store, PaperBroker(), broker(gw))
    out = await ex.on_signal(sig("t2"), "SPY", 100.0)
    assert out.status == "skipped"  # the position is already the target
    assert len(gw.placed) == 1  # found by orderRef, not placed again
    assert ex.ledger.position("SPY", "live") == (10, 100.05)
    [row] = store.query("SELECT status, filled_qty FROM quant_orders")
    assert (row["status"], row["filled_qty"]) == ("filled", 10)


async def test_crash_after_the_order_reached_ib_and_still_working_is_waited_for(
    store: Store,
) -> None:
    go_live(store)
    gw = Gateway()
    gw.crash = "after"
    with pytest.raises(Crash):
        await QuantExecutor(store, PaperBroker(), broker(gw)).on_signal(sig("t1"), "SPY", 100.0)
    loop = asyncio.get_running_loop()
    loop.call_later(0.02, gw.fill, gw.trades[0], 10, 100.1)
    out = await QuantExecutor(store, PaperBroker(), broker(gw)).on_signal(sig("t1"), "SPY", 100.0)
    assert (out.status, out.quantity) == ("filled", 10)
    assert len(gw.placed) == 1 and not gw.cancels


async def test_crash_before_place_order_places_it_exactly_once_after_restart(
    store: Store,
) -> None:
    go_live(store)
    gw = Gateway()
    gw.on_place = fill_at_limit(gw)
    gw.crash = "before"  # the intent is written, IB never got the order
    with pytest.raises(Crash):
        await QuantExecutor(store, PaperBroker(), broker(gw)).on_signal(sig("t1"), "SPY", 100.0)
    assert not gw.placed
    ex = QuantExecutor(store, PaperBroker(), broker(gw))
    out = await ex.on_signal(sig("t2"), "SPY", 100.0)
    assert out.status == "skipped"  # the pending order was placed first: at the target now
    assert len(gw.placed) == 1
    assert gw.placed[0][1].orderRef == client_order_id("SPY", "t1", "BUY", 10, "live")
    assert ex.ledger.position("SPY", "live") == (10, 100.1)
    again = QuantExecutor(store, PaperBroker(), broker(gw))
    assert (await again.on_signal(sig("t1"), "SPY", 100.0)).status in {"duplicate", "skipped"}
    assert len(gw.placed) == 1


async def test_rejected_live_orders_count_toward_the_three_failure_breaker(
    store: Store,
) -> None:
    go_live(store)
    gw = Gateway()
    gw.on_place = lambda trade: gw.reject(trade, 201, "Order rejected - reason: no funds")
    ex = QuantExecutor(store, PaperBroker(), broker(gw))
    for t in ("t1", "t2", "t3"):
        out = await ex.on_signal(sig(t), "SPY", 100.0)
        assert out.status == "rejected" and "IB 201: Order rejected" in out.reason
    assert ex.breaker()["open"] is True
    blocked = await ex.on_signal(sig("t4"), "SPY", 100.0)
    assert blocked.status == "blocked" and "circuit breaker" in blocked.reason
    assert len(gw.placed) == 3
    assert [r["status"] for r in audit(store, "quant_order_result")] == ["rejected"] * 3


async def test_fill_timeout_cancels_and_reports_a_partial_fill_honestly(store: Store) -> None:
    go_live(store)
    gw = Gateway()
    gw.on_place = lambda trade: gw.fill(trade, 4, 100.0)  # 4 of 10, then nothing
    ex = QuantExecutor(store, PaperBroker(), broker(gw, fill_timeout=0.05))
    out = await ex.on_signal(sig("t1"), "SPY", 100.0)
    assert (out.status, out.quantity) == ("partial", 4)
    assert gw.cancels == [out.client_order_id]
    assert ex.ledger.position("SPY", "live") == (4, 100.0)
    [result] = audit(store, "quant_order_result")
    assert (result["status"], result["filled_qty"], result["quantity"]) == ("partial", 4, 10)
    assert "4 of 10 filled" in result["error"] and "cancelled" in result["error"]
    # Nothing filled at all: cancelled, audited, and a failure for the breaker.
    gw.on_place = None
    out = await ex.on_signal(sig("t2", "Short", 3), "SPY", 100.0)
    assert out.status == "cancelled" and "not filled within" in out.reason
    assert gw.cancels[-1] == out.client_order_id
    assert audit(store, "quant_order_result")[0]["status"] == "cancelled"
    assert ex.breaker()["failures"] == 1
    assert ex.ledger.position("SPY", "live") == (4, 100.0)


async def test_daily_order_and_loss_limits_stop_live_orders(store: Store) -> None:
    go_live(store, portfolio=10_000.0)
    gw = Gateway()
    gw.on_place = fill_at_limit(gw)
    ex = QuantExecutor(store, PaperBroker(), broker(gw), limits=Limits(max_daily_orders=1))
    assert (await ex.on_signal(sig("t1", qty=1), "SPY", 100.0)).status == "filled"
    out = await ex.on_signal(sig("t2", qty=2), "SPY", 100.0)
    assert out.status == "blocked" and "order limit" in out.reason
    assert len(gw.placed) == 1
    ex = QuantExecutor(
        store, PaperBroker(), broker(gw), limits=Limits(daily_loss_limit=0.02, max_deviation=0.5)
    )
    assert (await ex.on_signal(sig("t3", qty=100), "SPY", 100.0)).status == "filled"
    assert len(gw.placed) == 2
    # 100 shares bought at 100.10 now at 97.50: -260 beyond 2% of 10,000.
    out = await ex.on_signal(sig("t4", "Short", 50, price=97.5), "SPY", 97.5)
    assert out.status == "blocked" and "loss limit" in out.reason
    assert len(gw.placed) == 2


class FeedIB:
    """The feed's read-only market-data connection, scripted."""

    def __init__(self, bars: list[Bar], each: Callable[[int], None]) -> None:
        self._bars, self._each = bars, each

    async def connect(self) -> None:
        return None

    async def bars(self, symbol: str) -> AsyncIterator[Bar]:
        for i, bar in enumerate(self._bars):
            self._each(i)
            yield bar
        raise ConnectionError("done")

    async def disconnect(self) -> None:
        return None


async def test_paper_mode_never_opens_the_order_connection_and_live_follows_the_owner(
    store: Store,
) -> None:
    from omega.quant.commands import quant_command, status_text

    state = QuantStateStore(store)
    state.update(enabled=True)
    gw = Gateway()
    live = broker(gw)
    ex = QuantExecutor(store, PaperBroker(), live)
    bars = [Bar(str(i), 100.0, 100.0, 100.0, 100.0, 1e7) for i in range(30)]
    stop = asyncio.Event()
    seen: list[tuple[int, bool]] = []

    def each(i: int) -> None:
        seen.append((i, live.is_open))
        if i == 10:
            assert state.confirm_live(state.start_live_confirmation())
        if i == 20:
            quant_command(store, "paper", "terminal")

    async def sleep(seconds: float) -> None:
        stop.set()

    feed = QuantFeed(store, lambda: FeedIB(bars, each), ex, sleep=sleep)
    await asyncio.wait_for(feed.run(stop), timeout=10)
    assert not any(is_open for i, is_open in seen if i <= 10)  # paper: never opened
    assert all(is_open for i, is_open in seen if 11 <= i <= 20)  # opened once confirmed
    assert not any(is_open for i, is_open in seen if i > 20)  # /quant paper closed it
    assert len(gw.connects) == 1 and gw.connects[0]["readonly"] is False
    events = [str(r["event"]) for r in reversed(store.audit_entries(500))]
    assert events.index("quant_live_connected") < events.index("quant_live_closed")
    assert "Broker: paper" in status_text(store)
    # A fresh start in paper mode: the feed ends without ever connecting for orders.
    fresh = Gateway()
    quiet = QuantFeed(
        store,
        lambda: FeedIB(bars, lambda i: None),
        QuantExecutor(store, PaperBroker(), broker(fresh)),
        sleep=sleep,
    )
    stop.clear()
    await asyncio.wait_for(quiet.run(stop), timeout=10)
    assert fresh.connects == []


async def test_status_shows_the_live_broker_and_the_days_limits(store: Store) -> None:
    from omega.config.quant import QuantSection
    from omega.quant.commands import status_text

    go_live(store, portfolio=10_000.0)
    gw = Gateway()
    gw.on_place = fill_at_limit(gw)
    ex = QuantExecutor(store, PaperBroker(), broker(gw))
    text = status_text(store, QuantSection(max_daily_orders=7))
    assert "LIVE, order connection to IB not open" in text
    await ex.sync_mode()
    await ex.on_signal(sig("t1", qty=1), "SPY", 100.0)
    text = status_text(store, QuantSection(max_daily_orders=7))
    assert "LIVE: IB order connection 127.0.0.1:4002 client 18 connected" in text
    assert "Orders today (live): 1 of at most 7" in text
    assert "loss limit 2.0% of the portfolio (200.00)" in text
    await ex.close()
    assert not ex.live or not ex.live.is_open
