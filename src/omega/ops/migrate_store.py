"""`omega migrate-store`: copy a home's SQLite memory.db into a PostgreSQL store, verified.

The target is migrated to this Omega's schema first and must hold no data. Every table is
copied in creation order (parents before the rows that refer to them), identity counters are
moved past the copied ids, and then each table is verified on both sides: the same number of
rows and the same checksum (a sha256 over every row's values, independent of row order)."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from omega.errors import OmegaError
from omega.memory import Store

__all__ = ["MigrateStoreError", "TableCopy", "migrate_store", "table_checksum"]

# Not data: the schema's bookkeeping and FTS5's index (PostgreSQL keeps its own index).
_SKIPPED = ("schema_migrations", "messages_fts", "sqlite_")
_BATCH = 1000


class MigrateStoreError(OmegaError):
    """The copy cannot start or did not verify."""


@dataclass(frozen=True)
class TableCopy:
    """One table as copied and verified."""

    table: str
    rows: int
    checksum: str  # the same on both sides, or the copy would have failed


def _normal(value: object) -> str:
    if value is None:
        return "\x00null"
    if isinstance(value, bytes | memoryview):
        return "b:" + bytes(value).hex()
    if isinstance(value, float):
        return "f:" + repr(value)
    if isinstance(value, int):
        return "i:" + str(value)
    # PostgreSQL's text cannot hold NUL: the engine stores U+FFFD (omega.memory.postgres).
    return "s:" + str(value).replace("\0", "\ufffd")


def table_checksum(rows: list[tuple[object, ...]]) -> str:
    """sha256 over the rows' values, the same whatever order the engine returns them in."""
    digests = sorted(
        hashlib.sha256("\x1f".join(_normal(v) for v in row).encode()).hexdigest() for row in rows
    )
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


def _tables(source: sqlite3.Connection) -> list[str]:
    names = [
        str(r[0])
        for r in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
        )
    ]
    return [n for n in names if not n.startswith(_SKIPPED)]


def _columns(source: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in source.execute(f"PRAGMA table_info({table})")]


def _rows(store: Store, table: str, columns: list[str]) -> list[tuple[object, ...]]:
    listed = ", ".join(columns)
    return [tuple(row) for row in store.query(f"SELECT {listed} FROM {table}")]


def migrate_store(source_db: Path, target_url: str) -> list[TableCopy]:
    """Copy `source_db` (a SQLite memory.db) into the empty PostgreSQL store at `target_url`;
    return what each table holds. Raises MigrateStoreError when it cannot, or did not verify."""
    if not source_db.is_file():
        raise MigrateStoreError(f"{source_db} does not exist: there is nothing to copy")
    source = Store(source_db, exact=True)  # migrated first: both sides have this schema
    try:
        target = Store(target_url, exact=True)
    except Exception:
        source.close()
        raise
    try:
        if target.dialect != "postgresql":
            raise MigrateStoreError("the target must be a postgresql:// URL")
        return _copy(source, target)
    finally:
        source.close()
        target.close()


def _copy(source: Store, target: Store) -> list[TableCopy]:
    with sqlite3.connect(source.path) as raw:
        tables = _tables(raw)
        columns = {table: _columns(raw, table) for table in tables}
    busy = [t for t in tables if target.query(f"SELECT 1 FROM {t} LIMIT 1")]
    if busy:
        raise MigrateStoreError(
            f"the target already holds data (in {', '.join(busy[:5])}): "
            "copy into a new, empty database"
        )
    with target.transaction() as conn:
        for table in tables:
            listed = ", ".join(columns[table])
            marks = ", ".join("?" for _ in columns[table])
            rows = _rows(source, table, columns[table])
            for start in range(0, len(rows), _BATCH):
                conn.executemany(
                    f"INSERT INTO {table} ({listed}) VALUES ({marks})",
                    rows[start : start + _BATCH],
                )
        for table, column in _identities(target).items():
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)"
            )
    copied = []
    for table in tables:
        mine = _rows(source, table, columns[table])
        theirs = _rows(target, table, columns[table])
        if len(mine) != len(theirs) or table_checksum(mine) != table_checksum(theirs):
            raise MigrateStoreError(
                f"{table} did not verify: {len(mine)} rows here, {len(theirs)} there, "
                "checksums differ; the target is incomplete, drop it and try again"
            )
        copied.append(TableCopy(table, len(mine), table_checksum(mine)))
    return copied


def _identities(target: Store) -> dict[str, str]:
    rows = target.query(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND is_identity = 'YES'"
    )
    return {str(r[0]): str(r[1]) for r in rows}
