"""The live feed against a fake IB client at the library boundary: bars through the engine,
the latest signal stored, orders through the guarded executor, reconnects with backoff, and
nothing while /quant is disabled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from omega.config.quant import QuantSection
from omega.memory import Store
from omega.quant import service
from omega.quant.broker import PaperBroker
from omega.quant.engine import Bar, QuantEngine
from omega.quant.executor import QuantExecutor
from omega.quant.feed import QuantFeed
from omega.quant.feedstatus import describe_feed, feed_line
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


async def test_the_feed_reports_its_connection_and_last_bar(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What /quant status and `omega status` read: connected (to what, since when), or not
    (why, and when it retries), and when the last bar came."""
    state = QuantStateStore(store)
    state.update(enabled=True, symbol="MSFT")
    bars = trending_bars(30)
    stop = asyncio.Event()
    reports: list[dict[str, object]] = []
    save = QuantStateStore.save_feed

    def recording(self: QuantStateStore, record: dict[str, object]) -> None:
        save(self, record)
        reports.append(self.feed() or {})  # as stored, with its time stamp

    monkeypatch.setattr(QuantStateStore, "save_feed", recording)
    seen: list[str] = []

    class Watching(FakeIB):
        async def bars(self, symbol: str) -> AsyncIterator[Bar]:
            for i, bar in enumerate(self.current):
                if i == 10:  # mid-session, as `omega status` would read it
                    seen.append(feed_line(store))
                yield bar
            raise ConnectionError("connection lost")

    fake = Watching([bars[:20], ConnectionRefusedError("refused"), bars[20:]], stop)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    feed = QuantFeed(
        store,
        lambda: fake,
        QuantExecutor(store, PaperBroker()),
        sleep=sleep,
        endpoint="127.0.0.1:4002",
    )
    await asyncio.wait_for(feed.run(stop), timeout=60)
    assert seen[0].startswith("connected to IB 127.0.0.1:4002 for MSFT since ")
    assert "; last bar 9 (MSFT, close " in seen[0] and " s ago" in seen[0]
    states = [r["state"] for r in reports]
    assert states[0] == "starting" and states[-1] == "stopped"
    assert {"connecting", "connected", "disconnected"} <= set(states)
    refused = [r for r in reports if r["error"] == "ConnectionRefusedError: refused"]
    assert refused and refused[0]["state"] == "disconnected" and refused[0]["retry_in"] == 1.0
    last = state.feed()
    assert last is not None and last["state"] == "stopped"
    assert last["last_bar"]["time"] == "29" and last["last_bar"]["symbol"] == "MSFT"
    # While it retries, status says why; a report nobody re-stamps reads as not running.
    text = describe_feed(refused[0], True, now=float(str(refused[0]["since"])) + 5)
    assert text.startswith(
        "NOT connected to IB 127.0.0.1:4002 (ConnectionRefusedError: refused); retrying in 1 s"
    )
    assert "last bar 19 (MSFT" in text
    stale = describe_feed(refused[0], True, now=float(str(refused[0]["updated_at"])) + 600)
    assert stale.startswith("not running: no report for 10 min")
    assert "stopped" in feed_line(store) and "last bar 29" in feed_line(store)


@pytest.mark.no_store
def test_describe_feed_before_any_report() -> None:
    assert describe_feed(None, False).startswith("off (/quant enable starts it")
    assert "no bar received yet" in describe_feed(None, False)
    assert describe_feed(None, True, "no ib_async").startswith("cannot run here: no ib_async")
    assert describe_feed(None, True).startswith("no report yet")


async def test_omega_start_runs_the_feed_once_quant_is_enabled_in_chat(store: Store) -> None:
    """No config needed: the launcher builds the feed when /quant is enabled, not before."""
    state = QuantStateStore(store)
    stop = asyncio.Event()
    built: list[object] = []

    class Feed:
        async def run(self, stop: asyncio.Event) -> None:
            built.append(self)
            stop.set()

    task = asyncio.create_task(
        service.run_when_enabled(store, QuantSection(), stop, lambda s, c: Feed(), poll=0.01)
    )
    await asyncio.sleep(0.1)
    assert not built and not task.done()
    state.update(enabled=True)
    await asyncio.wait_for(task, timeout=10)
    assert len(built) == 1


async def test_without_ib_async_the_launcher_says_why_in_the_feeds_report(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "feed_unavailable", lambda: "the quant feed needs ib_async")
    QuantStateStore(store).update(enabled=True)
    stop = asyncio.Event()

    def never(s: Store, c: QuantSection) -> service._Runnable:
        raise AssertionError("built without ib_async")

    task = asyncio.create_task(service.run_when_enabled(store, QuantSection(), stop, never, 0.01))
    await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    record = QuantStateStore(store).feed()
    assert record is not None and record["state"] == "unavailable"
    assert describe_feed(record, True).startswith("cannot run here: the quant feed needs ib_async")
