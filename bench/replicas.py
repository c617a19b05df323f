"""Throughput and latency of 1, 2 and 3 replicas of `omega start` on one PostgreSQL store.

Each replica is a real `omega start` process; they share a throwaway PostgreSQL (Debian's
binaries, as the tests start it: tests/postgres.py) and the Telegram Bot API double
(tests/fakes/telegram_server.py): the replica holding `channel:telegram` polls, every replica
claims messages from the durable inbox and sends its answers. The provider is the
OpenAI-compatible double, answering at once ("instant") or after one second ("1 s").
A burst of messages from many senders arrives at once; the figures are messages answered per
second and each message's latency from its arrival at the Bot API to its reply accepted there.
Run: .venv/bin/python bench/replicas.py [messages] [senders]
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


def describe(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(values):.0f} ms, p99 {p99:.0f} ms"


def main() -> None:
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
