"""The gateway's stop never waits forever on a task that ignores its cancellation (the inbox
poll once swallowed one: memory.wakeups.wait_for): it is left behind, logged."""

from __future__ import annotations

import asyncio
import logging

import pytest

from omega.gateway import shutdown


@pytest.mark.no_store
def test_a_poll_that_ignores_its_cancellation_is_left_behind_not_waited_for(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(shutdown, "CANCEL_WAIT_SECS", 0.2)

    async def scenario() -> bool:
        released = asyncio.Event()

        async def stubborn() -> None:
            while True:
                try:
                    await released.wait()
                    return
                except asyncio.CancelledError:
                    continue  # what a swallowed cancellation amounts to

        poller = asyncio.create_task(stubborn())
        await asyncio.sleep(0)
        ending = asyncio.create_task(shutdown.end_tasks({}, [], poller))
        done, _ = await asyncio.wait([ending], timeout=5.0)
        left_behind = ending in done and not poller.done()
        released.set()
        await asyncio.gather(poller, ending)
        return left_behind

    with caplog.at_level(logging.ERROR, logger="omega.gateway.shutdown"):
        assert asyncio.run(scenario())
    assert "the inbox poll did not stop when cancelled" in caplog.text
