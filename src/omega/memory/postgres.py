"""The PostgreSQL engine under the store: one psycopg 3 connection that speaks the part of
`sqlite3.Connection` the repositories use, so every table family runs unchanged on both engines.

The repositories write portable SQL with `?` placeholders (see ARCHITECTURE.md, "Store"). This
module turns it into PostgreSQL's: `?` becomes `%s`, a literal `%` is doubled, `INSERT OR
IGNORE` becomes `INSERT ... ON CONFLICT DO NOTHING`, `group_concat` is `string_agg`. Rows read
by name and by position (like `sqlite3.Row`), `cursor.lastrowid` is filled by a `RETURNING` of the
table's identity column, booleans are stored as 0/1 and numeric results come back as int/float,
as SQLite gives them. Full-text recall is the one query that differs by engine
(`Conversations.search_messages`).

Why sync psycopg and one connection per process: the store's contract is synchronous methods
run on one database thread (`Database.call`), which keeps transactions simple and ordered; a
fleet scales by running more replicas (processes), each with its own connection.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from omega.errors import OmegaError

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgConnection", "PgRow", "StoreUnavailableError", "connect", "is_url", "translate"]

_SCHEMES = ("postgresql://", "postgres://")


class StoreUnavailableError(OmegaError):
    """The PostgreSQL store cannot be reached or psycopg is not installed."""


def is_url(location: object) -> bool:
    """Whether a store location names a PostgreSQL database (else it is a SQLite file)."""
    return isinstance(location, str) and location.startswith(_SCHEMES)


_INSERT = re.compile(r"^\s*INSERT\s+(OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_WORD_FUNCS = {"group_concat": "string_agg", "instr": "strpos"}


def _scan(sql: str, escape_percent: bool) -> str:
    """`?` -> `%s` outside literals, `%` -> `%%` everywhere (psycopg reads both in literals)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(sql):
        ch = sql[i]
        if quote:
            if ch == quote:
                quote = ""
            out.append("%%" if ch == "%" and escape_percent else ch)
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%" and escape_percent:
            out.append("%%")
        elif ch.isalpha() or ch == "_":
            j = i
            while j < len(sql) and (sql[j].isalnum() or sql[j] == "_"):
                j += 1
            word = sql[i:j]
            out.append(_WORD_FUNCS.get(word.lower(), word))
            i = j
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def translate(sql: str, has_params: bool = True) -> str:
    """SQLite-flavoured portable SQL as PostgreSQL reads it (placeholders, INSERT OR IGNORE)."""
    match = _INSERT.match(sql)
    if match and match.group(2):
        if match.group(2).upper() == "REPLACE":
            raise ValueError("INSERT OR REPLACE is not portable: use ON CONFLICT ... DO UPDATE")
        sql = sql[: match.start(1)] + sql[match.end(1) :]
        returning = _RETURNING.search(sql)
        at = returning.start() if returning else len(sql.rstrip().rstrip(";"))
        sql = sql[:at].rstrip() + " ON CONFLICT DO NOTHING " + sql[at:]
    return _scan(sql, escape_percent=has_params)


