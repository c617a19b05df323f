"""What PostgreSQL adds per turn over SQLite: the same sequential turns through the real
JSON-lines channel, gateway and pipeline (an in-process instant provider), once with memory.db
and once with a PostgreSQL store on loopback (a throwaway server from Debian's binaries, as the
tests start it: tests/postgres.py). Also the raw cost of the store calls one turn makes.
Run: .venv/bin/python bench/store_engines.py [turns]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import running_server  # noqa: E402

from bench.telegram_channel import describe, jsonl_latencies  # noqa: E402
from omega.memory import Store  # noqa: E402
from omega.memory.db import STORE_URL_ENV  # noqa: E402
from omega.types import IncomingMessage  # noqa: E402


def store_calls(store: Store, count: int) -> list[float]:
    """Milliseconds for the store work of one turn: inbox in, exchange kept, audit, done."""
    timings = []
    for i in range(count):
        started = time.perf_counter()
        message = IncomingMessage(channel="cli", sender_id=f"s{i % 20}", text=f"hi {i}", id=f"b{i}")
        store.inbox_put(message)
        store.inbox_begin(message.id)
        store.recent_messages("cli", message.sender_id, 30)
        store.search_messages(message.sender_id, "what did I say about lisbon")
        store.store_exchange("cli", message.sender_id, message.text, "Noted.")
        store.inbox_finish(message.id)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def main() -> None:
    os.environ.setdefault("OMEGA_ALLOW_ROOT", "1")
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    os.environ.pop(STORE_URL_ENV, None)
    sqlite_turns = asyncio.run(jsonl_latencies(count))
    with tempfile.TemporaryDirectory() as folder:
        sqlite_store = Store(Path(folder) / "memory.db", exact=True)
        sqlite_calls = store_calls(sqlite_store, count)
        sqlite_store.close()
    with running_server() as server:
        os.environ[STORE_URL_ENV] = server.new_database()
        postgres_turns = asyncio.run(jsonl_latencies(count))
        postgres_store = Store(server.new_database(), exact=True)
        postgres_calls = store_calls(postgres_store, count)
        postgres_store.close()
        os.environ.pop(STORE_URL_ENV, None)
    print(f"turn through --jsonl, SQLite:     {describe(sqlite_turns)}")
    print(f"turn through --jsonl, PostgreSQL: {describe(postgres_turns)}")
    added = statistics.median(postgres_turns) - statistics.median(sqlite_turns)
    print(f"added by PostgreSQL per turn (p50): {added:.1f} ms")
    print(f"one turn's store calls, SQLite:     {describe(sqlite_calls)}")
    print(f"one turn's store calls, PostgreSQL: {describe(postgres_calls)}")


if __name__ == "__main__":
    main()
