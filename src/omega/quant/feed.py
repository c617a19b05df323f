"""The live price feed: 5-second bars from IB Gateway/TWS through each engine step.

The feed talks to a small `IBClient` protocol (connect, stream bars, disconnect); the real
implementation, `IbAsyncClient`, is a thin adapter over `ib_async` (reqRealTimeBars with a
5-second bar size), and the tests use a fake at the same boundary. The feed:
- waits while /quant is disabled, and follows the symbol the owner picks;
- restores the engine's state for that symbol from memory.db and saves it as it goes;
- keeps the latest signal in memory.db (the owner's next message gets it as an advisory);
- hands each signal to the guarded executor (paper unless the owner confirmed live), with the
  previous bar's close (kept in the engine's state, so across reconnects and restarts) as the
  independent price the 2% deviation guard compares the bar with: the signal's own price is
  this bar's close, so a bad print would otherwise pass unchecked; a bar that jumps past
  that limit is held back from the engine until the next bar confirms the move (quant/prints.py:
  a bad print moves neither the trend, the volatility nor the last close); before each bar's order,
  and each time round its loop, it lets the executor open or close the live order connection
  to follow the mode the owner set;
- reconnects after any error or disconnection with exponential backoff (1 s doubling to 60 s,
  back to 1 s after a bar arrives);
- reports its connection (disabled, connecting, connected, disconnected with the error and
  the retry delay, stopped) and the last bar it received to memory.db at each change and each
  bar, and re-stamps that report every `HEARTBEAT` seconds, so `/quant status` and
  `omega status` (another process) can tell a quiet market from a feed that is not running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from omega.memory.store import Store
from omega.quant.engine import Bar, QuantEngine, QuantParams
from omega.quant.executor import QuantExecutor
from omega.quant.ib import connect_ib, load_ib_async
from omega.quant.prints import PrintScreen
from omega.quant.settings import QuantSettings, QuantStateStore, audit_quant

log = logging.getLogger(__name__)
BACKOFF_START = 1.0
BACKOFF_MAX = 60.0
SAVE_STATE_EVERY = 60  # bars (5 minutes of 5-second bars)
IDLE_POLL = 5.0  # seconds between checks of the settings while disabled
HEARTBEAT = 60.0  # seconds between re-stamps of the feed's report (see feedstatus.STALE_SECONDS)


class IBClient(Protocol):
    """The library boundary the feed uses."""

    async def connect(self) -> None:
        """Connect to IB Gateway/TWS (raise on failure)."""
        ...

    def bars(self, symbol: str) -> AsyncIterator[Bar]:
        """5-second real-time bars for `symbol`, until the connection drops (then raise or
        stop)."""
        ...

    async def disconnect(self) -> None:
        """Close the connection (never raises)."""
        ...


class QuantFeed:
    """Bars in, signals stored, orders (guarded) out; reconnecting forever until stopped."""

    def __init__(
        self,
        store: Store,
        client_factory: Callable[[], IBClient],
        executor: QuantExecutor,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        endpoint: str = "",
    ) -> None:
        self.store = store
        self.state = QuantStateStore(store)
        self.client_factory = client_factory
        self.executor = executor
        self.sleep = sleep
        self.connections = 0
        self.bars_seen = 0
        self._session_bars = 0
        self.report: dict[str, Any] = {
            "state": "starting",
            "endpoint": endpoint,
            "symbol": "",
            "since": 0.0,
            "error": "",
            "retry_in": 0.0,
        }

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set."""
        previous = await self.store.call(self.state.feed)
        if previous and isinstance(previous.get("last_bar"), dict):
            self.report["last_bar"] = previous["last_bar"]  # the last bar of an earlier run
        await self._report("starting")
        beat = asyncio.create_task(self._heartbeat(stop))
        try:
            await self._run(stop)
        finally:
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._report("stopped", retry_in=0.0)
            with contextlib.suppress(Exception):
                await self.executor.close()

    async def _report(self, state: str | None = None, **changes: Any) -> None:
        """Record a change of state (or just the fields in `changes`) in memory.db."""
        if state is not None and state != self.report.get("state"):
            self.report.update(state=state, since=time.time())
        self.report.update(changes)
        await self.store.call(self.state.save_feed, dict(self.report))

    async def _heartbeat(self, stop: asyncio.Event) -> None:
        """Re-stamp the report while running, even while no bar comes (a closed market)."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), HEARTBEAT)
            if not stop.is_set():
                with contextlib.suppress(Exception):
                    await self._report()

    async def _sync_mode(self) -> None:
        """Open or close the live order connection to follow the owner's mode."""
        await self.executor.sync_mode()

    async def _run(self, stop: asyncio.Event) -> None:
        backoff = BACKOFF_START
        while not stop.is_set():
            await self._sync_mode()
            settings = await self.store.call(self.state.settings)
            if not settings.enabled:
                if self.report.get("state") != "disabled":
                    await self._report("disabled", error="", retry_in=0.0)
                await self._wait(stop, IDLE_POLL)
                continue
            client = self.client_factory()
            self._session_bars = 0
            await self._report("connecting", symbol=settings.symbol, retry_in=0.0)
            error = ""
            try:
                await self._stream(client, settings, stop)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                log.warning("quant feed: %s", error)
                await self.store.call(
                    audit_quant, self.store, "quant_feed_error", {"error": error}, "error"
                )
            finally:
                with contextlib.suppress(Exception):
                    await client.disconnect()
            if stop.is_set():
                break
            got_bar = self._session_bars > 0
            if got_bar:
                backoff = BACKOFF_START
            await self._report("disconnected", error=error, retry_in=backoff)
            await self._wait(stop, backoff)
            if not got_bar:
                backoff = min(BACKOFF_MAX, backoff * 2)

    async def _wait(self, stop: asyncio.Event, seconds: float) -> None:
        """Sleep `seconds`, or less if `stop` is set meanwhile."""
        waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self.sleep(seconds))]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    async def _stream(self, client: IBClient, settings: QuantSettings, stop: asyncio.Event) -> None:
        """One connection's worth of bars (counted in `_session_bars`)."""
        await client.connect()
        self.connections += 1
        symbol = settings.symbol
        await self._report("connected", error="")
        saved = await self.store.call(self.state.engine_state, symbol)
        params = QuantParams(portfolio=settings.portfolio)
        if saved:  # continue where the last session stopped, with today's portfolio value
            saved = {**saved, "params": {**saved["params"], "portfolio": settings.portfolio}}
            engine = QuantEngine.from_state(saved)
        else:
            engine = QuantEngine(params)
        try:
            await self._consume(client, engine, symbol, stop)
        finally:
            await self.store.call(self.state.save_engine_state, symbol, engine.to_state())

    async def _consume(
        self, client: IBClient, engine: QuantEngine, symbol: str, stop: asyncio.Event
    ) -> None:
        screen = PrintScreen(self.executor.limits.max_deviation)
        async for received in client.bars(symbol):
            self._session_bars += 1
            self.bars_seen += 1
            bars, dropped = screen.admit(received, engine.last_close)
            if dropped is not None:
                await self._audit_print("quant_bar_dropped", symbol, dropped, engine.last_close)
            if not bars:
                await self._audit_print("quant_bar_held", symbol, received, engine.last_close)
            for confirmed in bars[:-1]:  # a held bar the next one confirmed: no order of its own
                engine.process(confirmed)
            for bar in bars[-1:]:
                await self._step(engine, symbol, bar)
            current = await self.store.call(self.state.settings)
            if stop.is_set() or not current.enabled or current.symbol != symbol:
                break

    async def _step(self, engine: QuantEngine, symbol: str, bar: Bar) -> None:
        """One bar through the engine: its signal stored, reported and handed to the executor."""
        previous_close = engine.last_close  # the bar's own close is the signal's price
        signal = engine.process(bar)  # raises on a bad close: nothing recorded for it
        await self._report(
            last_bar={
                "symbol": symbol,
                "time": str(bar.time),
                "close": signal.price,
                "at": time.time(),
            }
        )
        data = signal.as_dict()
        await self.store.call(self.state.save_signal, symbol, data, signal.advisory())
        if engine.bars_processed % SAVE_STATE_EVERY == 0:
            await self.store.call(self.state.save_engine_state, symbol, engine.to_state())
        await self._sync_mode()  # /quant live confirm or /quant paper since the last bar
        await self.executor.on_signal(data, symbol, bar.close, previous_close)

    async def _audit_print(self, event: str, symbol: str, bar: Bar, last_close: float) -> None:
        """Audit a bar held back from the engine, or dropped as a bad print."""
        detail = {"symbol": symbol, "time": str(bar.time), "close": bar.close, "last": last_close}
        await self.store.call(audit_quant, self.store, event, detail)


