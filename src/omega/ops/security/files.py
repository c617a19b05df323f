"""Checks of what lies on disk: the modes of $OMEGA_HOME and of every file holding secrets or
personal data, the backups' modes and places, and whether Omega runs as root.

A file is "loose" when its group or others have any permission bit; the fix is 0600 for a file
and 0700 for a folder, never through a symbolic link, never on a file of another account."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from omega.ops.security.model import AuditContext, Finding, Severity, milder
from omega.paths import PRIVATE_DIR_MODE, private_mode

BACKUP_PREFIX = "omega-backup-"  # the folders `omega backup` writes (ops/backup.py)
PRE_RESTORE_PREFIX = "pre-restore-"  # what `omega restore` moved aside (ops/backup.py)
# Top-level files of $OMEGA_HOME holding secrets or personal data, and how bad it is when
# others can read them (one step milder while the home folder itself is private).
SECRET_FILES: tuple[tuple[str, Severity, str], ...] = (
    ("config.toml", "critical", "API keys and tokens"),
    ("web.url", "critical", "the web page's login link"),
    ("memory.db", "high", "every conversation and fact"),
    ("memory.db-wal", "high", "recent writes of memory.db"),
    ("memory.db-shm", "high", "memory.db's shared index"),
    ("omega.log", "medium", "the log"),
    ("omega.service.log", "medium", "the service's log"),
    ("self-healing.json", "medium", "self-healing state"),
    ("backup-places", "medium", "where backups are"),
)


_wanted = private_mode  # the same owner-only modes the sandbox's guard restores


def _chmod(path: Path, new: int) -> str:
    """chmod without following a link; one line saying what changed."""
    old = os.lstat(path).st_mode
    if stat.S_ISLNK(old):
        return f"{path}: left alone (a symbolic link)"
    os.chmod(path, new)
    return f"{path}: mode {stat.S_IMODE(old):04o} -> {new:04o}"


def loose(path: Path) -> bool:
    """Whether the group or others have any permission on `path` (not following links)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISLNK(mode) and bool(mode & 0o077)


def home_private(ctx: AuditContext) -> bool:
    """Whether $OMEGA_HOME itself is closed to the group and others."""
    return not loose(ctx.paths.home)


def path_finding(
    ctx: AuditContext, check: str, path: Path, severity: Severity, what: str
) -> Finding | None:
    """A finding for one file or folder that others can reach or that is not the owner's."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    name = path.name if path.parent == ctx.paths.home else str(path)
    if ctx.euid >= 0 and info.st_uid != ctx.euid:
        return Finding(
            check,
            "high",
            f"{name} belongs to another account",
            f"{path} ({what}) is owned by uid {info.st_uid}, Omega runs as uid {ctx.euid}",
            f"chown it to the account Omega runs as: chown {ctx.euid} {path}",
            subject=name,
        )
    if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
        return None
    mode, want = stat.S_IMODE(info.st_mode), _wanted(info.st_mode)
    shielded = home_private(ctx) and path.is_relative_to(ctx.paths.home)
    return Finding(
        check,
        milder(severity) if shielded else severity,
        f"{name} can be read by others",
        f"{path} ({what}) has mode {mode:04o}"
        + ("; the home folder is private, which shields it for now" if shielded else ""),
        f"chmod {want:04o} {path}",
        subject=name,
        repair=lambda: _chmod(path, want),
    )


def tree_finding(
    ctx: AuditContext, check: str, folder: Path, severity: Severity, what: str
) -> Finding | None:
    """One finding for a folder whose entries (itself included) others can reach."""
    if not folder.is_dir() or folder.is_symlink():
        return None
    entries = [folder, *folder.rglob("*")]
    bad = [p for p in entries if loose(p)]
    if not bad:
        return None
    name = folder.name if folder.parent == ctx.paths.home else str(folder)
    shielded = home_private(ctx) and folder.is_relative_to(ctx.paths.home)

    def repair() -> str:
        done = [_chmod(p, _wanted(os.lstat(p).st_mode)) for p in bad]
        return "; ".join(done)

    return Finding(
        check,
        milder(severity) if shielded else severity,
        f"{name} can be read by others",
        f"{len(bad)} of the {len(entries)} entries of {folder} ({what}) are open to the group "
        f"or others, e.g. {bad[0]} ({stat.S_IMODE(os.lstat(bad[0]).st_mode):04o})",
        f"chmod -R go-rwx {folder}",
        subject=name,
        repair=repair,
    )


def check_home(ctx: AuditContext) -> list[Finding]:
    """$OMEGA_HOME is 0700: nobody else lists it or reaches into it."""
    home = ctx.paths.home
    try:
        mode = stat.S_IMODE(os.lstat(home).st_mode)
    except OSError:
        return []
    if not mode & 0o077:
        return []
    return [
        Finding(
            "home-mode",
            "critical" if mode & 0o022 else "high",
            "the Omega home folder is open to others",
            f"{home} has mode {mode:04o}: other accounts on this machine can "
            + ("change what is in it" if mode & 0o022 else "list it and read what is not 0600"),
            f"chmod 0700 {home}",
            repair=lambda: _chmod(home, PRIVATE_DIR_MODE),
        )
    ]


def check_secret_files(ctx: AuditContext) -> list[Finding]:
    """config.toml, memory.db and its -wal/-shm, the logs, web.url and the WhatsApp session are
    the owner's alone."""
    found = [
        path_finding(ctx, "file-modes", ctx.paths.home / name, severity, what)
        for name, severity, what in SECRET_FILES
    ]
    found.append(
        tree_finding(ctx, "file-modes", ctx.paths.whatsapp, "critical", "the WhatsApp login")
    )
    return [f for f in found if f is not None]


