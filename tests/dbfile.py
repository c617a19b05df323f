"""Open the store a test's Omega wrote, on whichever engine this run uses: memory.db itself on
the SQLite run, the test's PostgreSQL database (OMEGA_STORE_URL) on the PostgreSQL run. Tests
read rows with it as they would with `sqlite3.connect(home / "memory.db")`."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from omega.memory.db import STORE_URL_ENV
from omega.memory.postgres import PgConnection


class _PgTestConnection(PgConnection):
    """A PgConnection usable as sqlite3's is in tests (`with`, `commit`)."""

    def __enter__(self) -> _PgTestConnection:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        return None

    def commit(self) -> None:
        """Statements commit as they run (autocommit)."""


def connect_db(path: Path | str, **kwargs: Any) -> sqlite3.Connection:
    """The store at `path` (a memory.db), or the run's PostgreSQL database when one is set."""
    url = os.environ.get(STORE_URL_ENV, "")
    if url:
        return cast(sqlite3.Connection, _PgTestConnection(url))
    return cast(sqlite3.Connection, sqlite3.connect(path, **kwargs))
