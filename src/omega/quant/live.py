"""The live broker: orders to IB Gateway/TWS through ib_async, behind the executor's Broker
protocol.

- Its own IB connection, *not* read-only, with its own client id (the feed's market-data
  connection is read-only); the executor opens it only once the owner confirmed live mode and
  closes it on /quant paper (see `QuantExecutor.sync_mode`). Paper mode never opens it.
- Limit orders only (DAY, regular hours): a BUY at the signal's price plus a small slippage
  (rounded down to the tick), a SELL at the signal's price minus it (rounded up), so the
  executor's 2% deviation breaker bounds the real price paid.
- Every order carries the executor's deterministic client order id in `orderRef`; `lookup`
  finds an order by it among the open orders (all clients), today's executions and the
  completed orders, so a restart after a crash settles an order instead of placing it again.
- A fill timeout: an order not done within `fill_timeout` seconds is cancelled; what filled
  before the cancel is reported as a partial fill (`filled_qty` is always what executed).
- IB's rejections (an error on the order: the Trade ends Cancelled/Inactive with a log entry)
  are `rejected` results with IB's message; the executor counts them toward the breaker.
- A connection lost while an order is working raises `OrderUnresolvedError`: the intent stays
  pending and is looked up on the next signal.

Everything here is tested against a fake `ib_async.IB` (real ib_async Trade/Order/Fill
objects, a scripted gateway) in tests/unit/test_quant_live.py; never against a real account.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

from omega.quant.broker import BrokerResult, OrderRequest, OrderUnresolvedError
from omega.quant.ib import connect_ib, load_ib_async

REJECTED_STATES = frozenset({"Cancelled", "ApiCancelled", "Inactive"})


def limit_price(side: str, price: float, slippage: float) -> float:
    """The limit for `side` at `price` ± `slippage` (a fraction), on the tick (0.01 from $1,
    0.0001 below), rounded toward the signal's price so the slippage is never exceeded."""
    tick = 0.01 if price >= 1.0 else 0.0001
    if side == "BUY":
        raw = price * (1.0 + slippage)
        ticks = math.floor(raw / tick + 1e-9)
    else:
        raw = price * (1.0 - slippage)
        ticks = math.ceil(raw / tick - 1e-9)
    return round(ticks * tick, 4)


def _fills_of(trade: Any) -> tuple[int, float]:
    """(quantity, average price) executed for a Trade: from its fills, else its status."""
    fills = list(getattr(trade, "fills", []) or [])
    shares = sum(float(f.execution.shares) for f in fills)
    if shares > 0:
        value = sum(float(f.execution.shares) * float(f.execution.price) for f in fills)
        return round(shares), value / shares
    status = trade.orderStatus
    return round(float(status.filled or 0)), float(status.avgFillPrice or 0.0)


def _last_error(trade: Any) -> str:
    """IB's last message on a Trade (its log), if any."""
    for entry in reversed(list(getattr(trade, "log", []) or [])):
        if getattr(entry, "message", "") and getattr(entry, "errorCode", 0):
            return f"IB {entry.errorCode}: {entry.message}"
    for entry in reversed(list(getattr(trade, "log", []) or [])):
        if getattr(entry, "message", ""):
            return str(entry.message)
    return ""


