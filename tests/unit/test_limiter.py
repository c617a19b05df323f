"""The adaptive provider limiter (issue 27): AIMD back-off on overload, retry-after, growth
back to the ceiling, and round-robin fairness between senders."""

from __future__ import annotations

import asyncio

import pytest

from omega.providers.limiter import AdaptiveLimiter

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_starts_at_the_ceiling_so_a_burst_is_asked_at_once() -> None:
    assert AdaptiveLimiter(64).limit == 64
    assert AdaptiveLimiter(4, start=8).limit == 4


def test_halves_on_overload_down_to_the_floor() -> None:
    limiter = AdaptiveLimiter(64, start=32)
    limiter.overloaded()
    assert limiter.limit == 16
    for _ in range(10):
        limiter.overloaded()
    assert limiter.limit == 1


async def test_a_wave_of_429s_from_calls_already_in_flight_halves_once() -> None:
    limiter = AdaptiveLimiter(64, start=32)
    tickets = []
    for _ in range(8):
        manager = limiter.call("ana")
        tickets.append((manager, await manager.__aenter__()))
    for _, ticket in tickets:
        ticket.overloaded()
    assert limiter.limit == 16  # not 32 / 2**8
    for manager, _ in tickets:
        await manager.__aexit__(None, None, None)
    async with limiter.call("ana") as ticket:  # admitted after the halving: it counts
        ticket.overloaded()
    assert limiter.limit == 8


async def test_grows_back_by_one_per_window_of_answers_up_to_the_ceiling() -> None:
    limiter = AdaptiveLimiter(10, start=4)
    for _ in range(4):
        async with limiter.call() as ticket:
            ticket.ok()
    assert limiter.limit == 5
    for _ in range(1000):
        async with limiter.call() as ticket:
            ticket.ok()
    assert limiter.limit == 10


async def test_in_flight_never_exceeds_the_limit() -> None:
    limiter = AdaptiveLimiter(3)
    peak = 0

    async def one(i: int) -> None:
        nonlocal peak
        async with limiter.call(f"s{i}") as ticket:
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.01)
            ticket.ok()

    await asyncio.gather(*(one(i) for i in range(30)))
    assert peak == 3
    assert limiter.in_flight == 0 and limiter.waiting == 0


async def test_retry_after_pauses_every_new_call_until_it_has_passed() -> None:
    clock = Clock()
    limiter = AdaptiveLimiter(8, clock=clock)
    async with limiter.call("ana") as ticket:
        ticket.overloaded(retry_after=30)
    assert limiter.limit == 4  # 8 halved
    started = asyncio.Event()

    async def later() -> None:
        async with limiter.call("bob"):
            started.set()

    task = asyncio.create_task(later())
    await asyncio.sleep(0.05)
    assert not started.is_set()  # the slot is free, but the provider asked for 30 s
    clock.now += 31
    # Its own wake-up timer runs on the loop clock; here the test nudges it after moving time.
    limiter._dispatch()
    await asyncio.wait_for(started.wait(), 1)
    await task


async def test_retry_after_wakes_waiting_calls_by_itself() -> None:
    limiter = AdaptiveLimiter(8)
    async with limiter.call("ana") as ticket:
        ticket.overloaded(retry_after=0.2)
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with limiter.call("bob"):
        waited = loop.time() - started
    assert 0.15 <= waited < 2


async def test_one_senders_burst_does_not_starve_the_others() -> None:
    """Mallory queues 20 calls first; Ana's and Bob's single calls are admitted at the next
    free slots, not after all of Mallory's."""
    limiter = AdaptiveLimiter(2)
    order: list[str] = []
    release = asyncio.Event()

    async def call(sender: str) -> None:
        async with limiter.call(sender) as ticket:
            order.append(sender)
            await release.wait()
            ticket.ok()

    tasks = [asyncio.create_task(call("mallory")) for _ in range(20)]
    await asyncio.sleep(0)
    tasks += [asyncio.create_task(call("ana")), asyncio.create_task(call("bob"))]
    await asyncio.sleep(0.01)
    assert order == ["mallory", "mallory"]  # the two slots taken before the others came
    release.set()
    await asyncio.gather(*tasks)
    # Next turns go round-robin: ana and bob come before Mallory's third call ends the queue.
    assert order.index("ana") <= 4 and order.index("bob") <= 4
    assert len(order) == 22


async def test_a_cancelled_waiter_gives_its_place_up() -> None:
    limiter = AdaptiveLimiter(1)
    async with limiter.call("ana"):
        waiter = asyncio.create_task(limiter.call("bob").__aenter__())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    assert limiter.waiting == 0 and limiter.in_flight == 0
    async with limiter.call("carol"):
        assert limiter.in_flight == 1
