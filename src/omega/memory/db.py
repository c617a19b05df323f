"""The database under the store: one connection (a SQLite file in WAL mode, or PostgreSQL),
its lock, the thread async code uses, transactions and the time format every table shares.

Where the store lives: `OMEGA_STORE_URL` (the deploy override) beats `[store] url` beats the
SQLite file `$OMEGA_HOME/memory.db` (see `store_location`)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, ParamSpec, TypeVar, cast
from urllib.parse import unquote

from omega.logs import redact
from omega.memory import postgres, wakeups
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


STORE_URL_ENV = "OMEGA_STORE_URL"
Dialect = Literal["sqlite", "postgresql"]
# Every write transaction on PostgreSQL first takes this advisory lock: writers are serialized
# across the fleet as SQLite's BEGIN IMMEDIATE serializes them, so each repository's
# read-then-write stays race-free with N replicas (claims skip locked rows inside it).
_WRITE_LOCK = 0x0_6D656761  # "mega"


def store_location(default: Path, configured: str = "") -> Path | str:
    """Where the store lives: OMEGA_STORE_URL, else `[store] url`, else the SQLite file."""
    chosen = os.environ.get(STORE_URL_ENV, "").strip() or configured.strip()
    return chosen if chosen else default


# Where a store location writes its password: in a URL's query (`?password=pw`, also
# sslpassword), or as a keyword of a libpq connection string (`host=h password=pw`).
_QUERY_PASSWORD = re.compile(r"(?i)([?&](?:ssl)?password=)([^&#]*)")
_KEYWORD_PASSWORD = re.compile(r"(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']+)")
_URL_SCHEME = re.compile(r"(?i)^\s*[a-z][a-z0-9+.\-]*://")


def _userinfo_password(text: str) -> tuple[int, int] | None:
    """Where the password of a URL's user-info part lies: after the first ':' up to the last
    '@' before the query (`user:pw@`, `:pw@`, a raw '@' inside the password too)."""
    scheme = _URL_SCHEME.match(text)
    if scheme is None:
        return None
    start, end = scheme.end(), len(text)
    for stop in "?#":
        found = text.find(stop, start)
        if found >= 0:
            end = min(end, found)
    at = text.rfind("@", start, end)
    colon = text.find(":", start, at) if at >= 0 else -1
    return (colon + 1, at) if colon >= 0 else None


def location_passwords(location: Path | str) -> list[str]:
    """The passwords a store location carries, in every form an error message may quote
    them: as written, percent-decoded and as libpq reads them (psycopg's parser)."""
    text = str(location)
    if isinstance(location, Path) or not text.strip():
        return []
    found: list[str] = []
    if _URL_SCHEME.match(text):
        span = _userinfo_password(text)
        if span is not None:
            found.append(text[span[0] : span[1]])
        found += [m.group(2) for m in _QUERY_PASSWORD.finditer(text)]
    else:
        found += [m.group(2).strip("'") for m in _KEYWORD_PASSWORD.finditer(text)]
    if _URL_SCHEME.match(text) or "=" in text:
        with contextlib.suppress(Exception):  # psycopg missing, or a URL libpq refuses
            from psycopg.conninfo import conninfo_to_dict

            parsed = conninfo_to_dict(text)
            found += [str(parsed.get(key) or "") for key in ("password", "sslpassword")]
    forms = [form for value in found for form in (value, unquote(value))]
    return [form for form in dict.fromkeys(forms) if form]


def redacted_location(location: Path | str) -> str:
    """The store's location for display: without its password, in whatever form the location
    carries it (`user:pw@`, `:pw@`, `?password=`, `password=` of a connection string), and
    with any other secret the log redactor knows hidden."""
    text = str(location)
    if _URL_SCHEME.match(text):
        span = _userinfo_password(text)
        if span is not None:
            text = text[: span[0]] + "***" + text[span[1] :]
        text = _QUERY_PASSWORD.sub(r"\1***", text)
    else:
        text = _KEYWORD_PASSWORD.sub(r"\1***", text)
    for password in sorted(location_passwords(location), key=len, reverse=True):
        if len(password) >= 3:
            text = text.replace(password, "***")
    return redact(text)


@contextmanager
def _migrating(path: Path) -> Iterator[None]:
    """Hold memory.db's migration lock: replicas started together migrate one at a time (the
    others then find every migration applied). A lock file of its own: closing any descriptor
    of memory.db itself would drop SQLite's locks on it. (PostgreSQL: an advisory lock.)"""
    lock = path.with_name(path.name + "-migrate.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class Database:
    """One store connection: migrated at open, used from one thread at a time.

    `location` is a SQLite file, or a `postgresql://` URL; a file path gives way to
    OMEGA_STORE_URL when that is set (so `omega` commands and the tests reach the fleet's
    database), unless `exact` (a copy between engines names both ends)."""

    dialect: Dialect = "sqlite"

    def __init__(self, location: Path | str, *, exact: bool = False) -> None:
        if not exact and not postgres.is_url(location):
            location = store_location(Path(location))
        self._lock = threading.RLock()
        self._tx_depth = 0  # write transactions open on the thread holding the lock
        self._executor: ThreadPoolExecutor | None = None
        self._listener: wakeups.Listener | None = None
        if isinstance(location, str) and postgres.is_url(location):
            self.dialect = "postgresql"
            self.path = Path(os.devnull)
            self.location: str = location
            pg = postgres.connect(location)
            self._conn = cast(sqlite3.Connection, pg)
            try:
                migrate(self._conn, dialect="postgresql")
            except Exception:
                pg.close()
                raise
            return
        path = Path(location)
        self.path = path
        self.location = str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        touch_private(path)
        self._conn = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        try:
            self._conn.execute("PRAGMA busy_timeout=10000")
            # Under the migration lock too: switching a fresh file to WAL takes its exclusive
            # lock, which a replica opening it at the same moment may be refused.
            with _migrating(path):
                self._conn.execute("PRAGMA journal_mode=WAL")
                migrate(self._conn)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
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
        if self._listener is not None:
            self._listener.close()
            self._listener = None
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

    def wake_event(self, topic: str) -> asyncio.Event | None:
        """An event another replica's write on `topic` sets at once (memory.wakeups); None on
        SQLite, where the caller's poll is the only way."""
        if self.dialect != "postgresql":
            return None
        if self._listener is None:
            self._listener = wakeups.Listener(self.location)
        return self._listener.event(topic)

    def _notify(self, conn: sqlite3.Connection, topic: str) -> None:
        """Inside a write transaction: wake the replicas waiting on `topic` at its commit."""
        wakeups.notify(conn, self.dialect, topic)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._tx_depth:  # inside another: its writes join that one, all or none
                self._tx_depth += 1
                try:
                    yield self._conn
                finally:
                    self._tx_depth -= 1
                return
            self._tx_depth = 1
            try:
                with self._outermost_tx() as conn:
                    yield conn
            finally:
                self._tx_depth = 0

    @contextmanager
    def _outermost_tx(self) -> Iterator[sqlite3.Connection]:
        if self.dialect == "postgresql":
            pg = cast(postgres.PgConnection, self._conn)
            pg.begin(_WRITE_LOCK)
            try:
                yield self._conn
                pg.execute("COMMIT")  # still in the transaction: a lost link fails here
            except BaseException:
                with contextlib.suppress(Exception):
                    pg.execute("ROLLBACK")
                raise
            finally:
                pg.in_transaction = False
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """An immediate write transaction, for repositories of other modules' tables; store
        methods called inside it write in it (several writes, one commit)."""
        return self._tx()

    def schema_version(self) -> int:
        """The newest migration applied to this database."""
        with self._lock:
            return schema_version(self._conn)

    def is_file(self) -> bool:
        """Whether this store is a SQLite file (backups, file modes and PRAGMAs apply)."""
        return self.dialect == "sqlite"

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        """Read rows (as sqlite3.Row), for repositories of other modules' tables."""
        return self._query(sql, params)

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._conn.execute(sql, params)
            cursor.row_factory = sqlite3.Row
            return list(cursor.fetchall())
