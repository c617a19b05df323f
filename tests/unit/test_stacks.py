"""omega.ops.stacks: what SIGUSR1 writes for a hung Omega (every asyncio task with its chain of
awaits, innermost last), and that nothing is installed unless OMEGA_DUMP_STACKS asks."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import omega
from omega.ops.stacks import DUMP_SIGNAL, END_LINE, dump_tasks, install_stack_dump

SRC = str(Path(omega.__file__).resolve().parents[1])


async def _innermost(gate: asyncio.Event) -> None:
    await gate.wait()


async def _outer(gate: asyncio.Event) -> None:
    await _innermost(gate)


@pytest.mark.no_store
def test_each_task_is_written_with_its_chain_of_awaits() -> None:
    async def scenario() -> str:
        gate = asyncio.Event()
        task = asyncio.create_task(_outer(gate), name="stuck-one")
        await asyncio.sleep(0)
        out = io.StringIO()
        dump_tasks(out)
        gate.set()
        await task
        return out.getvalue()

    text = asyncio.run(scenario())
    stuck = text[text.index("task 'stuck-one':") :]
    assert stuck.index("in _outer") < stuck.index("in _innermost") < stuck.index("in wait")
    assert "await _innermost(gate)" in stuck  # the source line of each frame
    assert text.rstrip().endswith(END_LINE)


@pytest.mark.no_store
def test_without_the_variable_nothing_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMEGA_DUMP_STACKS", raising=False)
    assert install_stack_dump() is False
    out = io.StringIO()
    dump_tasks(out)  # outside a loop it says so
    assert out.getvalue().startswith("omega: no event loop is running")


CHURN = """
import dataclasses, os, sys, threading, time
from omega.ops.stacks import install_stack_dump
assert install_stack_dump()
def deep(n):
    if n == 0:
        return dataclasses.make_dataclass("C", [("a", int), ("b", str)])
    return deep(n - 1)
def churn():
    while True:
        deep(30)
for _ in range(3):
    threading.Thread(target=churn, name="churner", daemon=True).start()
print("ready", flush=True)
time.sleep(120)
"""


@pytest.mark.no_store
def test_dumps_while_other_threads_make_and_drop_frames_never_crash_the_process(
    tmp_path: Path,
) -> None:
    """faulthandler's all-threads dump read running threads' frames without the GIL and
    segfaulted within ~15 signals here (and once in CI); the dump must leave Omega running."""
    err_path = tmp_path / "stderr"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHURN],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=dict(os.environ, OMEGA_DUMP_STACKS="1", PYTHONPATH=SRC),
        )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for _ in range(150):
            proc.send_signal(DUMP_SIGNAL)
            time.sleep(0.01)
            assert proc.poll() is None, err_path.read_text()[-3000:]
        deadline = time.monotonic() + 30
        while not err_path.read_text().rstrip().endswith(END_LINE):  # the last dump finished
            assert time.monotonic() < deadline and proc.poll() is None, err_path.read_text()[-3000:]
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    dumps = err_path.read_text()
    assert dumps.count(END_LINE) >= 1
    assert "(churner, most recent call first)" in dumps and "in deep" in dumps