def check_root(ctx: AuditContext) -> list[Finding]:
    """Omega does not run as root (it refuses unless OMEGA_ALLOW_ROOT=1)."""
    if ctx.euid != 0:
        return []
    return [
        Finding(
            "process-root",
            "high",
            "Omega runs as root",
            "OMEGA_ALLOW_ROOT=1 lets Omega run as root: what it runs on your behalf starts with "
            "every right on this machine (the sandbox drops capabilities, but a mistake in a "
            "wall would cost the whole machine)",
            "run Omega as an ordinary account and unset OMEGA_ALLOW_ROOT",
        )
    ]


def backup_places(ctx: AuditContext) -> list[Path]:
    """The folders `omega backup` wrote into: $OMEGA_HOME/backups and those it remembered."""
    places = [ctx.paths.home / "backups"]
    try:
        lines = ctx.paths.backup_places.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    places += [Path(line.strip()) for line in lines if line.strip()]
    return list(dict.fromkeys(places))


def check_backups(ctx: AuditContext) -> list[Finding]:
    """Every backup (and what `omega restore` moved aside) is owner-only and out of the
    workspace, where commands the model runs could read it."""
    found: list[Finding] = []
    backups: list[Path] = []
    for place in backup_places(ctx):
        if place.is_dir():
            backups += sorted(place.glob(BACKUP_PREFIX + "*"))
    backups += sorted(ctx.paths.home.glob(PRE_RESTORE_PREFIX + "*"))
    workspace = ctx.paths.workspace.resolve()
    for folder in backups:
        tree = tree_finding(ctx, "backups", folder, "high", "config.toml and memory.db")
        if tree is not None:
            found.append(tree)
        if folder.resolve().is_relative_to(workspace):
            found.append(
                Finding(
                    "backups",
                    "high",
                    "a backup lies in the workspace",
                    f"{folder} is inside {ctx.paths.workspace}: commands the model runs can "
                    "read it, keys and memory included",
                    "move it out of the workspace (and run `omega backup` elsewhere)",
                    subject=f"{folder}:in-workspace",
                )
            )
    if not backups:
        found.append(
            Finding(
                "backups",
                "low",
                "no backup yet",
                "no `omega backup` folder was found in "
                + ", ".join(str(p) for p in backup_places(ctx)),
                "run `omega backup` (and keep a copy off this machine)",
            )
        )
    else:
        places = sorted({str(folder.parent) for folder in backups})
        found.append(
            Finding(
                "backups",
                "info",
                f"{len(backups)} backup folder(s)",
                "in " + ", ".join(places),
                subject="where",
            )
        )
    return found
