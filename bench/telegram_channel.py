"""The Telegram channel's cost: messages per second, and latency added over `--jsonl`.

The real gateway and pipeline answer with an in-process instant provider; the Telegram channel
long-polls the Bot API test double (tests/fakes/telegram_server.py) over real HTTP on
127.0.0.1, so what is timed is the channel (polling, offsets, the inbox, HTML rendering,
sendMessage) plus the pipeline. The baseline is the real JSON-lines channel fed through a pipe.
Run: .venv/bin/python bench/telegram_channel.py [messages]
"""

from __future__ import annotations

import asyncio
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.telegram_server import TOKEN, FakeTelegram  # noqa: E402

from bench.gateway_overhead import InstantProvider  # noqa: E402
from omega.app import Service, bootstrap, pipeline_deps, run_service  # noqa: E402
from omega.channels.base import Channel  # noqa: E402
from omega.channels.telegram import TelegramChannel  # noqa: E402
from omega.channels.terminal import JsonlChannel  # noqa: E402
from omega.gateway.gateway import Gateway  # noqa: E402
from omega.memory import Store  # noqa: E402


class Lines(io.StringIO):
    """A stdout that counts the replies written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.replies = 0

    def write(self, text: str) -> int:
        if '"kind": "reply"' in text:
            self.replies += 1
        return len(text)


async def until(predicate: Callable[[], bool], within: float = 60.0) -> None:
    deadline = time.perf_counter() + within
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("no answer in time")
        await asyncio.sleep(0.0005)


async def with_gateway(channel: Channel, home: Path, work: Callable[[], object]) -> None:
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    deps = pipeline_deps(runtime, store)
    deps.provider = InstantProvider()  # type: ignore[assignment]
    service = Service(deps, [channel], Gateway(deps, [channel]), jobs=[], grace=5)
    stop = asyncio.Event()
    serving = asyncio.create_task(run_service(service, stop))
    try:
        await work()  # type: ignore[misc]
    finally:
        stop.set()
        await channel.stop()
        await serving
        store.close()


async def telegram_figures(count: int) -> tuple[list[float], float]:
    """Latency (ms) of `count` sequential messages, and messages/s of `count` at once."""
    latencies: list[float] = []
    rate = 0.0
    with FakeTelegram() as telegram, tempfile.TemporaryDirectory() as home:
        os.environ.update(
            {
                "OMEGA_CHANNEL__TELEGRAM__ENABLED": "true",
                "OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS": '["*"]',
                "OMEGA_CHANNEL__TELEGRAM__API_URL": telegram.api_url,
                "TELEGRAM_BOT_TOKEN": TOKEN,
            }
        )
        runtime = bootstrap(Path(home))
        channel = TelegramChannel(runtime.config.channel.telegram)

        def replies() -> int:
            return sum(text.startswith("Noted") for text in telegram.texts())

        async def work() -> None:
            nonlocal rate
            await until(lambda: bool(telegram.calls_of("getUpdates")))
            telegram.private(1, "warm up")
            await until(lambda: replies() == 1)
            for i in range(count):
                started = time.perf_counter()
                telegram.private(1, f"sequential {i}")
                await until(lambda i=i: replies() == i + 2)  # type: ignore[misc]
                latencies.append((time.perf_counter() - started) * 1000)
            done = replies()
            started = time.perf_counter()
            for i in range(count):
                telegram.private(100 + i % 50, f"burst {i}")
            await until(lambda: replies() >= done + count, within=300)
            rate = count / (time.perf_counter() - started)

        await with_gateway(channel, Path(home), work)
    return latencies, rate


async def jsonl_latencies(count: int) -> list[float]:
    """Latency (ms) of `count` sequential messages through `--jsonl`'s channel over a pipe."""
    latencies: list[float] = []
    read_fd, write_fd = os.pipe()
    stdout = Lines()
    with tempfile.TemporaryDirectory() as home, os.fdopen(read_fd) as stdin:
        channel = JsonlChannel(stdin=stdin, stdout=stdout, default_sender="bench")

        async def work() -> None:
            os.write(write_fd, b'{"text": "warm up"}\n')
            await until(lambda: stdout.replies == 1)
            for i in range(count):
                started = time.perf_counter()
                os.write(write_fd, f'{{"text": "sequential {i}"}}\n'.encode())
                await until(lambda i=i: stdout.replies == i + 2)  # type: ignore[misc]
                latencies.append((time.perf_counter() - started) * 1000)
            os.close(write_fd)

        await with_gateway(channel, Path(home), work)
    return latencies


def describe(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(values):.1f} ms, p99 {p99:.1f} ms"


def main() -> None:
    os.environ.setdefault("OMEGA_ALLOW_ROOT", "1")
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    telegram, rate = asyncio.run(telegram_figures(count))
    jsonl = asyncio.run(jsonl_latencies(count))
    added = statistics.median(telegram) - statistics.median(jsonl)
    print(f"telegram: {count} messages at once answered at {rate:.1f} messages/s")
    print(f"telegram latency per message: {describe(telegram)}")
    print(f"--jsonl latency per message:  {describe(jsonl)}")
    print(f"added by the telegram channel (p50): {added:.1f} ms")


if __name__ == "__main__":
    main()
