"""Where a hung `omega` was stuck: every `omega` the tests start may be asked for its stacks
(OMEGA_DUMP_STACKS, omega.ops.stacks); one that outlives its timeout is asked (SIGUSR1),
then killed, and the test's failure shows the dump."""

from __future__ import annotations

import contextlib
import subprocess

from omega.ops.stacks import DUMP_ENV, DUMP_SIGNAL, END_LINE

DUMP_ENV_VARS = {DUMP_ENV: "1", "PYTHONFAULTHANDLER": "1"}  # and a crash's traceback
DUMP_WAIT_SECS = 10.0  # for the dump to be written (a busy machine), then it is killed
TAIL_CHARS = 30_000


def text(data: str | bytes | None) -> str:
    """Output as text, whether it came from a text or a bytes pipe (or none)."""
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def dump_and_kill(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ask a hung `omega` run by `communicate` for its stacks, wait until they are written
    (or DUMP_WAIT_SECS), kill it; its whole stdout and stderr."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(DUMP_SIGNAL)
    waited = 0.0
    while waited < DUMP_WAIT_SECS:
        try:
            out, err = proc.communicate(timeout=0.25)  # it ended after all
            return text(out), text(err)
        except subprocess.TimeoutExpired as partial:  # the output so far comes with it
            if END_LINE in text(partial.stderr):
                break
        waited += 0.25
    proc.kill()
    out, err = proc.communicate()
    return text(out), text(err)


def hung_report(what: str, timeout: float, stdout: str, stderr: str) -> str:
    """The failure message for an `omega` killed after `timeout`: its stderr's tail (the
    stacks) and stdout's."""
    return (
        f"{what} was still running after {timeout:g}s and was killed; where it was (its "
        f"stderr, with the stack dump):\n{stderr[-TAIL_CHARS:]}\n"
        f"--- its stdout:\n{stdout[-4000:]}"
    )
