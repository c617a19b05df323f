"""Starting the quant feed from `omega start` once the owner sends /quant enable.

`omega start` always runs `run_when_enabled`: it reads the chat setting every few seconds and
builds the feed (importing numpy and ib_async) only once /quant is enabled, so no
config.toml change is needed and a user who never enables quant pays nothing. The feed's
market-data connection is read-only and orders stay paper until the owner confirms live mode
with the one-time code (executor.py, settings.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from omega.config.quant import QuantSection
from omega.memory.store import Store
from omega.quant.settings import QuantStateStore

log = logging.getLogger(__name__)
POLL = 5.0  # seconds between reads of the /quant setting before the feed is built

if TYPE_CHECKING:
    from omega.quant.feed import QuantFeed


class _Runnable(Protocol):
    async def run(self, stop: asyncio.Event) -> None: ...


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
    from omega.quant.broker import PaperBroker
    from omega.quant.executor import Limits, QuantExecutor
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

    return QuantFeed(store, client, executor, endpoint=f"{config.host}:{config.port}")


async def run_when_enabled(
    store: Store,
    config: QuantSection,
    stop: asyncio.Event,
    build: Callable[[Store, QuantSection], _Runnable] = build_feed,
    poll: float = POLL,
) -> None:
    """Until `stop`: wait for /quant enable, then build and run the feed (which itself idles
    while /quant is disabled again). If the feed cannot run here (no ib_async), say so in the
    feed's report and the log once, and keep checking."""
    state = QuantStateStore(store)
    told = False
    while not stop.is_set():
        if (await store.call(state.settings)).enabled:
            why = feed_unavailable()
            if not why:
                await build(store, config).run(stop)
                return
            if not told:
                log.warning("quant: /quant is enabled but %s", why)
                record = {"state": "unavailable", "error": why, "since": time.time()}
                previous = await store.call(state.feed)
                if previous and "last_bar" in previous:
                    record["last_bar"] = previous["last_bar"]
                await store.call(state.save_feed, record)
                told = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), poll)
