"""The run lock: a running Omega holds a shared lock on $OMEGA_HOME/omega.lock; work that must
not happen under it (restoring a backup) takes it exclusively. A flock dies with its process,
so a crash never leaves a stale lock behind."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from omega.errors import OmegaError

LOCK_NAME = "omega.lock"


class OmegaRunningError(OmegaError):
    """Another Omega process uses this $OMEGA_HOME."""


def _open(home: Path) -> int:
    return os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)


def hold_running(home: Path) -> int:
    """Mark this process as running Omega on `home` until it exits; returns the lock's fd."""
    fd = _open(home)
    fcntl.flock(fd, fcntl.LOCK_SH)
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


@contextlib.contextmanager
def exclusive(home: Path) -> Iterator[None]:
    """Hold `home` alone; OmegaRunningError (with the pid when known) while Omega runs."""
    fd = _open(home)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
            raise OmegaRunningError(
                f"Omega is running on {home}" + (f" (pid {pid})" if pid else "")
            ) from None
        yield
    finally:
        os.close(fd)
