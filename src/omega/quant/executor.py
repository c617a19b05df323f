"""The guarded executor: turns signals into orders, paper by default.

Safety, all enforced here in code:
- paper mode unless the owner confirmed live mode (settings.py: `/quant live` then
  `/quant live confirm <code>` within two minutes); the mode is read from memory.db at every
  order, and nothing the model writes can change it;
- a circuit breaker: the market price more than 2% away from the signal's price, or from an
  independent reference price (the feed's: the previous bar's close), blocks the order and
  counts as a failure; 3 consecutive failures (broker errors, rejections, deviations) trip the
  breaker, which stays open until the owner resets it (/quant enable);
- a daily loss limit (realised + unrealised, as a fraction of the portfolio) and a daily
  order count limit;
- every intent is written to memory.db *before* the broker is called, with a deterministic
  client order id; after a crash the executor asks the broker about that id instead of
  placing it again;
- every intent and every result is audited.

The executor targets a position (Long: +quantity, Short: -quantity, Flat: keep) and trades
only the difference, so a signal repeated every bar does not pile up orders; a TWAP plan
trades one slice per bar toward the target.

Every guard above decides here, in one sequence per signal: the breaker, the limits, the intent
written before the call and the reconciliation after a crash. The rows they read and write
(`quant_orders`, `quant_positions`) are quant/ledger.py's; the venues (paper, and what a live
broker must do) are quant/broker.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from omega.memory.store import Store
from omega.quant.broker import Broker, BrokerResult, OrderRequest, OrderUnresolvedError, Side
from omega.quant.ledger import OrderLedger, Outcome, client_order_id
from omega.quant.settings import Mode, QuantStateStore, audit_quant


@dataclass(frozen=True)
class Limits:
    """The executor's hard limits."""

    max_deviation: float = 0.02
    max_consecutive_failures: int = 3
    daily_loss_limit: float = 0.02  # of the portfolio
    max_daily_orders: int = 20


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


