"""Starting the quant feed from `omega start` when `[quant] enabled`."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from omega.config import QuantSection
from omega.memory.store import Store

if TYPE_CHECKING:
    from omega.quant.feed import QuantFeed


def feed_unavailable() -> str:
    """Why the live feed cannot run here ("" when it can)."""
    if importlib.util.find_spec("ib_async") is None:
        return 'the quant feed needs ib_async: pip install "omega-agent[quant]"'
    return ""


def build_feed(
    store: Store, config: QuantSection, ib_factory: Callable[[], Any] | None = None
) -> QuantFeed:
    """The feed over IB Gateway/TWS (read-only connection), with the guarded executor: the
    paper broker, and the IB live broker whose own order connection the executor opens only
    once the owner confirmed live mode. `ib_factory` replaces `ib_async.IB` (tests)."""
    from omega.quant.executor import Limits, PaperBroker, QuantExecutor
    from omega.quant.feed import IbAsyncClient, QuantFeed
    from omega.quant.live import IbLiveBroker

    limits = Limits(
        max_daily_orders=config.max_daily_orders, daily_loss_limit=config.daily_loss_limit
    )
    live = IbLiveBroker(
        config.host,
        config.port,
        config.order_client_id,
        config.exchange,
        config.currency,
        slippage=config.limit_slippage,
        fill_timeout=config.fill_timeout_secs,
        ib_factory=ib_factory,
    )
    executor = QuantExecutor(store, PaperBroker(), live=live, limits=limits)

    def client() -> IbAsyncClient:
        return IbAsyncClient(
            config.host, config.port, config.client_id, config.exchange, config.currency
        )

    return QuantFeed(store, client, executor)