class IbLiveBroker:
    """The Broker protocol over an `ib_async.IB` order connection."""

    name = "ib-live"

    def __init__(
        self,
        host: str,
        port: int,
        client_id: int,
        exchange: str = "SMART",
        currency: str = "USD",
        slippage: float = 0.001,
        fill_timeout: float = 30.0,
        cancel_timeout: float = 5.0,
        poll: float = 0.25,
        ib_factory: Callable[[], Any] | None = None,
    ) -> None:
        ib_async = load_ib_async("live orders")
        self._lib: Any = ib_async
        self._factory: Callable[[], Any] = ib_factory or ib_async.IB
        self._ib: Any = None
        self.host, self.port, self.client_id = host, port, client_id
        self.exchange, self.currency = exchange, currency
        self.slippage, self.fill_timeout = slippage, fill_timeout
        self.cancel_timeout, self.poll = cancel_timeout, poll
        self.connections = 0

    # ---- the connection ---------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        """Whether the order connection is up."""
        return self._ib is not None and bool(self._ib.isConnected())

    async def open(self) -> None:
        """Connect for orders (not read-only); raises on failure."""
        if self.is_open:
            return
        await self.close()
        ib = self._factory()
        await connect_ib(ib, self.host, self.port, self.client_id, readonly=False)
        self._ib = ib
        self.connections += 1

    async def close(self) -> None:
        """Disconnect (never raises)."""
        ib, self._ib = self._ib, None
        if ib is not None:
            with contextlib.suppress(Exception):
                ib.disconnect()

    async def _connected(self) -> Any:
        await self.open()
        return self._ib

    # ---- orders -----------------------------------------------------------------------------

    async def place(self, order: OrderRequest) -> BrokerResult:
        """Place a DAY limit order tagged with the client order id (or settle the one this
        session already placed under that id), wait for it up to the fill timeout, cancel
        what is left. Errors before the order is sent raise (nothing reached IB)."""
        ib = await self._connected()
        for trade in ib.trades():
            if trade.order.orderRef == order.client_order_id:
                return await self._settle_sent(ib, trade)
        contract = self._lib.Stock(order.symbol, self.exchange, self.currency)
        qualified = await ib.qualifyContractsAsync(contract)
        if not qualified or qualified[0] is None:
            raise ValueError(f"IB does not know the contract {order.symbol}")
        price = order.signal_price or order.reference_price
        ib_order = self._lib.LimitOrder(
            order.side,
            order.quantity,
            limit_price(order.side, price, self.slippage),
            orderRef=order.client_order_id,
            tif="DAY",
            outsideRth=False,
        )
        trade = ib.placeOrder(qualified[0], ib_order)
        return await self._settle_sent(ib, trade)

    async def lookup(self, client_order_id: str) -> BrokerResult | None:
        """What IB knows of the order tagged `client_order_id`: an open one is waited for
        (and cancelled on timeout) as if just placed; otherwise today's executions and the
        completed orders say what happened. None: IB never received it."""
        ib = await self._connected()
        for trade in await ib.reqAllOpenOrdersAsync():
            if trade.order.orderRef == client_order_id and not trade.isDone():
                return await self._settle_sent(ib, trade)
        fills = [
            f for f in await ib.reqExecutionsAsync() if f.execution.orderRef == client_order_id
        ]
        done = [
            t for t in await ib.reqCompletedOrdersAsync(True) if t.order.orderRef == client_order_id
        ]
        if not fills and not done:
            return None
        shares = sum(float(f.execution.shares) for f in fills)
        avg = (
            sum(float(f.execution.shares) * float(f.execution.price) for f in fills) / shares
            if shares
            else 0.0
        )
        qty = round(shares)
        broker_id = str(fills[0].execution.permId if fills else done[0].order.permId)
        if done:
            trade = done[-1]
            total = round(float(trade.order.totalQuantity))
            if not fills:
                qty, avg = _fills_of(trade)
            if qty >= total > 0:
                return BrokerResult("filled", broker_id, avg, qty)
            status = str(trade.orderStatus.status)
            error = _last_error(trade) or f"IB status {status}"
            return BrokerResult("partial" if qty else "rejected", broker_id, avg, qty, error)
        return BrokerResult("filled", broker_id, avg, qty)

    async def _settle_sent(self, ib: Any, trade: Any) -> BrokerResult:
        """`_settle` for an order IB has: any failure leaves its outcome unknown."""
        try:
            return await self._settle(ib, trade)
        except OrderUnresolvedError:
            raise
        except Exception as exc:
            raise OrderUnresolvedError(f"{type(exc).__name__}: {exc}") from exc

    async def _settle(self, ib: Any, trade: Any) -> BrokerResult:
        """Wait for `trade` to be done; on timeout cancel it and report what filled."""
        deadline = time.monotonic() + self.fill_timeout
        while not trade.isDone() and time.monotonic() < deadline:
            if not ib.isConnected():
                raise OrderUnresolvedError("connection to IB lost while the order was working")
            await asyncio.sleep(self.poll)
        broker_id = str(trade.order.permId or trade.order.orderId)
        if trade.isDone():
            qty, avg = _fills_of(trade)
            status = str(trade.orderStatus.status)
            if status == "Filled" or qty >= round(float(trade.order.totalQuantity)):
                return BrokerResult("filled", broker_id, avg, qty)
            error = _last_error(trade) or f"IB status {status}"
            return BrokerResult("partial" if qty else "rejected", broker_id, avg, qty, error)
        # Timed out: cancel the rest, then report honestly what executed.
        ib.cancelOrder(trade.order)
        cancel_deadline = time.monotonic() + self.cancel_timeout
        # Polled like the fill wait (which also watches the connection): IB's status
        # messages update the Trade in place.
        while not trade.isDone() and time.monotonic() < cancel_deadline:  # noqa: ASYNC110
            await asyncio.sleep(self.poll)
        qty, avg = _fills_of(trade)
        total = round(float(trade.order.totalQuantity))
        if qty >= total:
            return BrokerResult("filled", broker_id, avg, qty)
        note = f"not filled within {self.fill_timeout:g}s: cancelled"
        if qty:
            note = f"{qty} of {total} filled within {self.fill_timeout:g}s; the rest cancelled"
        if not trade.isDone():
            note += f" (cancel not confirmed within {self.cancel_timeout:g}s: check IB)"
        return BrokerResult("partial" if qty else "cancelled", broker_id, avg, qty, note)
