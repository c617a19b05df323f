"""Numbered SQL migrations, applied exactly once each, in order.

One script per change (`NNN_name.sql` here) serves both engines: it is rendered for the engine
it runs on by `render.render` (portable SQL, a few mapped types, dialect blocks for what truly
differs; docs/development.md, "Migrations"). `tests/unit/test_postgres_store.py` checks both
engines end with the same tables, columns, indexes and constraints."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING

from omega.errors import OmegaError
from omega.memory.migrations.render import render

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_FILE_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")


class SchemaTooNewError(OmegaError):
    """The database was written by a newer Omega than this one."""


@dataclass(frozen=True)
class Migration:
    """One numbered SQL script."""

    version: int
    name: str
    sql: str


def bundled_migrations(dialect: str = "sqlite") -> list[Migration]:
    """The migrations shipped in this package, rendered for one engine, sorted by version."""
    return _known(None, set(), dialect)


def _bundled_scripts() -> list[tuple[int, str, Traversable]]:
    """(version, name, file) of each script shipped here, sorted by version."""
    found = []
    for entry in resources.files(__package__).iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry))
    found.sort(key=lambda m: m[0])
    versions = [m[0] for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration versions: {versions}")
    return found


def _known(migrations: list[Migration] | None, done: set[int], dialect: str) -> list[Migration]:
    """The migrations given, or the bundled ones with only those not `done` read and rendered
    (a database already current, as at every start but the first, reads no script)."""
    if migrations is not None:
        return migrations
    return [
        Migration(version, name, "" if version in done else render(_read(entry), dialect))
        for version, name, entry in _bundled_scripts()
    ]


def _read(entry: Traversable) -> str:
    return entry.read_text(encoding="utf-8")


def applied_versions(conn: sqlite3.Connection) -> set[int]:
    """Versions recorded in schema_migrations (creating that table if needed)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def migrate(
    conn: sqlite3.Connection,
    migrations: list[Migration] | None = None,
    dialect: str = "sqlite",
) -> list[int]:
    """Apply every pending migration atomically, in order; return the versions applied.

    Raises SchemaTooNewError when the database holds a version this code does not know.
    """
    if dialect == "postgresql":
        return _migrate_postgresql(conn, migrations)
    done = applied_versions(conn)
    known = _known(migrations, done, dialect)
    newest_known = max((m.version for m in known), default=0)
    unknown = sorted(v for v in done if v > newest_known)
    if unknown:
        raise SchemaTooNewError(
            f"the database is at schema version {max(unknown)}, but this Omega only knows "
            f"up to {newest_known}; upgrade Omega (or restore a backup) to use it"
        )
    applied = []
    for migration in known:
        if migration.version in done:
            continue
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        # executescript commits any open transaction first, so BEGIN/COMMIT are in the script:
        # either the whole migration and its bookkeeping row land, or nothing does.
        script = (
            "BEGIN;\n"
            f"{migration.sql}\n;\n"
            "INSERT INTO schema_migrations (version, name, applied_at) "
            f"VALUES ({migration.version}, '{migration.name}', '{stamp}');\n"
            "COMMIT;"
        )
        try:
            conn.executescript(script)
        except sqlite3.Error:
            if conn.in_transaction:
                conn.rollback()
            if migration.version in applied_versions(conn):
                continue  # another process (a replica starting beside this one) applied it
            raise
        applied.append(migration.version)
    return applied


# Replicas starting together migrate one at a time: the first applies, the others find it done.
_MIGRATION_LOCK = 0x6F6D6567  # "omeg"


def _migrate_postgresql(conn: sqlite3.Connection, migrations: list[Migration] | None) -> list[int]:
    applied: list[int] = []
    conn.execute("BEGIN")
    try:
        conn.execute(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
        done = applied_versions(conn)
        known = _known(migrations, done, "postgresql")
        newest_known = max((m.version for m in known), default=0)
        unknown = sorted(v for v in done if v > newest_known)
        if unknown:
            raise SchemaTooNewError(
                f"the database is at schema version {max(unknown)}, but this Omega only knows "
                f"up to {newest_known}; upgrade Omega (or restore a backup) to use it"
            )
        for migration in known:
            if migration.version in done:
                continue
            conn.executescript(migration.sql)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (
                    migration.version,
                    migration.name,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                ),
            )
            applied.append(migration.version)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return applied


def latest_version() -> int:
    """The newest schema version this Omega knows (its last bundled migration)."""
    return max((version for version, _, _ in _bundled_scripts()), default=0)


def schema_version(conn: sqlite3.Connection) -> int:
    """The newest migration applied to a database (0 for one never migrated)."""
    try:
        row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    except sqlite3.OperationalError:  # no schema_migrations table (on both engines)
        return 0
    return int(row[0] or 0)
