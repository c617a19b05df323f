"""Where a hung Omega is stuck: with OMEGA_DUMP_STACKS set, SIGUSR1 writes every thread's
stack (faulthandler, from the signal handler itself: it works even when the event loop is
blocked) and then every asyncio task's chain of awaits (from the main thread, as soon as it
runs Python again) to stderr. The tests set it for each `omega` they start and send the
signal to one that outlived its timeout (tests/conftest.py), so the failure says where it
hung; a person can do the same (`kill -USR1 <pid>`)."""

from __future__ import annotations

import asyncio
import faulthandler
import linecache
import os
import signal
import sys
import threading
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
    faulthandler.register(DUMP_SIGNAL, file=sys.stderr, all_threads=True, chain=True)
    return True


def _on_signal(signum: int, frame: FrameType | None) -> None:
    dump_tasks(sys.stderr)


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
