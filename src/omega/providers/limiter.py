"""How many calls one provider gets at once: a limit that adapts (AIMD) and is fair to people.

The limit starts at the ceiling (`[limits] max_concurrent_provider_calls`: a burst of fifty
people is asked at once, not in two waves) and halves when the provider says it is overloaded
(HTTP 429, 503, 529), pausing every new call for the `retry-after` it gave; it grows back by one
after each window of successful calls, up to the ceiling again. Calls waiting for a slot are
admitted round-robin by sender, so one person's burst queues behind itself, never in front of
everyone else.

There is one limiter per provider actually called (a fallback chain's members each have theirs,
its probes included), and the SDKs do not retry on their own: a refusal for load is seen here
at once and asked again (`limited_call`) once its `retry-after` has passed.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from omega.providers.base import LOAD_KINDS, ProviderError

if TYPE_CHECKING:
    from omega.providers.base import Provider
    from omega.types import Context, Reply

MAX_RETRY_AFTER_SECS = 60.0  # a longer `retry-after` is not honoured past this
LOAD_RETRIES = 2  # a call refused for load is asked again this many times (the SDKs' own: none)
LOAD_BACKOFF_SECS = 1.0  # before the first of those when the refusal named no retry-after


class AdaptiveLimiter:
    """An AIMD concurrency limit with round-robin admission between senders."""

    def __init__(
        self,
        ceiling: int,
        *,
        start: int | None = None,
        floor: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ceiling < 1 or floor < 1:
            raise ValueError("a limiter needs a ceiling and a floor of at least 1")
        self.ceiling = ceiling
        self.floor = min(floor, ceiling)
        self.limit = max(self.floor, min(ceiling if start is None else start, ceiling))
        self.in_flight = 0
        self.paused_until = 0.0
        self._clock = clock
        self._successes = 0  # since the limit last changed
        self._epoch = 0  # bumped on every decrease: answers to older calls do not halve again
        self._waiting: dict[str, deque[asyncio.Future[int]]] = {}
        self._turns: deque[str] = deque()  # senders with waiting calls, in round-robin order
        self._wake: asyncio.TimerHandle | None = None

    def paused(self) -> bool:
        """Whether new calls wait out a provider's `retry-after` now."""
        return self._clock() < self.paused_until

    @property
    def waiting(self) -> int:
        """Calls queued for a slot."""
        return sum(len(queue) for queue in self._waiting.values())

    async def _acquire(self, sender: str) -> int:
        if not self._waiting and self._open():
            self.in_flight += 1
            return self._epoch
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        queue = self._waiting.get(sender)
        if queue is None:
            queue = self._waiting[sender] = deque()
            self._turns.append(sender)
        queue.append(future)
        self._dispatch()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.in_flight -= 1  # granted just as it was cancelled: give the slot back
                self._dispatch()
            else:
                self._forget(sender, future)
            raise

    def _open(self) -> bool:
        return self.in_flight < self.limit and self._clock() >= self.paused_until

    def _dispatch(self) -> None:
        """Grant free slots to waiting calls, one sender at a time in turn."""
        while self._turns and self._open():
            sender = self._turns.popleft()
            queue = self._waiting[sender]
            future = queue.popleft()
            if queue:
                self._turns.append(sender)  # the sender's next call waits for its next turn
            else:
                del self._waiting[sender]
            if future.done():  # cancelled while queued
                continue
            self.in_flight += 1
            future.set_result(self._epoch)
        if self._turns and self._clock() < self.paused_until and self._wake is None:
            delay = self.paused_until - self._clock()
            self._wake = asyncio.get_running_loop().call_later(delay, self._woken)

    def _woken(self) -> None:
        self._wake = None
        self._dispatch()

    def _forget(self, sender: str, future: asyncio.Future[int]) -> None:
        queue = self._waiting.get(sender)
        if queue is None or future not in queue:
            return
        queue.remove(future)
        if not queue:
            del self._waiting[sender]
            self._turns.remove(sender)

    def succeeded(self) -> None:
        """A call was answered: after a window of `limit` answers the limit grows by one."""
        self._successes += 1
        if self._successes >= self.limit and self.limit < self.ceiling:
            self.limit += 1
            self._successes = 0
            self._dispatch()

    def overloaded(self, retry_after: float | None = None, epoch: int | None = None) -> None:
        """The provider refused for load: halve the limit (once per wave of refusals: calls
        admitted before the last halving do not halve it again) and pause for `retry_after`."""
        if retry_after is not None and retry_after > 0:
            pause = min(retry_after, MAX_RETRY_AFTER_SECS)
            self.paused_until = max(self.paused_until, self._clock() + pause)
        if epoch is not None and epoch != self._epoch:
            return
        self._epoch += 1
        self._successes = 0
        self.limit = max(self.floor, self.limit // 2)

    @asynccontextmanager
    async def call(self, sender: str = "") -> AsyncIterator[CallTicket]:
        """A slot plus a ticket to report the outcome with: `ticket.ok()` or
        `ticket.overloaded(retry_after)`."""
        epoch = await self._acquire(sender)
        ticket = CallTicket(self, epoch)
        try:
            yield ticket
        finally:
            self.in_flight -= 1
            self._dispatch()


class CallTicket:
    """One admitted call's way to report how it went to the limiter that admitted it."""

    def __init__(self, limiter: AdaptiveLimiter, epoch: int) -> None:
        self._limiter = limiter
        self.epoch = epoch

    def ok(self) -> None:
        """The provider answered."""
        self._limiter.succeeded()

    def overloaded(self, retry_after: float | None = None) -> None:
        """The provider refused for load (429/503/529), maybe saying when to come back."""
        self._limiter.overloaded(retry_after, self.epoch)


# Which limiter a provider's calls go through, by the provider's name (the member a fallback
# chain actually calls, not the chain's first).
LimiterFor = Callable[[str], AdaptiveLimiter]


async def limited_call(
    limiter: AdaptiveLimiter,
    provider: Provider,
    context: Context,
    *,
    attempt_secs: float | None = None,
    retries: int = LOAD_RETRIES,
) -> Reply:
    """One call to `provider` within its limiter, each attempt bounded by `attempt_secs` (raising
    TimeoutError) once admitted. A refusal for load (429, 503, 529) is told to the limiter at
    once (the limit halves, new calls wait out its `retry-after`) and asked again, at most
    `retries` times, once that pause is over (or after a short backoff when it named none);
    one asking to wait longer than MAX_RETRY_AFTER_SECS is raised as it is."""
    attempt = 0
    while True:
        async with limiter.call(context.sender_id) as ticket:
            try:
                reply = await asyncio.wait_for(provider.complete(context), attempt_secs)
            except ProviderError as exc:
                if exc.kind not in LOAD_KINDS:
                    raise
                ticket.overloaded(exc.retry_after)
                said = exc.retry_after or 0.0
                if attempt >= retries or said > MAX_RETRY_AFTER_SECS:
                    raise
            else:
                ticket.ok()
                return reply
        attempt += 1
        if not said:  # a named retry-after is waited out by the limiter's pause
            await asyncio.sleep(LOAD_BACKOFF_SECS * 2 ** (attempt - 1))