class IbAsyncClient:
    """`IBClient` over ib_async (install the `quant` extra). Thin on purpose: everything the
    feed decides is tested against a fake at this boundary."""

    def __init__(
        self,
        host: str,
        port: int,
        client_id: int,
        exchange: str = "SMART",
        currency: str = "USD",
    ) -> None:
        ib_async = load_ib_async("the quant feed")
        self._lib: Any = ib_async
        self._ib: Any = ib_async.IB()
        self.host, self.port, self.client_id = host, port, client_id
        self.exchange, self.currency = exchange, currency

    async def connect(self) -> None:
        """Connect read-only (market data only; raises on failure)."""
        await connect_ib(self._ib, self.host, self.port, self.client_id, readonly=True)

    async def bars(self, symbol: str) -> AsyncIterator[Bar]:
        """reqRealTimeBars(5 s, TRADES) as an async iterator; ends when disconnected."""
        contract = self._lib.Stock(symbol, self.exchange, self.currency)
        await self._ib.qualifyContractsAsync(contract)
        queue: asyncio.Queue[Bar | None] = asyncio.Queue()

        def on_update(bars: Any, has_new_bar: bool) -> None:
            if has_new_bar and bars:
                b = bars[-1]
                queue.put_nowait(
                    Bar(
                        str(b.time),
                        float(b.open_),
                        float(b.high),
                        float(b.low),
                        float(b.close),
                        float(b.volume),
                    )
                )

        def on_disconnect() -> None:
            queue.put_nowait(None)

        live = self._ib.reqRealTimeBars(contract, 5, "TRADES", False)
        live.updateEvent += on_update
        self._ib.disconnectedEvent += on_disconnect
        try:
            while True:
                bar = await queue.get()
                if bar is None:
                    raise ConnectionError("disconnected from IB")
                yield bar
        finally:
            live.updateEvent -= on_update
            self._ib.disconnectedEvent -= on_disconnect
            with contextlib.suppress(Exception):
                self._ib.cancelRealTimeBars(live)

    async def disconnect(self) -> None:
        """Disconnect (never raises)."""
        with contextlib.suppress(Exception):
            self._ib.disconnect()
