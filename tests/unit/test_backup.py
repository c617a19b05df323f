"""Backup and restore: a consistent copy made while the database is in use, checked on the way
back, refused while Omega runs, and what it replaces kept aside."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omega.memory import Store
from omega.memory.migrations import latest_version
from omega.ops.backup import BackupError, create_backup, read_backup, restore_backup
from omega.ops.runlock import LOCK_NAME, OmegaRunningError, exclusive, hold_running
from omega.paths import OmegaPaths

# memory.db is the SQLite file; a PostgreSQL store is backed up with pg_dump.
pytestmark = pytest.mark.sqlite_only


def _home(tmp_path: Path) -> OmegaPaths:
    paths = OmegaPaths(tmp_path / "home")
    paths.ensure()
    return paths


def _messages(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
    finally:
        conn.close()


def test_backup_is_consistent_while_the_store_is_open(tmp_path: Path) -> None:
    paths = _home(tmp_path)
    paths.config.write_text('[omega]\nname = "Zed"\n')
    (paths.skills / "mine").mkdir()
    (paths.skills / "mine" / "SKILL.md").write_text("---\nname: mine\n---\nDo it.\n")
    store = Store(paths.db)
    try:
        for i in range(5):
            store.store_exchange("terminal", "ana", f"question {i}", f"answer {i}")
        # the rows are in the WAL, not yet in memory.db itself
        assert Path(str(paths.db) + "-wal").stat().st_size > 0
        info = create_backup(paths, tmp_path / "backups")
    finally:
        store.close()
    folder = info.path
    assert folder.parent == tmp_path / "backups" and folder.name.startswith("omega-backup-")
    assert _messages(folder / "memory.db") == 10
    assert not Path(str(folder / "memory.db") + "-wal").exists()
    assert info.schema == latest_version()
    assert set(info.files) == {"memory.db", "config.toml", "skills/mine/SKILL.md"}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in [*info.files, "manifest.json"]:
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["schema_version"] == latest_version()
    assert read_backup(folder).files == info.files


def test_a_damaged_or_newer_backup_is_refused(tmp_path: Path) -> None:
    paths = _home(tmp_path)
    Store(paths.db).close()
    folder = create_backup(paths, tmp_path / "b").path
    # damage: one byte changed
    with (folder / "memory.db").open("r+b") as handle:
        handle.seek(200)
        byte = handle.read(1)
        handle.seek(200)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(BackupError, match="checksum"):
        read_backup(folder)
    # newer schema than this Omega knows, with a manifest that matches
    newer = create_backup(paths, tmp_path / "c").path
    conn = sqlite3.connect(newer / "memory.db")
    conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'now')")
    conn.commit()
    conn.close()
    manifest = json.loads((newer / "manifest.json").read_text())
    manifest["files"]["memory.db"] = hashlib.sha256((newer / "memory.db").read_bytes()).hexdigest()
    (newer / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BackupError, match="newer"):
        read_backup(newer)
    with pytest.raises(BackupError, match="not an Omega backup"):
        read_backup(tmp_path)


def test_restore_puts_the_backup_back_and_keeps_what_it_replaced(tmp_path: Path) -> None:
    paths = _home(tmp_path)
    paths.config.write_text('[omega]\nname = "Before"\n')
    store = Store(paths.db)
    store.store_exchange("terminal", "ana", "kept", "yes")
    store.close()
    folder = create_backup(paths, tmp_path / "b").path
    store = Store(paths.db)
    store.store_exchange("terminal", "ana", "after the backup", "gone after restore")
    store.close()
    paths.config.write_text('[omega]\nname = "After"\n')

    aside = restore_backup(paths, folder)

    assert _messages(paths.db) == 2
    assert 'name = "Before"' in paths.config.read_text()
    assert stat.S_IMODE(paths.config.stat().st_mode) == 0o600
    assert _messages(aside / "memory.db") == 4
    assert 'name = "After"' in (aside / "config.toml").read_text()
    Store(paths.db).close()  # opens and migrates as usual


def test_restore_is_refused_while_omega_runs(tmp_path: Path) -> None:
    paths = _home(tmp_path)
    Store(paths.db).close()
    folder = create_backup(paths, tmp_path / "b").path
    # another process holds the run lock, as `omega start` does
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from omega.ops.runlock import "
            "hold_running; hold_running(Path(sys.argv[1])); print('held', flush=True); "
            "time.sleep(60)",
            str(paths.home),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(OmegaRunningError, match=f"pid {holder.pid}"):
            restore_backup(paths, folder)
        assert not list(paths.home.glob("pre-restore-*"))  # nothing was touched
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.05)
    restore_backup(paths, folder)  # the lock died with its process


@pytest.mark.no_store
def test_running_instances_share_the_lock(tmp_path: Path) -> None:
    home = tmp_path
    first = hold_running(home)
    second = hold_running(home)  # a second `omega chat` on the same home is allowed
    try:
        with pytest.raises(OmegaRunningError), exclusive(home):
            pass
    finally:
        os.close(first)
        os.close(second)
    with exclusive(home):
        assert (home / LOCK_NAME).exists()
