"""Throughput and latency of 1, 2 and 3 replicas of `omega start` on one PostgreSQL store.

Each replica is a real `omega start` process; they share a throwaway PostgreSQL (Debian's
binaries, as the tests start it: tests/postgres.py) and the Telegram Bot API double
(tests/fakes/telegram_server.py): the replica holding `channel:telegram` polls, every replica
claims messages from the durable inbox and sends its answers. The provider is the
OpenAI-compatible double, answering at once ("instant") or after one second ("1 s").
A burst of messages from many senders arrives at once; the figures are messages answered per
second and each message's latency from its arrival at the Bot API to its reply accepted there.
The hand-off latency (one replica receives, another starts it) is measured first, with the
0.3 s poll alone and with LISTEN/NOTIFY wake-ups.
Run: .venv/bin/python bench/replicas.py [messages] [senders]   (--handoff: only the hand-off)
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.telegram_server import TOKEN, FakeTelegram  # noqa: E402
from tests.postgres import running_server  # noqa: E402

OMEGA = str(Path(sys.executable).with_name("omega"))
FIRST_USER = 7_000_001


def replica_env(
    home: Path, url: str, telegram: FakeTelegram, provider: FakeOpenAI, senders: int
) -> dict[str, str]:
    users = ", ".join(str(FIRST_USER + n) for n in range(senders))
    return dict(
        os.environ,
        OMEGA_HOME=str(home),
        OMEGA_ALLOW_ROOT="1",
        OMEGA_STORE_URL=url,
        OMEGA_STORE__LEASE_SECONDS="3",
        OMEGA_PROVIDER__DEFAULT="openai",
        OMEGA_PROVIDER__OPENAI__BASE_URL=provider.base_url,
        OMEGA_PROVIDER__OPENAI__API_KEY="sk-bench-0123456789",
        OMEGA_PROVIDER__OPENAI__MODEL="bench",
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_CHANNEL__TELEGRAM__ENABLED="true",
        OMEGA_CHANNEL__TELEGRAM__API_URL=telegram.api_url,
        OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS=f"[{users}]",
        OMEGA_MEMORY__IDLE_MINUTES="600",
        OMEGA_HEARTBEAT__ENABLED="false",
        TELEGRAM_BOT_TOKEN=TOKEN,
    )


def run(
    replicas: int, delay: float, messages: int, senders: int, sqlite: bool = False
) -> tuple[float, list[float]]:
    """Messages per second and per-message latencies (ms) for one configuration (`sqlite`:
    one replica on memory.db instead, the baseline)."""
    with (
        running_server() as server,
        FakeTelegram() as telegram,
        FakeOpenAI() as provider,
        tempfile.TemporaryDirectory() as folder,
    ):
        provider.default_delay = delay
        url = server.new_database()
        procs = []
        for n in range(replicas):
            home = Path(folder) / f"replica-{n}"
            env = replica_env(home, url, telegram, provider, senders)
            if sqlite:
                del env["OMEGA_STORE_URL"]
            procs.append(
                subprocess.Popen(
                    [OMEGA, "start"],
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        try:
            telegram.wait_for(lambda: telegram.calls_of("getUpdates"), timeout=120)
            time.sleep(2.0)  # every replica up and polling the inbox
            arrived: dict[str, float] = {}
            started = time.monotonic()
            for i in range(messages):
                arrived[f"bench {i}"] = time.monotonic()
                telegram.private(FIRST_USER + i % senders, f"bench {i}")

            def answered() -> dict[str, float]:
                found: dict[str, float] = {}
                for call in telegram.sent():
                    text = str(call.params.get("_visible", ""))
                    if text.startswith("echo: bench "):
                        found.setdefault(text[len("echo: ") :], call.at)
                return found

            telegram.wait_for(lambda: len(answered()) >= messages, timeout=900)
            replies = answered()
            elapsed = max(replies.values()) - started
            latencies = [(at - arrived[text]) * 1000 for text, at in replies.items()]
            return messages / elapsed, latencies
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()


def handoff(wake: bool, messages: int = 60, poll: float = 0.3) -> list[float]:
    """Milliseconds from a message put in the inbox by one replica to another replica's poll
    loop claiming it (the gateway's loop: wait for a wake-up or `poll` seconds, then claim),
    with LISTEN/NOTIFY wake-ups (`wake`) or the poll alone. Two store connections on a real
    PostgreSQL; messages arrive at random moments."""
    import asyncio
    import random

    from omega.memory import Store
    from omega.memory.wakeups import INBOX, wait_for
    from omega.types import IncomingMessage

    with running_server() as server:
        url = server.new_database()
        sender, taker = Store(url), Store(url)

        async def scenario() -> list[float]:
            woken = taker.wake_event(INBOX) if wake else None
            put_at: dict[str, float] = {}
            took: list[float] = []

            async def take() -> None:
                while len(took) < messages:
                    await wait_for(woken, poll)
                    claims = await taker.call(taker.inbox_claim, "taker", 30.0, ["telegram"], 50)
                    now = time.perf_counter()
                    took.extend((now - put_at[c.message.id]) * 1000 for c in claims)

            taking = asyncio.create_task(take())
            await asyncio.sleep(1.0)  # the listener connected
            for n in range(messages):
                await asyncio.sleep(random.uniform(0.05, 0.4))
                message = IncomingMessage(
                    "telegram", str(n), "hi", id=f"h{n}", assurance="platform"
                )
                put_at[message.id] = time.perf_counter()
                await sender.call(sender.inbox_put, message, "sender")
            await asyncio.wait_for(taking, 30)
            return took

        try:
            return asyncio.run(scenario())
        finally:
            sender.close()
            taker.close()


def describe(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(values):.0f} ms, p99 {p99:.0f} ms"


def main() -> None:
    print("hand-off: a message put by one replica, claimed by another's poll loop")
    print(f"  poll every 0.3 s (before): {describe(handoff(wake=False))}")
    print(f"  LISTEN/NOTIFY wake-ups:     {describe(handoff(wake=True))}")
    if "--handoff" in sys.argv:
        return
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    senders = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    for label, delay in (("instant", 0.0), ("1 s", 1.0)):
        rate, latencies = run(1, delay, messages, senders, sqlite=True)
        print(
            f"{label} provider, 1 process on SQLite (baseline): {rate:.1f} messages/s, "
            f"{describe(latencies)}"
        )
        for replicas in (1, 2, 3):
            rate, latencies = run(replicas, delay, messages, senders)
            print(
                f"{label} provider, {replicas} replica(s): {messages} messages from {senders} "
                f"senders at once: {rate:.1f} messages/s, {describe(latencies)}"
            )


if __name__ == "__main__":
    main()