def _plain(value: object) -> object:
    """A result value as SQLite would give it (numeric -> int or float)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _param(value: object) -> object:
    """A parameter as the schema stores it: booleans are 0/1 integers on both engines, and a
    NUL (which PostgreSQL's text cannot hold) is U+FFFD, the same in writes and lookups."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and "\0" in value:
        return value.replace("\0", "\ufffd")
    return value


@contextlib.contextmanager
def _sqlite_errors() -> Iterator[None]:
    """psycopg's errors as the DB-API errors of sqlite3, so the repositories and their callers
    handle one vocabulary on both engines (a constraint broken: IntegrityError; the rest:
    OperationalError)."""
    import psycopg

    try:
        yield
    except psycopg.IntegrityError as exc:
        raise sqlite3.IntegrityError(str(exc)) from exc
    except psycopg.Error as exc:
        raise sqlite3.OperationalError(str(exc)) from exc


class PgRow(tuple[Any, ...]):
    """A result row readable by position and by column name, like `sqlite3.Row`."""

    _names: dict[str, int]

    def __new__(cls, values: Iterable[Any], names: dict[str, int]) -> PgRow:
        row = super().__new__(cls, [_plain(v) for v in values])
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


class PgCursor:
    """The result of one statement: rows, rowcount and the new row's id."""

    def __init__(self, rows: list[PgRow], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        self.row_factory: object = None  # accepted and ignored: rows always read both ways

    def fetchone(self) -> PgRow | None:
        """The next row, or None."""
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[PgRow]:
        """The remaining rows."""
        rest = self._rows[self._at :]
        self._at = len(self._rows)
        return rest

    def __iter__(self) -> Iterator[PgRow]:
        return iter(self.fetchall())


class PgConnection:
    """One autocommit psycopg connection; `BEGIN`/`COMMIT` come from the store's transactions."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.row_factory: object = None  # accepted and ignored, as on PgCursor
        self._lock = threading.Lock()
        self._conn = self._open()
        self._identity: dict[str, str] | None = None
        self.in_transaction = False
        self._closed = False

    def _open(self) -> psycopg.Connection[Any]:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - the extra is missing
            raise StoreUnavailableError(
                "[store] url names PostgreSQL but psycopg is not installed: "
                "pip install 'omega-agent[postgresql]'"
            ) from exc
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreUnavailableError(f"cannot reach the PostgreSQL store: {exc}") from exc

    def _live(self) -> psycopg.Connection[Any]:
        # A connection lost between transactions (a server restart) is opened again; one lost
        # inside a transaction fails that transaction, which the caller sees. One closed by
        # `close()` stays closed, as sqlite3's does.
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        if self._conn.closed and not self.in_transaction:
            self._conn = self._open()
        return self._conn

    def identity_columns(self) -> dict[str, str]:
        """table -> its identity column (what `lastrowid` reports), read once."""
        if self._identity is None:
            with self._live().cursor() as cur:
                cur.execute(
                    "SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema() AND is_identity = 'YES'"
                )
                self._identity = {str(t): str(c) for t, c in cur.fetchall()}
        return self._identity

    def forget_schema(self) -> None:
        """Read identity columns again (after a migration)."""
        self._identity = None

    def execute(self, sql: str, params: Sequence[object] = ()) -> PgCursor:
        """Run one statement with `?` parameters; the rows are read at once."""
        text = translate(sql, has_params=bool(params))
        returning_id = ""
        match = _INSERT.match(sql)
        if match and not _RETURNING.search(sql):
            returning_id = self.identity_columns().get(match.group(3), "")
            if returning_id:
                text = f"{text.rstrip().rstrip(';')} RETURNING {returning_id}"
        values = [_param(p) for p in params] if params else None
        with self._lock, self._live().cursor() as cur, _sqlite_errors():
            cur.execute(text, values)  # type: ignore[call-overload]
            rows: list[PgRow] = []
            lastrowid = None
            if cur.description is not None:
                names = {col.name: i for i, col in enumerate(cur.description)}
                fetched = [PgRow(r, names) for r in cur.fetchall()]
                if returning_id:
                    lastrowid = int(fetched[0][0]) if fetched else None
                else:
                    rows = fetched
            return PgCursor(rows, cur.rowcount, lastrowid)

    def begin(self, lock: int) -> None:
        """Open a transaction holding advisory lock `lock` till its end (one round trip)."""
        self._once_more_if_lost(f"BEGIN; SELECT pg_advisory_xact_lock({int(lock)})")
        self.in_transaction = True

    def _once_more_if_lost(self, sql: str) -> None:
        # A link that died while idle (server restart, idle timeout) is only noticed when it is
        # used: a statement that cannot have run yet (BEGIN) is sent again on a new link.
        import psycopg

        with self._lock:
            try:
                with self._live().cursor() as cur:
                    cur.execute(sql.encode())
                return
            except psycopg.OperationalError:
                if not self._conn.closed:
                    raise
            with self._live().cursor() as cur, _sqlite_errors():
                cur.execute(sql.encode())

    def executemany(self, sql: str, seq: Iterable[Sequence[object]]) -> PgCursor:
        """Run one statement once per parameter row."""
        text = translate(sql, has_params=True)
        with self._lock, self._live().cursor() as cur, _sqlite_errors():
            cur.executemany(text, [[_param(p) for p in params] for params in seq])  # type: ignore[call-overload]
            return PgCursor([], cur.rowcount, None)

    def executescript(self, sql: str) -> None:
        """Run several statements (a migration) as written: PostgreSQL SQL, no parameters."""
        with self._lock, self._live().cursor() as cur, _sqlite_errors():
            cur.execute(sql.encode())
        self.forget_schema()

    def close(self) -> None:
        """Close the connection."""
        self._closed = True
        self._conn.close()


def connect(url: str) -> PgConnection:
    """Open the PostgreSQL store at `url` (raises StoreUnavailableError when it cannot)."""
    return PgConnection(url)
