"""The quant feature's settings and latest signal, kept in memory.db (no numpy here: the
chat commands and the prompt read this module on every owner message)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

from omega.memory.audit import AuditEntry
from omega.memory.db import utc_now
from omega.memory.store import Store

Mode = Literal["paper", "live"]
LIVE_CONFIRM_SECONDS = 120.0
DEFAULT_SYMBOL = "SPY"
DEFAULT_PORTFOLIO = 100_000.0
SIGNAL_MAX_AGE_SECONDS = 15 * 60


@dataclass(frozen=True)
class QuantSettings:
    """What the owner chose with /quant."""

    enabled: bool = False
    symbol: str = DEFAULT_SYMBOL
    portfolio: float = DEFAULT_PORTFOLIO
    mode: Mode = "paper"


class QuantStateStore:
    """Repository over the quant_settings table."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _get(self, key: str) -> Any:
        rows = self.store.query("SELECT value FROM quant_settings WHERE key = ?", (key,))
        return json.loads(rows[0]["value"]) if rows else None

    def _put(self, key: str, value: object) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO quant_settings (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
                "updated_at = excluded.updated_at",
                (key, json.dumps(value, allow_nan=False), utc_now()),
            )

    def _delete(self, key: str) -> None:
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM quant_settings WHERE key = ?", (key,))

    def settings(self) -> QuantSettings:
        """The current settings (defaults for anything never set)."""
        raw = self._get("settings") or {}
        base = asdict(QuantSettings())
        base.update({k: v for k, v in raw.items() if k in base})
        mode: Mode = "live" if base["mode"] == "live" else "paper"
        return QuantSettings(
            enabled=bool(base["enabled"]),
            symbol=str(base["symbol"]),
            portfolio=float(base["portfolio"]),
            mode=mode,
        )

    def update(self, **changes: object) -> QuantSettings:
        """Change some settings; a change of mode is only ever to paper here (going live is
        `confirm_live`'s alone)."""
        if changes.get("mode", "paper") != "paper":
            raise ValueError("live mode is set only by confirm_live")
        current = asdict(self.settings())
        current.update(changes)
        self._put("settings", current)
        return self.settings()

    # ---- going live: a code the owner must send back in time ----------------------------

    def start_live_confirmation(self, now: float | None = None) -> str:
        """A fresh one-time code; only its hash and expiry are kept."""
        code = f"{secrets.randbelow(10**6):06d}"
        expires = (now if now is not None else time.time()) + LIVE_CONFIRM_SECONDS
        digest = hashlib.sha256(code.encode()).hexdigest()
        self._put("live_pending", {"sha256": digest, "expires": expires})
        return code

    def confirm_live(self, code: str, now: float | None = None) -> bool:
        """Switch to live if `code` matches the pending one and has not expired. The pending
        code is consumed either way (one attempt per code)."""
        pending = self._get("live_pending")
        self._delete("live_pending")
        if not pending:
            return False
        moment = now if now is not None else time.time()
        digest = hashlib.sha256(code.strip().encode()).hexdigest()
        if moment > float(pending["expires"]) or not hmac.compare_digest(
            digest, str(pending["sha256"])
        ):
            return False
        current = asdict(self.settings())
        current["mode"] = "live"
        self._put("settings", current)
        return True

    # ---- the latest signal and the engine's state ---------------------------------------

    def save_signal(self, symbol: str, signal: dict[str, Any], advisory: str) -> None:
        """Keep the latest signal (for /quant status and the owner's context)."""
        self._put(
            "latest_signal",
            {"symbol": symbol, "at": time.time(), "signal": signal, "advisory": advisory},
        )

    def latest_signal(self) -> dict[str, Any] | None:
        """The latest signal record, if any."""
        value = self._get("latest_signal")
        return value if isinstance(value, dict) else None

    def advisory(self, now: float | None = None) -> str:
        """The advisory line for the owner's context: only while quant is enabled and the
        signal is recent."""
        if not self.settings().enabled:
            return ""
        latest = self.latest_signal()
        if not latest:
            return ""
        moment = now if now is not None else time.time()
        if moment - float(latest.get("at", 0)) > SIGNAL_MAX_AGE_SECONDS:
            return ""
        return f"[{latest.get('symbol', '')}] {latest.get('advisory', '')}"

    # ---- the feed's connection, as the running feed last reported it ----------------------

    def save_feed(self, record: dict[str, Any]) -> None:
        """The feed's state (connected or not, why, the last bar), stamped with the time now:
        `omega status` and /quant status read it from another process or task."""
        self._put("feed", {**record, "updated_at": time.time()})

    def feed(self) -> dict[str, Any] | None:
        """The feed's last report, if it ever ran."""
        value = self._get("feed")
        return value if isinstance(value, dict) else None

    def save_engine_state(self, symbol: str, state: dict[str, Any]) -> None:
        """The engine's state, so a restart continues where it was."""
        self._put("engine_state", {"symbol": symbol, "state": state})

    def engine_state(self, symbol: str) -> dict[str, Any] | None:
        """The saved engine state for `symbol` (None for another symbol or none saved)."""
        value = self._get("engine_state")
        if isinstance(value, dict) and value.get("symbol") == symbol:
            state = value.get("state")
            return state if isinstance(state, dict) else None
        return None


def audit_quant(store: Store, event: str, detail: dict[str, Any], status: str = "ok") -> None:
    """One audit row for the quant feature (channel "quant")."""
    store.audit(
        AuditEntry(
            channel="quant",
            sender_id="executor" if event.startswith("quant_order") else "owner",
            status="error" if status == "error" else ("denied" if status == "denied" else "ok"),
            detail=json.dumps(detail, sort_keys=True, default=str),
            event=event,
        )
    )
