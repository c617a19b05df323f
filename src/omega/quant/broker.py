"""The order venue the executor talks to: what it is asked (`OrderRequest`), what it answers
(`BrokerResult`), the `Broker` protocol every venue meets, and `PaperBroker`, the in-process
simulated one. The Interactive Brokers venue is quant/live.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from omega.errors import OmegaError

Side = Literal["BUY", "SELL"]
FINAL = frozenset({"filled", "partial", "cancelled", "rejected", "failed"})


@dataclass(frozen=True)
class OrderRequest:
    """What the broker is asked to do."""

    client_order_id: str
    symbol: str
    side: Side
    quantity: int
    reference_price: float
    signal_price: float = 0.0  # a live broker's limit is set from it (0: use reference_price)


@dataclass(frozen=True)
class BrokerResult:
    """What the broker says happened to an order: `filled` (all of it), `partial` (part
    filled, the rest cancelled), `cancelled` (nothing filled, e.g. a fill timeout) or
    `rejected`. `filled_qty` is what really executed, whatever the status."""

    status: Literal["filled", "partial", "cancelled", "rejected"]
    broker_order_id: str = ""
    fill_price: float = 0.0
    filled_qty: int = 0
    error: str = ""


class OrderUnresolvedError(OmegaError):
    """The order reached the broker but its outcome is unknown (e.g. the connection dropped
    while it was working): the intent stays pending and is looked up again later."""


class Broker(Protocol):
    """An order venue. `place` must be idempotent by client order id; `lookup` says what
    became of an id (None: the broker never received it); `open`/`close` manage its
    connection (no-ops for the paper broker)."""

    name: str

    @property
    def is_open(self) -> bool:
        """Whether its connection is open."""
        ...

    async def open(self) -> None:
        """Open the connection (raise on failure)."""
        ...

    async def close(self) -> None:
        """Close the connection (never raises)."""
        ...

    async def place(self, order: OrderRequest) -> BrokerResult:
        """Place one order (idempotent by client order id)."""
        ...

    async def lookup(self, client_order_id: str) -> BrokerResult | None:
        """The result of an earlier `place`, or None if the broker never received it."""
        ...


class PaperBroker:
    """An in-process simulated venue: fills at the reference price plus slippage."""

    name = "paper"

    def __init__(self, slippage: float = 0.0) -> None:
        self.slippage = slippage
        self.orders: dict[str, BrokerResult] = {}
        self.placed: list[OrderRequest] = []

    @property
    def is_open(self) -> bool:
        """Always: there is no connection."""
        return True

    async def open(self) -> None:
        """Nothing to open."""

    async def close(self) -> None:
        """Nothing to close."""

    async def place(self, order: OrderRequest) -> BrokerResult:
        """Fill immediately (or return the earlier result for a known id)."""
        known = self.orders.get(order.client_order_id)
        if known is not None:
            return known
        self.placed.append(order)
        sign = 1.0 if order.side == "BUY" else -1.0
        result = BrokerResult(
            status="filled",
            broker_order_id=f"paper-{len(self.orders) + 1}",
            fill_price=order.reference_price * (1.0 + sign * self.slippage),
            filled_qty=order.quantity,
        )
        self.orders[order.client_order_id] = result
        return result

    async def lookup(self, client_order_id: str) -> BrokerResult | None:
        """The result for a known id."""
        return self.orders.get(client_order_id)
