"""The gateway's own overhead per message: every stage except the provider call.

An in-process instant provider answers; memory.db holds 10,000 earlier messages. Prints p50/p99
wall time and CPU time per message. Run: .venv/bin/python bench/gateway_overhead.py [messages]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from omega.app import bootstrap, pipeline_deps
from omega.gateway.pipeline import handle_message
from omega.memory import Store
from omega.types import Context, IncomingMessage, OutgoingMessage, Reply

STORED = 10_000


class InstantProvider:
    """Answers at once, so what is timed is the gateway alone."""

    name = "instant"

    def availability(self) -> tuple[bool, str]:
        return True, "in-process"

    async def prepare(self) -> None:
        return None

    async def complete(self, context: Context) -> Reply:
        return Reply(text=f"Noted: {context.prompt[:40]}", provider="instant", model="none")


class NullOutbox:
    async def send(self, message: OutgoingMessage) -> None:
        return None

    async def typing(self, channel: str, target: str) -> None:
        return None


def seed(store: Store, count: int) -> None:
    """Fill memory.db with `count` messages across 50 senders."""
    words = [
        "calendar",
        "meeting",
        "project",
        "garden",
        "invoice",
        "travel",
        "recipe",
        "budget",
        "music",
        "train",
    ]
    for i in range(count // 2):
        text = f"message {i} about {words[i % 10]} and {words[(i * 7) % 10]}"
        store.store_exchange("terminal", f"user{i % 50}", text, f"reply {i}")


async def run(messages: int) -> tuple[list[float], list[float]]:
    """Time handle_message for one sender; return wall and CPU milliseconds per message."""
    with tempfile.TemporaryDirectory() as home:
        runtime = bootstrap(Path(home))
        store = Store(runtime.paths.db)
        seed(store, STORED)
        deps = pipeline_deps(runtime, store)
        deps.provider = InstantProvider()
        out = NullOutbox()
        walls, cpus = [], []
        for i in range(messages + 20):
            message = IncomingMessage("terminal", "user7", f"what about the garden budget {i}?")
            wall, cpu = time.perf_counter(), time.process_time()
            await handle_message(deps, message, out)
            if i >= 20:  # the first messages warm caches (welcome, skills, projects)
                walls.append((time.perf_counter() - wall) * 1000)
                cpus.append((time.process_time() - cpu) * 1000)
        store.close()
        return walls, cpus


def main() -> None:
    os.environ.setdefault("OMEGA_ALLOW_ROOT", "1")
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    walls, cpus = asyncio.run(run(messages))
    walls.sort()
    p99 = walls[min(len(walls) - 1, int(len(walls) * 0.99))]
    print(
        f"gateway overhead, {messages} messages, {STORED:,} stored: "
        f"p50 {statistics.median(walls):.2f} ms  p99 {p99:.2f} ms  "
        f"CPU p50 {statistics.median(cpus):.2f} ms"
    )


if __name__ == "__main__":
    main()
