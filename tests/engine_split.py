"""Which tests the PostgreSQL run leaves out, and the check that keeps that honest.

A test marked `no_store` opens no store, neither in this process nor in an `omega` it starts,
so running it again on PostgreSQL proves nothing new; `make test` leaves it out of that run.
On every SQLite run, such a test fails if it opened a store after all (a `Database` in this
process, a SQLite file under its tmp_path, or the `postgres_server` fixture): the marker cannot
silently hide a test from the second engine."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from omega.memory.db import Database

NO_STORE = "no_store"
_SQLITE_MAGIC = b"SQLite format 3\x00"


def sqlite_files(root: Path) -> list[Path]:
    """The SQLite database files below `root` (by their header, whatever their name)."""
    found: list[Path] = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder, name)
            try:
                # Regular files only: opening a FIFO a test left behind would block.
                if not stat.S_ISREG(path.lstat().st_mode):
                    continue
                with path.open("rb") as handle:
                    if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC:
                        found.append(path)
            except OSError:  # gone meanwhile, or a file the test made unreadable
                continue
    return found


@pytest.fixture(autouse=True)
def no_store_is_true(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Fails a `no_store` test that opened a store (see the module's docstring)."""
    if request.node.get_closest_marker(NO_STORE) is None:
        yield
        return
    opened: list[str] = []
    original = Database.__init__

    def counting(self: Database, location: Path | str, *, exact: bool = False) -> None:
        opened.append(str(location))
        original(self, location, exact=exact)

    monkeypatch.setattr(Database, "__init__", counting)
    yield
    found = [str(p.relative_to(tmp_path)) for p in sqlite_files(tmp_path)]
    if "postgres_server" in request.fixturenames:
        found.append("the postgres_server fixture")
    if opened or found:
        pytest.fail(
            f"{request.node.nodeid} is marked no_store but opened a store "
            f"({', '.join(opened + found)}): remove the marker so the PostgreSQL run keeps it"
        )
