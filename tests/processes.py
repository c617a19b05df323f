"""The test's own descendant processes, found in /proc: an MCP server Omega started (inside its
sandbox), to kill it the way a crash would, and to await its end (a pidfd: no polling)."""

from __future__ import annotations

import os
import select
import signal
from pathlib import Path


def _parent(pid: int) -> int:
    """The parent of `pid` (0 when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _descends_from_me(pid: int) -> bool:
    me, seen = os.getpid(), 0
    while pid > 1 and seen < 64:
        pid, seen = _parent(pid), seen + 1
        if pid == me:
            return True
    return False


def running_scripts(script: Path) -> list[int]:
    """This test's processes running `script` itself (python with the script as its program;
    not the sandbox's launchers that carry it in their argument lists), oldest first."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        argv = _cmdline(pid)
        runs_it = len(argv) >= 2 and "python" in Path(argv[0]).name and argv[1] == str(script)
        if runs_it and _descends_from_me(pid):
            found.append(pid)
    return sorted(found)


def kill_and_wait(pid: int, sig: int = signal.SIGKILL, timeout: float = 20.0) -> None:
    """Send `sig` to `pid` and wait until it has exited."""
    fd = os.pidfd_open(pid)
    try:
        os.kill(pid, sig)
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"process {pid} did not exit within {timeout} s"
    finally:
        os.close(fd)


def gone(pid: int) -> bool:
    """Whether `pid` has exited (a zombie counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")
