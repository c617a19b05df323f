"""`/quant ...`: the owner's chat command for the quant feature (no numpy imported here)."""

from __future__ import annotations

import math
import re

from omega.config.quant import QuantSection
from omega.memory.store import Store
from omega.owner import OWNER
from omega.quant.broker import PaperBroker
from omega.quant.executor import Limits, QuantExecutor
from omega.quant.feedstatus import feed_line
from omega.quant.service import feed_unavailable
from omega.quant.settings import LIVE_CONFIRM_SECONDS, QuantStateStore, audit_quant

USAGE = (
    "Usage: /quant enable | disable | symbol <SYMBOL> | portfolio <amount> | paper | live | status"
)
_SYMBOL = re.compile(r"^[A-Z][A-Z0-9.\-]{0,11}$")
DISCLAIMER = "Signals are advisory, not financial advice."


def quant_command(store: Store, args: str, channel: str, config: QuantSection | None = None) -> str:
    """Run `/quant <args>` for the owner (the caller has checked the role). `channel` is the
    message's channel: live mode is never switched on by Omega's own internal messages.
    `config` gives the limits shown by status (the defaults when None)."""
    state = QuantStateStore(store)
    words = args.split()
    verb = words[0].lower() if words else "status"
    rest = words[1:]
    if verb == "status":
        return status_text(store, config)
    if verb == "enable":
        settings = state.update(enabled=True)
        QuantExecutor(store, PaperBroker()).reset_breaker()
        audit_quant(store, "quant_settings", {"enabled": True})
        why = feed_unavailable()
        feed = (
            f"but the feed cannot run here: {why}"
            if why
            else "`omega start`, while it runs, connects to IB Gateway/TWS within a few seconds "
            "(no config.toml change needed; /quant status shows the connection)"
        )
        return (
            f"Quant enabled for {settings.symbol} ({settings.mode} mode); {feed}. "
            f"The circuit breaker was reset. {DISCLAIMER}"
        )
    if verb == "disable":
        state.update(enabled=False)
        audit_quant(store, "quant_settings", {"enabled": False})
        return "Quant disabled: no feed, no signals in context, no orders."
    if verb == "symbol":
        if len(rest) != 1 or not _SYMBOL.match(rest[0].upper()):
            return "Usage: /quant symbol <SYMBOL> (letters, digits, '.' or '-', e.g. AAPL)"
        settings = state.update(symbol=rest[0].upper())
        audit_quant(store, "quant_settings", {"symbol": settings.symbol})
        return f"Quant symbol: {settings.symbol}."
    if verb == "portfolio":
        try:
            amount = float(rest[0].replace(",", "").replace("_", "")) if len(rest) == 1 else -1.0
        except ValueError:
            amount = -1.0
        if not (math.isfinite(amount) and amount > 0):
            return "Usage: /quant portfolio <amount> (a positive number, e.g. 25000)"
        state.update(portfolio=amount)
        audit_quant(store, "quant_settings", {"portfolio": amount})
        return f"Quant portfolio value: {amount:,.2f}."
    if verb == "paper":
        state.update(mode="paper")
        audit_quant(store, "quant_settings", {"mode": "paper"})
        return (
            "Quant executor in paper mode: orders are simulated, nothing reaches a broker; "
            "the live order connection (if open) closes before the next bar's order."
        )
    if verb == "live":
        if channel == OWNER:  # Omega's own work (tasks, self-checks) never goes live
            audit_quant(store, "quant_live_refused", {"reason": "internal message"}, "denied")
            return "Live mode can only be confirmed by the owner in a chat."
        if rest[:1] == ["confirm"] and len(rest) == 2:
            if state.confirm_live(rest[1]):
                audit_quant(store, "quant_live_confirmed", {"mode": "live"})
                return (
                    "LIVE mode on: the running feed opens its order connection to IB and the "
                    "executor places real limit orders, within its limits (2% deviation and "
                    "3-failure circuit breaker, daily loss and order limits). /quant paper "
                    "switches back; /quant status shows the broker in use."
                )
            audit_quant(store, "quant_live_refused", {"reason": "wrong or expired code"}, "denied")
            return "That code is wrong or expired; still in paper mode. Send /quant live again."
        if rest:
            return USAGE
        code = state.start_live_confirmation()
        audit_quant(store, "quant_live_requested", {"expires_in": LIVE_CONFIRM_SECONDS})
        return (
            "Live mode places REAL orders with real money through your IB account. "
            f"To confirm, send within {int(LIVE_CONFIRM_SECONDS)} seconds:\n"
            f"/quant live confirm {code}"
        )
    return USAGE


def status_text(store: Store, config: QuantSection | None = None) -> str:
    """Settings, the feed's connection and last bar, the broker in use, breaker, today's
    orders against the limits, the position and the latest signal."""
    state = QuantStateStore(store)
    s = state.settings()
    cfg = config or QuantSection()
    limits = Limits(max_daily_orders=cfg.max_daily_orders, daily_loss_limit=cfg.daily_loss_limit)
    executor = QuantExecutor(store, PaperBroker(), limits=limits)
    breaker = executor.breaker()
    held, avg = executor.ledger.position(s.symbol, s.mode)
    shut = f"OPEN ({breaker.get('reason')})" if breaker.get("open") else "closed"
    record = state._get("broker")
    broker = record if isinstance(record, dict) else {}
    if s.mode == "paper":
        active = "paper (simulated in-process; no order connection to IB)"
        if broker.get("live_connected"):
            active += "; the live order connection closes before the next order"
    elif broker.get("live_connected"):
        active = (
            f"LIVE: IB order connection {cfg.host}:{cfg.port} client {cfg.order_client_id} "
            "connected; real limit orders"
        )
    else:
        why = broker.get("error") or "opens when the running feed handles its next bar"
        active = f"LIVE, order connection to IB not open ({why}); no order can be placed"
    realized = store.query(
        "SELECT COALESCE(SUM(realized_pnl), 0) AS p FROM quant_orders WHERE day = ? AND mode = ?",
        (executor.today(), s.mode),
    )
    lines = [
        f"Quant: {'enabled' if s.enabled else 'disabled'}, symbol {s.symbol}, "
        f"portfolio {s.portfolio:,.2f}, mode {s.mode.upper()}",
        f"Feed: {feed_line(store)}",
        f"Broker: {active}",
        f"Breaker: {shut}, consecutive failures {breaker.get('failures', 0)}",
        f"Orders today ({s.mode}): {executor.ledger.orders_today(s.mode)} of at most "
        f"{limits.max_daily_orders}; realised P&L {float(realized[0]['p']):,.2f}, loss limit "
        f"{limits.daily_loss_limit:.1%} of the portfolio "
        f"({limits.daily_loss_limit * s.portfolio:,.2f}); position {held}"
        + (f" @ {avg:.4f}" if held else ""),
    ]
    latest = state.latest_signal()
    if latest:
        lines.append(f"Latest [{latest.get('symbol')}]: {latest.get('advisory')}")
    else:
        lines.append("No signal yet.")
    lines.append(DISCLAIMER)
    return "\n".join(lines)