class QuantExecutor:
    """Signals in, guarded orders out."""

    def __init__(
        self,
        store: Store,
        paper: Broker,
        live: Broker | None = None,
        limits: Limits | None = None,
        today: Callable[[], str] = _today,
    ) -> None:
        self.store = store
        self.state = QuantStateStore(store)
        self.paper = paper
        self.live = live
        self.limits = limits or Limits()
        self.today = today
        self.ledger = OrderLedger(store, today)

    # ---- breaker ------------------------------------------------------------------------

    def breaker(self) -> dict[str, object]:
        """{"failures": n, "open": bool, "reason": text}."""
        value = self.state._get("breaker")
        return value if isinstance(value, dict) else {"failures": 0, "open": False, "reason": ""}

    def reset_breaker(self) -> None:
        """Close the breaker (the owner's decision)."""
        self.state._put("breaker", {"failures": 0, "open": False, "reason": ""})

    def _failure(self, reason: str) -> None:
        b = self.breaker()
        failures = int(str(b.get("failures", 0))) + 1
        tripped = failures >= self.limits.max_consecutive_failures
        self.state._put(
            "breaker",
            {"failures": failures, "open": bool(b.get("open")) or tripped, "reason": reason},
        )
        if tripped and not b.get("open"):
            audit_quant(
                self.store,
                "quant_breaker_open",
                {"failures": failures, "reason": reason},
                "denied",
            )

    def _success(self) -> None:
        b = self.breaker()
        if b.get("failures"):
            self.state._put("breaker", {**b, "failures": 0})

    # ---- the broker in use ------------------------------------------------------------------

    def active_broker(self, mode: Mode) -> Broker | None:
        """The paper broker in paper mode, the live one (if any) in live mode."""
        return self.paper if mode == "paper" else self.live

    async def sync_mode(self) -> str:
        """Open the live broker's connection when the owner confirmed live mode (and quant
        is enabled); close it otherwise. Paper mode never opens it. Returns the active
        broker's name ("paper", "live" or "none"). Transitions are audited and kept in
        memory.db for /quant status."""
        settings = self.state.settings()
        want_live = settings.mode == "live" and settings.enabled
        live = self.live
        error = ""
        previous = self.state._get("broker")
        if live is not None and want_live and not live.is_open:
            try:
                await live.open()
                audit_quant(self.store, "quant_live_connected", {"broker": live.name})
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                if not (isinstance(previous, dict) and previous.get("error") == error):
                    audit_quant(self.store, "quant_live_connect_error", {"error": error}, "error")
        elif live is not None and not want_live and live.is_open:
            await live.close()
            audit_quant(self.store, "quant_live_closed", {"mode": settings.mode})
        active = "paper" if settings.mode == "paper" else ("live" if live else "none")
        record = {
            "active": active,
            "live_connected": bool(live is not None and live.is_open),
            "live_broker": live.name if live is not None else "",
            "error": error,
        }
        if previous != record:
            self.state._put("broker", record)
        return active

    async def close(self) -> None:
        """Close the live connection, if open (at shutdown)."""
        if self.live is not None and self.live.is_open:
            await self.live.close()
            audit_quant(self.store, "quant_live_closed", {"reason": "shutdown"})
        record = self.state._get("broker")
        if isinstance(record, dict) and record.get("live_connected"):
            self.state._put("broker", {**record, "live_connected": False})

    # ---- the one entry point -------------------------------------------------------------

    async def on_signal(
        self, signal: dict[str, object], symbol: str, market_price: float, reference: float = 0.0
    ) -> Outcome:
        """Decide and (maybe) place one order for `signal` (a QuantSignal.as_dict()) at
        `market_price`, also checked against `reference` (> 0; the feed: the previous close)."""
        settings = self.state.settings()
        mode: Mode = settings.mode
        broker = self.active_broker(mode)
        if broker is None:
            return self._blocked(symbol, mode, "live mode has no live broker configured")
        direction = str(signal.get("direction", "Flat"))
        plan = signal.get("execution")
        strategy = str(plan.get("strategy", "NoTrade")) if isinstance(plan, dict) else "NoTrade"
        slices = int(plan.get("slices", 1)) if isinstance(plan, dict) else 1
        target_abs = int(str(signal.get("quantity", 0)))
        signal_time = str(signal.get("time", ""))
        signal_price = float(str(signal.get("price", 0.0)))

        directional = direction != "Flat" and target_abs > 0 and strategy != "NoTrade"
        before = self._plan(symbol, mode, direction, target_abs, strategy, slices, signal_time)
        # Intents left without a result (a crash, a dropped connection) are settled first:
        # the position must be known before a new order is sized on it.
        settled, unresolved = await self._reconcile(broker, mode, symbol, market_price)
        if directional and before[2] in settled:  # this very signal's order was pending
            return settled[before[2]]
        if unresolved:
            return self._blocked(
                symbol, mode, f"an earlier order's outcome is still unknown: {unresolved}"
            )
        if direction == "Flat" or target_abs <= 0:
            return Outcome("skipped", "no directional signal")
        if strategy == "NoTrade":
            return Outcome("skipped", "execution plan: NoTrade")
        side, quantity, coid = self._plan(
            symbol, mode, direction, target_abs, strategy, slices, signal_time
        )
        if quantity == 0:
            return Outcome("skipped", "already at the target position")

        existing = self.ledger.order(coid)
        if existing is not None:
            return Outcome("duplicate", "this signal's order was already handled", coid, side)

        b = self.breaker()
        if b.get("open"):
            return self._blocked(symbol, mode, f"circuit breaker open: {b.get('reason')}")
        if signal_price <= 0 or not math.isfinite(market_price) or market_price <= 0:
            return self._blocked(symbol, mode, "no valid price")
        for price, what in ((signal_price, "the signal"), (reference, "the reference price")):
            deviation = abs(market_price - price) / price if price > 0 else 0.0
            if deviation > self.limits.max_deviation:
                reason = f"price deviation {deviation:.2%} from {what}"
                self._failure(reason)
                return self._blocked(symbol, mode, f"{reason} > {self.limits.max_deviation:.0%}")
        if self.ledger.orders_today(mode) >= self.limits.max_daily_orders:
            return self._blocked(symbol, mode, "daily order limit reached")
        pnl = self.ledger.pnl_today(symbol, mode, market_price)
        if pnl <= -self.limits.daily_loss_limit * settings.portfolio:
            return self._blocked(symbol, mode, f"daily loss limit reached ({pnl:.2f})")
        self.ledger.write_intent(coid, mode, symbol, side, quantity, signal_time, signal_price)
        request = OrderRequest(coid, symbol, side, quantity, market_price, signal_price)
        return await self._place_and_record(broker, request, mode)

    def _plan(
        self,
        symbol: str,
        mode: Mode,
        direction: str,
        target_abs: int,
        strategy: str,
        slices: int,
        signal_time: str,
    ) -> tuple[Side, int, str]:
        """(side, quantity, client order id) toward the target from the recorded position."""
        held, _ = self.ledger.position(symbol, mode)
        target = target_abs if direction == "Long" else -target_abs
        delta = target - held
        quantity = abs(delta)
        if strategy == "TWAP" and slices > 1 and quantity:
            quantity = max(1, math.ceil(quantity / slices))
        side: Side = "BUY" if delta > 0 else "SELL"
        return side, quantity, client_order_id(symbol, signal_time, side, quantity, mode)

    async def _reconcile(
        self, broker: Broker, mode: Mode, symbol: str, market_price: float
    ) -> tuple[dict[str, Outcome], str]:
        """Settle this mode's pending intents: ask the broker about each (by client order
        id); record what it says; place one it never received (only today's, for the symbol
        being traded, within the deviation limit), exactly once. Returns the outcomes by id
        and the id of one still unresolved ("" if none)."""
        rows = self.store.query(
            "SELECT * FROM quant_orders WHERE status = 'intent' AND mode = ? ORDER BY created_at",
            (mode,),
        )
        outcomes: dict[str, Outcome] = {}
        for row in rows:
            coid = str(row["client_order_id"])
            side: Side = "BUY" if row["side"] == "BUY" else "SELL"
            qty, sym = int(row["quantity"]), str(row["symbol"])
            signal_price = float(row["signal_price"])
            try:
                found = await broker.lookup(coid)
            except Exception as exc:
                audit_quant(
                    self.store,
                    "quant_order_unresolved",
                    {"client_order_id": coid, "error": f"{type(exc).__name__}: {exc}"},
                    "error",
                )
                return outcomes, coid
            if found is not None:
                outcomes[coid] = self._record(coid, mode, sym, side, qty, found)
                continue
            # The broker never received it: we died between the intent and the call.
            if str(row["day"]) != self.today():
                outcomes[coid] = self._record(
                    coid,
                    mode,
                    sym,
                    side,
                    qty,
                    BrokerResult("rejected", error="never reached the broker; stale, not placed"),
                )
                continue
            if sym != symbol:
                return outcomes, coid  # no current price for it: wait for its symbol
            deviation = abs(market_price - signal_price) / signal_price if signal_price else 1.0
            if deviation > self.limits.max_deviation:
                outcomes[coid] = self._record(
                    coid,
                    mode,
                    sym,
                    side,
                    qty,
                    BrokerResult("rejected", error=f"price moved {deviation:.2%}; not placed"),
                )
                continue
            request = OrderRequest(coid, sym, side, qty, market_price, signal_price)
            outcomes[coid] = await self._place_and_record(broker, request, mode)
            if outcomes[coid].status == "unresolved":
                return outcomes, coid
        return outcomes, ""

    async def _place_and_record(self, broker: Broker, order: OrderRequest, mode: Mode) -> Outcome:
        try:
            result = await broker.place(order)
        except OrderUnresolvedError as exc:  # it may be working at the broker: keep the intent
            self._failure(f"order outcome unknown: {exc}")
            audit_quant(
                self.store,
                "quant_order_unresolved",
                {"client_order_id": order.client_order_id, "error": str(exc)},
                "error",
            )
            return Outcome(
                "unresolved", str(exc), order.client_order_id, order.side, order.quantity
            )
        except Exception as exc:  # the broker failing is a result, audited, not a crash
            result = BrokerResult(status="rejected", error=f"{type(exc).__name__}: {exc}")
        return self._record(
            order.client_order_id, mode, order.symbol, order.side, order.quantity, result
        )

    def _record(
        self, coid: str, mode: Mode, symbol: str, side: Side, qty: int, result: BrokerResult
    ) -> Outcome:
        """The ledger records the broker's answer; the breaker counts it."""
        outcome, failure = self.ledger.record(coid, mode, symbol, side, qty, result)
        if failure is None:
            self._success()
        else:
            self._failure(failure)
        return outcome

    def _blocked(self, symbol: str, mode: Mode, reason: str) -> Outcome:
        audit_quant(
            self.store,
            "quant_order_blocked",
            {"symbol": symbol, "mode": mode, "reason": reason},
            "denied",
        )
        return Outcome("blocked", reason)
