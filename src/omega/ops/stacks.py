"""Where a hung Omega is stuck: with OMEGA_DUMP_STACKS set, SIGUSR1 writes the stack of the
thread the signal reached (faulthandler, from the C signal handler itself: it works even when
the event loop is blocked in C) and then, from the main thread as soon as it runs Python again,
every thread's stack and every asyncio task's chain of awaits to stderr.

Not faulthandler's `all_threads`: it walks the other threads' frames without the GIL while they
run, and a thread busy creating or dropping frames (an import, a dataclass being made) then
crashes the process (a segfault, seen in CI). `sys._current_frames()` reads them under the GIL.

The tests set it for each `omega` they start and send the signal to one that outlived its
timeout (tests/conftest.py), so the failure says where it hung; a person can do the same
(`kill -USR1 <pid>`)."""

from __future__ import annotations

import asyncio
import faulthandler
import linecache
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType
from typing import IO, Any

DUMP_ENV = "OMEGA_DUMP_STACKS"
DUMP_SIGNAL = signal.SIGUSR1
END_LINE = "omega: end of the stack dump"


def install_stack_dump() -> bool:
    """When OMEGA_DUMP_STACKS is set, dump the stacks on SIGUSR1 (see the module); True when
    installed (never off the main thread, where signal handlers cannot be set)."""
    if not os.environ.get(DUMP_ENV) or threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(DUMP_SIGNAL, _on_signal)  # runs after faulthandler's dump (chain=True)
    faulthandler.register(DUMP_SIGNAL, file=sys.stderr, all_threads=False, chain=True)
    return True


_dumping = threading.Lock()  # a signal that comes during a dump is not a second dump


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if not _dumping.acquire(blocking=False):
        return
    try:
        dump_threads(sys.stderr)
        dump_tasks(sys.stderr)
    finally:
        _dumping.release()


def dump_threads(out: IO[str]) -> None:
    """Write every thread's stack, most recent call first, read under the GIL (safe while the
    other threads run)."""
    # Not threading.enumerate(): it takes a lock that the interrupted code may hold (a handler
    # runs between any two bytecodes of the main thread). Copying the dict is atomic.
    active: dict[int, threading.Thread] = dict(getattr(threading, "_active", {}))
    names = {ident: thread.name for ident, thread in active.items()}
    for ident, frame in sorted(sys._current_frames().items()):
        out.write(f"Thread 0x{ident:016x} ({names.get(ident, '?')}, most recent call first):\n")
        for line in reversed(traceback.format_stack(frame)):
            out.write(line)
    out.flush()


def dump_tasks(out: IO[str]) -> None:
    """Write each task of the running event loop (if any) with what it awaits, innermost
    last, then END_LINE."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        out.write("omega: no event loop is running\n")
    else:
        tasks = sorted(asyncio.all_tasks(loop), key=lambda task: task.get_name())
        out.write(f"omega: {len(tasks)} asyncio tasks\n")
        for task in tasks:
            out.write(f"task {task.get_name()!r}:\n")
            for line in await_chain(task.get_coro()):
                out.write(line)
    out.write(END_LINE + "\n")
    out.flush()


def await_chain(coro: Any) -> Iterator[str]:
    """The frames of a suspended coroutine and of what it awaits, down to the future it
    waits on, as traceback lines."""
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            if not hasattr(coro, "cr_frame") and not hasattr(coro, "gi_frame"):
                yield f"  waiting on {coro!r}\n"  # a future, a gather
            return
        code = frame.f_code
        yield f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}\n'
        source = linecache.getline(code.co_filename, frame.f_lineno).strip()
        if source:
            yield f"    {source}\n"
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
