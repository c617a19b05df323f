"""Migrations: fresh database, re-runs, atomicity and refusal of a newer schema."""

from __future__ import annotations

import sqlite3
import stat
from importlib.resources.abc import Traversable
from pathlib import Path

import pytest

from omega.memory import SchemaTooNewError, Store
from omega.memory.migrations import Migration, bundled_migrations, migrate

# About the SQLite file and its scripts; PostgreSQL has its own in test_postgres_store.py.
pytestmark = pytest.mark.sqlite_only

EXPECTED_TABLES = {
    "conversations",
    "messages",
    "messages_fts",
    "facts",
    "summaries",
    "scheduled_tasks",
    "audit_log",
    "inbox",
    "schema_migrations",
}


def tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def versions(db: Path) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


def test_fresh_database_gets_every_table_and_version(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    Store(db).close()
    assert tables(db) >= EXPECTED_TABLES
    assert versions(db) == [m.version for m in bundled_migrations()]


def test_database_is_wal_and_private(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    store = Store(db)
    try:
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        store.set_fact("u1", "name", "Ana")  # makes the -wal file exist
        for path in tmp_path.glob("memory.db*"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        store.close()


def test_rerun_applies_nothing_and_keeps_data(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    store = Store(db)
    store.set_fact("u1", "name", "Ana")
    store.close()
    with sqlite3.connect(db) as conn:
        assert migrate(conn) == []
    store = Store(db)
    assert store.facts("u1") == {"name": "Ana"}
    store.close()
    assert versions(db) == [m.version for m in bundled_migrations()]


def test_a_current_database_reads_no_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a store at every start but the first reads and renders no migration script (a
    few ms of each cold `omega ask`); a new database still reads them all."""
    import omega.memory.migrations as migrations

    scripts = len(bundled_migrations())
    read: list[str] = []
    real = migrations._read

    def counted(entry: Traversable) -> str:
        read.append(entry.name)
        return real(entry)

    monkeypatch.setattr(migrations, "_read", counted)
    db = tmp_path / "memory.db"
    Store(db).close()
    assert len(read) == scripts == versions(db)[-1]
    read.clear()
    Store(db).close()
    assert read == []


def test_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    Store(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', '2099-01-01')")
    with pytest.raises(SchemaTooNewError, match="999"):
        Store(db)


def test_failed_migration_leaves_nothing_behind(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    good = Migration(1, "good", "CREATE TABLE a (x INTEGER);")
    bad = Migration(2, "bad", "CREATE TABLE b (x INTEGER);\nTHIS IS NOT SQL;")
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, [good, bad])
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "a" in names
    assert "b" not in names
    assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations")] == [1]
    # Fixing the script lets the next start apply it.
    fixed = Migration(2, "bad", "CREATE TABLE b (x INTEGER);")
    assert migrate(conn, [good, fixed]) == [2]


@pytest.mark.no_store
def test_migrations_are_numbered_without_gaps() -> None:
    found = [m.version for m in bundled_migrations()]
    assert found == list(range(1, len(found) + 1))


def test_sightings_migration_keeps_each_earlier_limitation_as_one_sighting(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(tmp_path / "memory.db")
    try:
        migrate(conn, [m for m in bundled_migrations() if m.version < 15])
        when = "2026-01-01T00:00:00.000000Z"
        conn.executemany(
            "INSERT INTO limitations (title, source, created_at, reported_by) VALUES (?, ?, ?, ?)",
            [
                ("Email", "marker", when, "owner"),
                ("Voice", "voice", when, "person:telegram:1"),
                ("Tool x keeps failing", "critic", when, "tool critic"),
            ],
        )
        conn.commit()
        migrate(conn)
        rows = conn.execute(
            "SELECT limitation_id, seen_with, source, count, digested_at "
            "FROM limitation_sightings ORDER BY limitation_id"
        ).fetchall()
        scopes = conn.execute(
            "SELECT COUNT(*) FROM pragma_table_info('proposals') WHERE name = 'scope'"
        ).fetchone()
    finally:
        conn.close()
    assert rows == [
        (1, "owner", "marker", 1, when),
        (2, "person:telegram:1", "voice", 1, when),  # told before: not in the next digest
        (3, "", "critic", 1, when),
    ]
    assert scopes == (1,)


def test_a_migration_applied_meanwhile_by_another_process_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two replicas starting at once on a fresh database both read "nothing applied"; the
    one that loses the race finds the work done instead of failing on CREATE TABLE."""
    import omega.memory.migrations as migrations

    known = [Migration(1, "a", "CREATE TABLE a (x INTEGER);")]
    one = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    assert migrate(one, known) == [1]
    two = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    real = migrations.applied_versions
    stale = [set[int]()]  # what `two` read before `one` committed

    def applied(conn: sqlite3.Connection) -> set[int]:
        return stale.pop() if stale else real(conn)

    monkeypatch.setattr(migrations, "applied_versions", applied)
    assert migrate(two, known) == []
    assert [r[0] for r in two.execute("SELECT version FROM schema_migrations")] == [1]


def test_room_flags_migration_keeps_earlier_conversations_and_tool_calls_out_of_rooms(
    tmp_path: Path,
) -> None:
    """Conversations and tool calls from before the room flag are not a room's: the owner's
    private conversations keep feeding the heartbeat as their words, their calls their lessons."""
    [flags] = [m for m in bundled_migrations() if m.name == "room_flags"]
    conn = sqlite3.connect(tmp_path / "memory.db")
    try:
        migrate(conn, [m for m in bundled_migrations() if m.version < flags.version])
        when = "2026-01-01T00:00:00.000000Z"
        conn.execute(
            "INSERT INTO conversations (id, channel, sender_id, thread, started_at, "
            "last_activity) VALUES ('c1', 'slack', 'ana', '1700000000.0001', ?, ?)",
            (when, when),
        )
        conn.execute(
            "INSERT INTO tool_calls (created_at, agent, channel, sender_id, conversation_id, "
            "tool, ok) VALUES (?, 'openai', 'slack', 'ana', 'c1', 'search_memory', 1)",
            (when,),
        )
        conn.commit()
        assert flags.version in migrate(conn)
        rooms = [
            conn.execute(f"SELECT is_group FROM {table}").fetchall()
            for table in ("conversations", "tool_calls")
        ]
    finally:
        conn.close()
    assert rooms == [[(0,)], [(0,)]]
