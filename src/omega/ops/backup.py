"""`omega backup` and `omega restore`.

A backup is a folder `omega-backup-YYYYmmdd-HHMMSS/` (0700) holding a consistent copy of
memory.db made with SQLite's online backup API (safe while Omega runs; absent when Omega has not
stored anything yet, which is no reason to lose the rest), config.toml, the
owner's own files (SYSTEM_PROMPT.md, WELCOME.toml, HEARTBEAT.md, skills/, projects/, tools/),
all 0600, and `manifest.json` (Omega version, schema version, sha256 of every file). The
workspace is not included: it is the agent's scratch space and can be large. Every folder
backups were written into is listed in `$OMEGA_HOME/backup-places`; the OS sandbox keeps the
`omega-backup-*` folders found there closed to commands in every confined mode.

Restoring checks the backup (manifest, hashes, SQLite integrity, schema not newer than this
Omega), refuses while Omega runs on the home, moves what it replaces aside into
`pre-restore-<stamp>/`, then puts the backup in place and migrates it forward if older.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from omega import __version__
from omega.errors import OmegaError
from omega.memory.migrations import latest_version, schema_version
from omega.ops.runlock import exclusive
from omega.paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, OmegaPaths, write_private

MANIFEST = "manifest.json"
DB_NAME = "memory.db"
# Top-level files and folders of $OMEGA_HOME a backup carries besides memory.db.
FILES = ("config.toml", "SYSTEM_PROMPT.md", "WELCOME.toml", "HEARTBEAT.md")
FOLDERS = ("skills", "projects", "tools")


class BackupError(OmegaError):
    """A backup could not be written or read; the message says why."""


@dataclass(frozen=True)
class BackupInfo:
    """What a backup holds."""

    path: Path
    created_at: str
    version: str
    schema: int
    files: dict[str, str]  # relative path -> sha256


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S")


def _copy_db(source: Path, target: Path) -> int:
    """A consistent copy through the online backup API; returns its schema version."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    os.close(fd)
    src = sqlite3.connect(source, timeout=10.0)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
        version = schema_version(dst)
        dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
    finally:
        dst.close()
        src.close()
    return version


def _private_tree(folder: Path) -> None:
    for root, dirs, files in os.walk(folder):
        os.chmod(root, PRIVATE_DIR_MODE)
        for name in dirs:
            os.chmod(Path(root) / name, PRIVATE_DIR_MODE)
        for name in files:
            os.chmod(Path(root) / name, PRIVATE_FILE_MODE)


def _remember_place(paths: OmegaPaths, destination: Path) -> None:
    """Add `destination` to the folders the OS sandbox keeps closed (its backups inside)."""
    place = os.path.realpath(destination)
    try:
        known = paths.backup_places.read_text(encoding="utf-8").splitlines()
    except OSError:
        known = []
    if place not in known:
        write_private(paths.backup_places, "".join(f"{p}\n" for p in [*known, place]))


def create_backup(paths: OmegaPaths, destination: Path) -> BackupInfo:
    """Write a new timestamped backup folder under `destination` (created if needed) with
    whatever of memory.db, the config and the owner's files exists."""
    present = [n for n in (DB_NAME, *FILES) if (paths.home / n).is_file()]
    present += [n for n in FOLDERS if (paths.home / n).is_dir()]
    if not present:
        raise BackupError(f"{paths.home} holds no Omega files: nothing to back up yet")
    destination.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    base = destination / f"omega-backup-{_stamp()}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    folder.mkdir(mode=PRIVATE_DIR_MODE)
    _remember_place(paths, destination)
    schema = _copy_db(paths.db, folder / DB_NAME) if paths.db.is_file() else 0
    for name in FILES:
        if (paths.home / name).is_file():
            shutil.copy2(paths.home / name, folder / name)
    for name in FOLDERS:
        if (paths.home / name).is_dir():
            shutil.copytree(paths.home / name, folder / name, symlinks=True)
    _private_tree(folder)
    files = {
        str(p.relative_to(folder)): _sha256(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
    info = BackupInfo(
        folder, datetime.now().isoformat(timespec="seconds"), __version__, schema, files
    )
    manifest = {
        "omega_version": info.version,
        "schema_version": info.schema,
        "created_at": info.created_at,
        "files": info.files,
    }
    fd = os.open(folder / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2)
    return info


def read_backup(folder: Path) -> BackupInfo:
    """Check a backup folder (manifest, hashes, database integrity and schema) and describe it."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in data["files"].items()}
        info = BackupInfo(
            folder,
            str(data["created_at"]),
            str(data["omega_version"]),
            int(data["schema_version"]),
            files,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BackupError(f"{folder}: not an Omega backup ({exc})") from None
    for name, digest in files.items():
        path = folder / name
        if ".." in Path(name).parts or not path.is_file():
            raise BackupError(f"{folder}: {name} is missing")
        if _sha256(path) != digest:
            raise BackupError(f"{folder}: {name} does not match its checksum (damaged?)")
    if DB_NAME not in files:
        return info  # made before Omega stored anything: config and the owner's files only
    conn = sqlite3.connect(f"file:{folder / DB_NAME}?mode=ro", uri=True)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        schema = schema_version(conn)
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{folder}: {DB_NAME} is not a usable database ({exc})") from None
    finally:
        conn.close()
    if check != "ok":
        raise BackupError(f"{folder}: {DB_NAME} fails SQLite's integrity check: {check}")
    if schema > latest_version():
        raise BackupError(
            f"{folder}: the backup is at schema version {schema}, newer than this Omega "
            f"knows ({latest_version()}); upgrade Omega first"
        )
    return info


def restore_backup(paths: OmegaPaths, folder: Path) -> Path:
    """Put a backup in place of the current files; returns the folder the replaced files were
    moved to. Raises BackupError (bad backup) or OmegaRunningError (Omega uses this home)."""
    info = read_backup(folder)
    paths.home.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    with exclusive(paths.home):
        aside = paths.home / f"pre-restore-{_stamp()}"
        aside.mkdir(mode=PRIVATE_DIR_MODE)
        replaced = [DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", *FILES, *FOLDERS]
        for name in replaced:
            if (paths.home / name).exists():
                os.replace(paths.home / name, aside / name)
        for name in info.files:
            target = paths.home / name
            target.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
            shutil.copy2(folder / name, target)
            os.chmod(target, PRIVATE_FILE_MODE)
        for name in FOLDERS:
            if (paths.home / name).is_dir():
                _private_tree(paths.home / name)
    return aside
