"""The quant order ledger: the rows of `quant_orders` (every intent, written before the broker
is called, and its result) and `quant_positions` (what each mode holds), and the figures the
executor's limits read from them (orders today, today's P&L).

Only rows: which order to place, and whether, is the executor's (quant/executor.py), which
calls these in one sequence per signal.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from omega.memory.db import utc_now
from omega.memory.store import Store
from omega.quant.broker import BrokerResult, Side
from omega.quant.settings import Mode, audit_quant


@dataclass(frozen=True)
class Outcome:
    """What the executor did with one signal."""

    status: Literal[
        "skipped",
        "blocked",
        "filled",
        "partial",
        "cancelled",
        "rejected",
        "failed",
        "duplicate",
        "unresolved",
    ]
    reason: str = ""
    client_order_id: str = ""
    side: Side | None = None
    quantity: int = 0


def client_order_id(symbol: str, signal_time: str, side: Side, quantity: int, mode: Mode) -> str:
    """A deterministic id: the same signal always maps to the same order."""
    key = f"{mode}|{symbol}|{signal_time}|{side}|{quantity}"
    return "omega-" + hashlib.sha256(key.encode()).hexdigest()[:24]


class OrderLedger:
    """Orders and positions in memory.db; `today` names the trading day (UTC by default)."""

    def __init__(self, store: Store, today: Callable[[], str]) -> None:
        self.store = store
        self.today = today

    def position(self, symbol: str, mode: Mode) -> tuple[int, float]:
        """(quantity, average price) held in `mode` (negative quantity: short)."""
        rows = self.store.query(
            "SELECT quantity, avg_price FROM quant_positions WHERE symbol = ? AND mode = ?",
            (symbol, mode),
        )
        return (int(rows[0]["quantity"]), float(rows[0]["avg_price"])) if rows else (0, 0.0)

    def orders_today(self, mode: Mode) -> int:
        """Orders that reached the broker today (blocked ones do not count)."""
        rows = self.store.query(
            "SELECT COUNT(*) AS n FROM quant_orders WHERE day = ? AND mode = ?",
            (self.today(), mode),
        )
        return int(rows[0]["n"])

    def pnl_today(self, symbol: str, mode: Mode, price: float) -> float:
        """Realised P&L of today's fills plus the open position marked at `price`."""
        rows = self.store.query(
            "SELECT COALESCE(SUM(realized_pnl), 0) AS p FROM quant_orders "
            "WHERE day = ? AND mode = ?",
            (self.today(), mode),
        )
        qty, avg = self.position(symbol, mode)
        return float(rows[0]["p"]) + qty * (price - avg)

    def order(self, coid: str) -> dict[str, object] | None:
        """The recorded order with this client order id, if any."""
        rows = self.store.query("SELECT * FROM quant_orders WHERE client_order_id = ?", (coid,))
        return dict(rows[0]) if rows else None

    def write_intent(
        self, coid: str, mode: Mode, symbol: str, side: Side, qty: int, at: str, price: float
    ) -> None:
        """Record (and audit) an order about to be placed, before the broker is called."""
        now = utc_now()
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO quant_orders (client_order_id, created_at, updated_at, day, mode, "
                "symbol, side, quantity, signal_time, signal_price, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'intent')",
                (coid, now, now, self.today(), mode, symbol, side, qty, at, price),
            )
        audit_quant(
            self.store,
            "quant_order_intent",
            {
                "client_order_id": coid,
                "mode": mode,
                "symbol": symbol,
                "side": side,
                "quantity": qty,
                "signal_time": at,
                "signal_price": price,
            },
        )

    def record(
        self, coid: str, mode: Mode, symbol: str, side: Side, qty: int, result: BrokerResult
    ) -> tuple[Outcome, str | None]:
        """Record what the broker said of an order (its fill applied to the position), audited:
        the outcome, and the breaker's failure reason (None: the broker worked)."""
        # The status follows what really executed, whatever the broker called it.
        filled = max(0, min(result.filled_qty, qty))
        status: str = result.status
        if filled >= qty:
            status = "filled"
        elif filled > 0:
            status = "partial"
        elif status in {"filled", "partial"}:
            status = "rejected"  # "filled" with nothing executed is not a fill
        realized = 0.0
        with self.store.transaction() as conn:
            if filled > 0:
                fill = BrokerResult("filled", result.broker_order_id, result.fill_price, filled)
                realized = self._apply_fill(conn, symbol, mode, side, fill)
            conn.execute(
                "UPDATE quant_orders SET status = ?, broker_order_id = ?, fill_price = ?, "
                "filled_qty = ?, realized_pnl = ?, error = ?, updated_at = ? "
                "WHERE client_order_id = ?",
                (
                    status,
                    result.broker_order_id,
                    result.fill_price or None,
                    filled,
                    realized,
                    result.error,
                    utc_now(),
                    coid,
                ),
            )
        ok = filled > 0  # a partial fill is a working broker; the remainder is audited
        audit_quant(
            self.store,
            "quant_order_result",
            {
                "client_order_id": coid,
                "mode": mode,
                "status": status,
                "quantity": qty,
                "broker_order_id": result.broker_order_id,
                "fill_price": result.fill_price,
                "filled_qty": filled,
                "realized_pnl": realized,
                "error": result.error,
            },
            "ok" if ok else "error",
        )
        if ok:
            done = Outcome("filled" if status == "filled" else "partial", result.error, coid, side)
            return replace(done, quantity=filled), None
        failed = Outcome(
            "cancelled" if status == "cancelled" else "rejected", result.error, coid, side, qty
        )
        return failed, result.error or status

    def _apply_fill(
        self, conn: sqlite3.Connection, symbol: str, mode: Mode, side: Side, r: BrokerResult
    ) -> float:
        """Update the position with a fill; returns the realised P&L of the part it closes."""
        qty, avg = self.position(symbol, mode)
        signed = r.filled_qty if side == "BUY" else -r.filled_qty
        realized = 0.0
        if qty == 0 or (qty > 0) == (signed > 0):
            new_qty = qty + signed
            new_avg = (qty * avg + signed * r.fill_price) / new_qty
        else:
            closing = min(abs(qty), abs(signed))
            realized = closing * (r.fill_price - avg) * (1 if qty > 0 else -1)
            new_qty = qty + signed
            new_avg = avg if (new_qty == 0 or (new_qty > 0) == (qty > 0)) else r.fill_price
            if new_qty == 0:
                new_avg = 0.0
        conn.execute(
            "INSERT INTO quant_positions (symbol, mode, quantity, avg_price) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(symbol, mode) DO UPDATE SET quantity = excluded.quantity, "
            "avg_price = excluded.avg_price",
            (symbol, mode, new_qty, new_avg),
        )
        return realized
