"""Replicas started together on a fresh (or older) memory.db: they migrate it one at a time,
and every one of them opens it (none fails on a migration another just applied)."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

from omega.memory import Store

REPLICAS = 4


def open_store(path: Path, together: Barrier, results: multiprocessing.Queue[str]) -> None:
    together.wait()
    try:
        Store(path).close()
        results.put("ok")
    except Exception as exc:
        results.put(f"{type(exc).__name__}: {exc}")


def test_replicas_started_together_all_open_a_fresh_database(tmp_path: Path) -> None:
    forked = multiprocessing.get_context("fork")
    for round_number in range(5):
        path = tmp_path / f"memory-{round_number}.db"
        together = forked.Barrier(REPLICAS)
        results: multiprocessing.Queue[str] = forked.Queue()
        processes = [
            forked.Process(target=open_store, args=(path, together, results))
            for _ in range(REPLICAS)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(60)
        assert sorted(results.get(timeout=5) for _ in processes) == ["ok"] * REPLICAS
