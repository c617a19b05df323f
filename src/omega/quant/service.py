"""Starting the quant feed from `omega start` when `[quant] enabled`."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from omega.config import QuantSection
from omega.memory.store import Store

if TYPE_CHECKING:
    from omega.quant.feed import QuantFeed


def feed_unavailable() -> str:
    """Why the live feed cannot run here ("" when it can)."""
    if importlib.util.find_spec("ib_async") is None:
        return 'the quant feed needs ib_async: pip install "omega-agent[quant]"'
    return ""


def build_feed(store: Store, config: QuantSection) -> QuantFeed:
    """The feed over IB Gateway/TWS, with a paper executor. There is no live broker in this
    version: live mode (after the owner's confirmation) blocks every order, audited."""
    from omega.quant.executor import Limits, PaperBroker, QuantExecutor
    from omega.quant.feed import IbAsyncClient, QuantFeed

    limits = Limits(
        max_daily_orders=config.max_daily_orders, daily_loss_limit=config.daily_loss_limit
    )
    executor = QuantExecutor(store, PaperBroker(), live=None, limits=limits)

    def client() -> IbAsyncClient:
        return IbAsyncClient(
            config.host, config.port, config.client_id, config.exchange, config.currency
        )

    return QuantFeed(store, client, executor)
