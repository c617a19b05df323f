"""The live price feed: 5-second bars from IB Gateway/TWS through each engine step.

The feed talks to a small `IBClient` protocol (connect, stream bars, disconnect); the real
implementation, `IbAsyncClient`, is a thin adapter over `ib_async` (reqRealTimeBars with a
5-second bar size), and the tests use a fake at the same boundary. The feed:
- waits while /quant is disabled, and follows the symbol the owner picks;
- restores the engine's state for that symbol from memory.db and saves it as it goes;
- keeps the latest signal in memory.db (the owner's next message gets it as an advisory);
- hands each signal to the guarded executor (paper unless the owner confirmed live); before
  each bar's order, and each time round its loop, it lets the executor open or close the live
  order connection to follow the mode the owner set;
- reconnects after any error or disconnection with exponential backoff (1 s doubling to 60 s,
  back to 1 s after a bar arrives).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from omega.memory.store import Store
from omega.quant.engine import Bar, QuantEngine, QuantParams
from omega.quant.executor import QuantExecutor
from omega.quant.settings import QuantSettings, QuantStateStore, audit_quant

log = logging.getLogger(__name__)
BACKOFF_START = 1.0
BACKOFF_MAX = 60.0
SAVE_STATE_EVERY = 60  # bars (5 minutes of 5-second bars)
IDLE_POLL = 5.0  # seconds between checks of the settings while disabled


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
    ) -> None:
        self.store = store
        self.state = QuantStateStore(store)
        self.client_factory = client_factory
        self.executor = executor
        self.sleep = sleep
        self.connections = 0
        self.bars_seen = 0
        self._session_bars = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set."""
        try:
            await self._run(stop)
        finally:
            with contextlib.suppress(Exception):
                await self.executor.close()

    async def _sync_mode(self) -> None:
        """Open or close the live order connection to follow the owner's mode."""
        await self.executor.sync_mode()

    async def _run(self, stop: asyncio.Event) -> None:
        backoff = BACKOFF_START
        while not stop.is_set():
            await self._sync_mode()
            settings = await self.store.call(self.state.settings)
            if not settings.enabled:
                await self._wait(stop, IDLE_POLL)
                continue
            client = self.client_factory()
            self._session_bars = 0
            try:
                await self._stream(client, settings, stop)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("quant feed: %s: %s", type(exc).__name__, exc)
                await self.store.call(
                    audit_quant,
                    self.store,
                    "quant_feed_error",
                    {"error": f"{type(exc).__name__}: {exc}"},
                    "error",
                )
            finally:
                with contextlib.suppress(Exception):
                    await client.disconnect()
            if stop.is_set():
                break
            got_bar = self._session_bars > 0
            if got_bar:
                backoff = BACKOFF_START
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
        async for bar in client.bars(symbol):
            self._session_bars += 1
            self.bars_seen += 1
            signal = engine.process(bar)
            data = signal.as_dict()
            await self.store.call(self.state.save_signal, symbol, data, signal.advisory())
            if engine.bars_processed % SAVE_STATE_EVERY == 0:
                await self.store.call(self.state.save_engine_state, symbol, engine.to_state())
            await self._sync_mode()  # /quant live confirm or /quant paper since the last bar
            await self.executor.on_signal(data, symbol, bar.close)
            current = await self.store.call(self.state.settings)
            if stop.is_set() or not current.enabled or current.symbol != symbol:
                break


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
        try:
            import ib_async
        except ImportError as exc:  # pragma: no cover - depends on the optional extra
            raise RuntimeError(
                'the quant feed needs ib_async: pip install "omega-agent[quant]"'
            ) from exc
        self._lib: Any = ib_async
        self._ib: Any = ib_async.IB()
        self.host, self.port, self.client_id = host, port, client_id
        self.exchange, self.currency = exchange, currency

    async def connect(self) -> None:
        """Connect read-only (market data only; raises on failure)."""
        await self._ib.connectAsync(
            self.host, self.port, clientId=self.client_id, timeout=10, readonly=True
        )

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
