"""Ending a process started through the sandbox launcher, and everything it started.

The launcher leads its own process group (start_new_session=True), but what a command started
with `setsid` or a double fork has left that group: only the launcher, a subreaper, finds it
(omega.sandbox.reaper). So the launcher is asked first (`ABORT_SIGNAL`: it kills the command
and all its descendants), and only after `grace` is the group SIGKILLed. A SIGKILL at once
would cut the launcher short and leave those orphans running under init."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from omega.sandbox.reaper import ABORT_SIGNAL


async def stop_launched(process: asyncio.subprocess.Process, grace: float) -> None:
    """End `process` (a launcher) and all it started: abort, wait up to `grace`, then SIGKILL
    its group and reap it. Cancelled meanwhile, the group is killed after the grace all the
    same, unless the launcher has ended by then."""
    if process.returncode is None:  # not reaped yet: its pid is still its own
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, ABORT_SIGNAL)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), grace)
        except asyncio.CancelledError:
            # Cancelled again (a cancel scope repeats it): a SIGKILL now would cut the
            # launcher short while it kills what left the group.
            asyncio.get_running_loop().call_later(grace, kill_group, process, True)
            raise
    kill_group(process)
    with contextlib.suppress(TimeoutError):  # SIGKILLed: it ends at once, unless stuck in I/O
        await asyncio.wait_for(process.wait(), grace)


def kill_group(process: asyncio.subprocess.Process, unless_ended: bool = False) -> None:
    """SIGKILL the process group `process` leads; with `unless_ended`, not once it has been
    reaped (its pid may be another's by then)."""
    if unless_ended and process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)
