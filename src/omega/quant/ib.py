"""The Interactive Brokers connection, set up one way for both of its users: the feed's
market-data connection (read-only) and the live broker's order connection (not read-only),
each with its own client id. Everything here goes through `ib_async` (the `quant` extra)."""

from __future__ import annotations

from typing import Any

CONNECT_TIMEOUT_SECS = 10


def load_ib_async(needed_for: str) -> Any:
    """The `ib_async` module; when the extra is not installed, a RuntimeError that says what
    needs it and how to install it."""
    try:
        import ib_async
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise RuntimeError(
            f'ib_async is needed for {needed_for}: pip install "omega-agent[quant]"'
        ) from exc
    return ib_async


async def connect_ib(ib: Any, host: str, port: int, client_id: int, *, readonly: bool) -> None:
    """Connect `ib` (an `ib_async.IB`) to IB Gateway/TWS at host:port as `client_id`; raises
    when it cannot within CONNECT_TIMEOUT_SECS."""
    await ib.connectAsync(
        host, port, clientId=client_id, timeout=CONNECT_TIMEOUT_SECS, readonly=readonly
    )
