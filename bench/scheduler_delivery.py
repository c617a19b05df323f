"""Scheduler figures: delay from a task's due time to its delivery, and 1,000 due tasks.

Run: .venv/bin/python bench/scheduler_delivery.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.app import bootstrap, pipeline_deps
from omega.gateway.pipeline import respond
from omega.loops.scheduler import Scheduler
from omega.memory import Store
from omega.types import OutgoingMessage


class Clocked:
    """Delivers instantly and notes when each message went out."""

    def __init__(self) -> None:
        self.times: dict[str, datetime] = {}

    async def deliver(self, message: OutgoingMessage) -> None:
        self.times[message.text] = datetime.now(UTC)

    async def send(self, message: OutgoingMessage) -> None:
        await self.deliver(message)

    async def typing(self, channel: str, target: str) -> None:
        return None


async def delivery_delay(home: Path, count: int = 20) -> list[float]:
    """Tasks due over the next few seconds; milliseconds from due time to delivery."""
    runtime = bootstrap(home / "delay")
    deps = pipeline_deps(runtime, Store(runtime.paths.db))
    out = Clocked()
    stop = asyncio.Event()
    runner = asyncio.create_task(Scheduler(deps, out, respond).run(stop))
    due: dict[str, datetime] = {}
    start = datetime.now(UTC) + timedelta(seconds=0.5)
    for i in range(count):
        when = start + timedelta(milliseconds=137 * i)
        deps.store.create_task(
            channel="terminal",
            sender_id=f"u{i}",
            reply_target=f"u{i}",
            description=f"task {i}",
            due_at=when,
        )
        due[f"Reminder: task {i}"] = when
        deps.state.tasks_changed.set()
    while len(out.times) < count:
        await asyncio.sleep(0.05)
    stop.set()
    await runner
    return [(out.times[text] - when).total_seconds() * 1000 for text, when in due.items()]


async def thousand_due(home: Path) -> float:
    """Seconds to deliver 1,000 reminders that are all due (100 senders)."""
    runtime = bootstrap(home / "bulk")
    deps = pipeline_deps(runtime, Store(runtime.paths.db))
    past = datetime.now(UTC) - timedelta(minutes=1)
    for i in range(1000):
        deps.store.create_task(
            channel="terminal",
            sender_id=f"u{i % 100}",
            reply_target=f"u{i % 100}",
            description=f"bulk {i}",
            due_at=past,
        )
    out = Clocked()
    started = time.perf_counter()
    delivered = await Scheduler(deps, out, respond).run_due()
    elapsed = time.perf_counter() - started
    assert delivered == 1000 and len(out.times) == 1000
    return elapsed


def main() -> None:
    os.environ.setdefault("OMEGA_ALLOW_ROOT", "1")
    with tempfile.TemporaryDirectory() as folder:
        delays = asyncio.run(delivery_delay(Path(folder)))
        print(
            f"due -> delivered delay, {len(delays)} tasks: p50 {statistics.median(delays):.1f} ms"
            f"  max {max(delays):.1f} ms"
        )
        print(f"1,000 due reminders delivered in {asyncio.run(thousand_due(Path(folder))):.2f} s")


if __name__ == "__main__":
    main()
