"""The database under the store: one SQLite connection (WAL), its lock, the thread async code
uses, transactions and the time format every table shares."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import ParamSpec, TypeVar

from omega.memory.migrations import migrate, schema_version
from omega.paths import PRIVATE_FILE_MODE, touch_private

P = ParamSpec("P")
T = TypeVar("T")


def utc_now() -> str:
    """Current UTC time in the one sortable text format the database uses."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def to_db_time(moment: datetime) -> str:
    """Format an aware datetime in the database's UTC text format."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_db_time(text: str) -> datetime:
    """Parse the database's UTC text format back into an aware datetime."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


@contextmanager
def _migrating(path: Path) -> Iterator[None]:
    """Hold memory.db's migration lock: replicas started together migrate one at a time (the
    others then find every migration applied). A lock file of its own: closing any descriptor
    of memory.db itself would drop SQLite's locks on it."""
    lock = path.with_name(path.name + "-migrate.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class Database:
    """One memory.db connection: migrated at open, used from one thread at a time."""

    # The SQL engine below ("sqlite" or "postgresql"), for the few statements that differ.
    dialect: str = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        touch_private(path)
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None
        self._conn = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA busy_timeout=10000")
            with _migrating(path):
                migrate(self._conn)
        except Exception:
            self._conn.close()
            raise
        self._secure_sidecars()

    def _secure_sidecars(self) -> None:
        for suffix in ("-wal", "-shm"):
            sidecar = self.path.with_name(self.path.name + suffix)
            if sidecar.exists():
                sidecar.chmod(PRIVATE_FILE_MODE)

    def close(self) -> None:
        """Close the connection and the database thread."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        with self._lock:
            self._conn.close()

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a store method on the database thread, keeping the event loop free."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omega-db")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """An immediate write transaction, for repositories of other modules' tables."""
        return self._tx()

    def schema_version(self) -> int:
        """The newest migration applied to this database."""
        with self._lock:
            return schema_version(self._conn)

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        """Read rows (as sqlite3.Row), for repositories of other modules' tables."""
        return self._query(sql, params)

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._conn.execute(sql, params)
            cursor.row_factory = sqlite3.Row
            return list(cursor.fetchall())
