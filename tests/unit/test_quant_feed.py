"""The live feed against a fake IB client at the library boundary: bars through the engine,
the latest signal stored, orders through the guarded executor, reconnects with backoff, and
nothing while /quant is disabled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from omega.memory import Store
from omega.quant.engine import Bar, QuantEngine
from omega.quant.executor import PaperBroker, QuantExecutor
from omega.quant.feed import QuantFeed
from omega.quant.settings import QuantStateStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "memory.db")
    yield s
    s.close()


def trending_bars(n: int, start: int = 0) -> list[Bar]:
    rng = np.random.default_rng(3)
    closes = 100 * np.exp(np.cumsum(rng.normal(4e-4, 2e-4, start + n)))[start:]
    return [Bar(str(start + i), c, c, c, c, 10_000_000.0) for i, c in enumerate(closes.tolist())]


class FakeIB:
    """Scripted sessions: each connect() takes the next one; a session is a list of bars, or
    an exception raised at connect, and a session ending means the connection dropped."""

    def __init__(self, sessions: list[list[Bar] | Exception], stop: asyncio.Event) -> None:
        self.sessions = sessions
        self.stop = stop
        self.connects = 0
        self.disconnects = 0
        self.symbols: list[str] = []
        self.current: list[Bar] = []

    async def connect(self) -> None:
        self.connects += 1
        if not self.sessions:
            self.stop.set()
            raise ConnectionError("script over")
        session = self.sessions.pop(0)
        if isinstance(session, Exception):
            raise session
        self.current = session

    async def bars(self, symbol: str) -> AsyncIterator[Bar]:
        self.symbols.append(symbol)
        for bar in self.current:
            yield bar
        raise ConnectionError("connection lost")

    async def disconnect(self) -> None:
        self.disconnects += 1


async def run_feed(
    store: Store, fake: FakeIB, stop: asyncio.Event
) -> tuple[QuantFeed, list[float]]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    feed = QuantFeed(store, lambda: fake, QuantExecutor(store, PaperBroker()), sleep=sleep)
    await asyncio.wait_for(feed.run(stop), timeout=60)
    return feed, waits


async def test_bars_become_signals_orders_and_state_across_reconnects(store: Store) -> None:
    state = QuantStateStore(store)
    state.update(enabled=True, symbol="MSFT", portfolio=1_000_000.0)
    bars = trending_bars(1200)
    stop = asyncio.Event()
    fake = FakeIB(
        [
            bars[:700],
            ConnectionRefusedError("gateway restarting"),
            ConnectionError("x"),
            bars[700:],
        ],
        stop,
    )
    feed, waits = await run_feed(store, fake, stop)
    assert feed.bars_seen == 1200 and fake.symbols == ["MSFT", "MSFT"]
    assert fake.disconnects == fake.connects  # every connection closed
    # Backoff: 1 s after a session with bars, doubling while connects fail, reset after bars.
    assert waits[:4] == [1.0, 1.0, 2.0, 1.0]
    # The signal of the last bar equals an uninterrupted engine's (state carried over).
    engine = QuantEngine.from_state(state.engine_state("MSFT") or {})
    assert engine.bars_processed == 1200
    straight = QuantEngine(engine.params)
    expected = [straight.process(b) for b in bars][-1]
    latest = state.latest_signal()
    assert latest is not None and latest["signal"] == expected.as_dict()
    assert latest["advisory"].startswith("ADVISORY (NOT FINANCIAL ADVICE): regime=Bull")
    assert "[MSFT] ADVISORY" in state.advisory()
    orders = store.query("SELECT * FROM quant_orders")
    assert orders and all(o["mode"] == "paper" for o in orders)
    assert {o["status"] for o in orders} == {"filled"}
    errors = [r for r in store.audit_entries(500) if r["event"] == "quant_feed_error"]
    assert len(errors) >= 2


async def test_nothing_happens_while_disabled(store: Store) -> None:
    stop = asyncio.Event()
    fake = FakeIB([trending_bars(10)], stop)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) >= 3:
            stop.set()

    feed = QuantFeed(store, lambda: fake, QuantExecutor(store, PaperBroker()), sleep=sleep)
    await asyncio.wait_for(feed.run(stop), timeout=10)
    assert fake.connects == 0 and QuantStateStore(store).latest_signal() is None


async def test_disabling_or_switching_symbol_ends_the_stream(store: Store) -> None:
    state = QuantStateStore(store)
    state.update(enabled=True, symbol="SPY")
    stop = asyncio.Event()
    bars = trending_bars(50)

    class Switching(FakeIB):
        async def bars(self, symbol: str) -> AsyncIterator[Bar]:
            self.symbols.append(symbol)
            for i, bar in enumerate(self.current):
                if i == 10:
                    state.update(symbol="QQQ") if symbol == "SPY" else state.update(enabled=False)
                yield bar
            raise ConnectionError("connection lost")

    fake = Switching([bars, bars], stop)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if not state.settings().enabled:
            stop.set()

    feed = QuantFeed(store, lambda: fake, QuantExecutor(store, PaperBroker()), sleep=sleep)
    await asyncio.wait_for(feed.run(stop), timeout=10)
    assert fake.symbols == ["SPY", "QQQ"]
    assert feed.bars_seen == 22  # 11 bars each: the change is seen after the bar in flight
    assert state.engine_state("SPY") is None  # the saved state follows the current symbol
    assert state.engine_state("QQQ") is not None
