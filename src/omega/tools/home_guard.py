"""Omega's own files against a command that changes their modes. Without bubblewrap's namespace
(Landlock alone, `rwx`, a degraded system) a command can `chmod` files it cannot open, Omega's
included: Landlock does not cover chmod, chown, utime or setxattr. Around every such command
Omega notes the mode and owner of $OMEGA_HOME, each of its entries but the workspace, and its
backups elsewhere (a scandir and an lstat each), and afterwards puts back any a command opened
to others or closed to Omega (owner-only, as `omega security audit --fix` does), logs it,
audits it (`sandbox_mode_repaired`) and alerts the owner; one it cannot put back is urgent.

Only what changed while the command ran is touched: a mode the owner chose earlier is the
audit's to report, not the model's doing."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from omega.paths import OWNER_BITS, private_mode

if TYPE_CHECKING:
    from omega.memory import Store
    from omega.sandbox import Sandbox

log = logging.getLogger(__name__)

EVENT = "sandbox_mode_repaired"
Mark = tuple[int, int, int]  # st_mode, st_uid, st_gid
_SPECIAL = 0o7000  # setuid, setgid, sticky


@dataclass(frozen=True)
class Repair:
    """One path a command changed: what it was, what it was found as, whether it is put back."""

    path: str
    before: int
    found: int
    restored: bool
    note: str = ""

    def line(self) -> str:
        """One line for the log, the audit row and the alert."""
        done = "restored" if self.restored else f"NOT restored ({self.note})"
        found = "unreadable" if self.found < 0 else f"{stat.S_IMODE(self.found):04o}"
        return f"{self.path}: {stat.S_IMODE(self.before):04o} -> {found}, {done}"


def watched(home: Path, workspace: Path, backups: Sequence[str] = ()) -> list[str]:
    """$OMEGA_HOME first, then its entries but the workspace (config.toml, memory.db and its
    -wal/-shm, logs, the run lock, web.url, health files, skills/...), then each backup
    outside it with its entries."""
    found = [str(home)]
    skip = {workspace.name} if workspace.parent == home else set()
    for folder, excluded in ((str(home), skip), *((b, set()) for b in backups)):
        if folder != str(home):
            found.append(folder)
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            found += [e.path for e in entries if e.name not in excluded]
    return found


def _mark(path: str) -> Mark | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_mode, info.st_uid, info.st_gid


def snapshot(paths: Sequence[str]) -> dict[str, Mark]:
    """The mode and owner of each path that exists (an lstat each)."""
    marks = {}
    for path in paths:
        mark = _mark(path)
        if mark is not None:
            marks[path] = mark
    return marks


def tampered(before: Mark, now: Mark) -> bool:
    """Whether `now` opens the path to others (or sets special bits), closes it to its owner,
    or gives it another owner or group, compared with `before`."""
    widened = now[0] & (0o077 | _SPECIAL) & ~before[0]
    narrowed = before[0] & OWNER_BITS & ~now[0]
    return bool(widened or narrowed) or now[1:] != before[1:]


def _restore(path: str, before: Mark, now: Mark) -> Repair:
    """Owner-only again (the owner's bits it had, at least rw / rwx) and its owner and group
    back, never through a symbolic link."""
    if stat.S_ISLNK(now[0]) or stat.S_IFMT(now[0]) != stat.S_IFMT(before[0]):
        return Repair(path, before[0], now[0], False, "replaced by another kind of file")
    target = (before[0] & OWNER_BITS) | private_mode(before[0])
    try:
        if now[1:] != before[1:]:
            os.chown(path, before[1], before[2], follow_symlinks=False)
        os.chmod(path, target)
    except OSError as exc:
        return Repair(path, before[0], now[0], False, exc.strerror or type(exc).__name__)
    after = _mark(path)
    ok = after is not None and stat.S_IMODE(after[0]) == target and after[1:] == before[1:]
    return Repair(path, before[0], now[0], ok, "" if ok else "still changed")


def check(before: dict[str, Mark]) -> list[Repair]:
    """Compare each path with `before` and put back the ones a command changed (in order, so
    $OMEGA_HOME comes back before its entries can be looked at); one gone is left alone, one
    that can no longer be looked at is reported unrestored."""
    repairs = []
    for path, was in before.items():
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue  # removed by Omega itself (memory.db-wal at a checkpoint, web.url)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            repairs.append(Repair(path, was[0], -1, False, f"cannot be looked at: {why}"))
            continue
        now = (info.st_mode, info.st_uid, info.st_gid)
        if tampered(was, now):
            repairs.append(_restore(path, was, now))
    return repairs


def alert_text(repairs: Sequence[Repair], what: str) -> str:
    """The owner's alert: which of Omega's files a command changed, and what was done."""
    lines = "; ".join(r.line() for r in repairs)
    if all(r.restored for r in repairs):
        return (
            f"Warning: {what} changed the permissions of Omega's own files (an attempt to open "
            f"them to other accounts or to lock Omega out); they were put back: {lines}. "
            "Install bubblewrap so commands cannot reach them at all."
        )
    return (
        f"URGENT: {what} changed the permissions of Omega's own files and some could NOT be "
        f"put back: {lines}. Check them now (omega security audit --fix)."
    )


async def record(
    repairs: Sequence[Repair], store: Store | None, what: str, call: str, who: tuple[str, str]
) -> None:
    """Log the repairs, audit them (`sandbox_mode_repaired`) and keep an owner alert."""
    if not repairs:
        return
    from omega.memory import AuditEntry  # only when something was changed

    urgent = not all(r.restored for r in repairs)
    detail = f"tool call {call or '?'}: " + "; ".join(r.line() for r in repairs)
    (log.error if urgent else log.warning)("%s changed Omega's file modes: %s", what, detail)
    if store is None:
        return
    entry = AuditEntry(
        channel=who[0] or "sandbox",
        sender_id=who[1] or "owner",
        status="error" if urgent else "denied",
        input_text=what,
        detail=detail,
        event=EVENT,
    )
    try:
        await store.call(store.audit, entry)
        await store.call(store.keep_owner_alert, alert_text(repairs, what))
    except Exception:
        log.exception("could not record the repaired file modes: %s", detail)


@contextlib.asynccontextmanager
async def guarded(
    sandbox: Sandbox,
    store: Store | None,
    what: str,
    call: str = "",
    who: tuple[str, str] = ("", ""),
) -> AsyncIterator[None]:
    """Around one command started through `sandbox`: nothing where its walls hide
    $OMEGA_HOME (bubblewrap's namespace, Seatbelt), else the modes checked after it."""
    if not sandbox.home_exposed:
        yield
        return
    paths = watched(sandbox.paths.home, sandbox.paths.workspace, sandbox.layout.backups)
    before = snapshot(paths)
    try:
        yield
    finally:
        await record(check(before), store, what, call, who)
