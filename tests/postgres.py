"""A throwaway PostgreSQL server for the tests: Debian's `postgresql` binaries, initdb into a
temporary folder, loopback TCP with trust auth, fsync off. A database per test is cloned from a
template that is migrated once, so each test starts from a fresh, current schema.

`OMEGA_TEST_STORE=postgresql` makes the whole suite run on it (tests/conftest.py); tests that
need PostgreSQL whatever the backend use the `postgres_server` fixture."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

BACKEND_ENV = "OMEGA_TEST_STORE"


class PostgresUnavailableError(RuntimeError):
    """No PostgreSQL binaries on this machine."""


def _bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    if candidates:
        return candidates[0]
    raise PostgresUnavailableError(
        f"{name} not found: install Debian's postgresql package (apt-get install postgresql)"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One running cluster; `new_database()` hands out fresh migrated databases."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="omega-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._user: str | None = None
        self._names = itertools.count()
        self._template_ready = False
        self._ready: queue.Queue[str] = queue.Queue()
        self._doomed: queue.Queue[str] = queue.Queue()
        self._closing = threading.Event()
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as `postgres`
            self._user = "postgres" if _has_user("postgres") else "nobody"
            entry = pwd.getpwnam(self._user)
            os.chmod(self.root, 0o755)
            self.data.mkdir()
            os.chown(self.data, entry.pw_uid, entry.pw_gid)
        self._run(
            [
                _bin("initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ]
        )
        log = self.root / "server.log"
        if self._user:
            log.touch()
            entry = pwd.getpwnam(self._user)
            os.chown(log, entry.pw_uid, entry.pw_gid)
        options = (
            f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300 "
            "-c shared_buffers=64MB"
        )
        self._run(
            [_bin("pg_ctl"), "-D", str(self.data), "-l", str(log), "-o", options, "-w", "start"]
        )

    def _run(self, argv: list[str]) -> None:
        subprocess.run(
            argv, check=True, user=self._user, capture_output=True, cwd=self.root, timeout=120
        )

    def url(self, database: str = "postgres") -> str:
        """A connection URL for one database of this cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.encode())

    def _clone(self) -> str:
        name = f"t{next(self._names)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE omega_template STRATEGY FILE_COPY")
        return self.url(name)

    def _prepare(self) -> None:
        # Cloning and dropping take ~0.2 s each: a helper thread does them between tests, so
        # a test waits only when it outruns the thread.
        while not self._closing.is_set():
            if self._ready.qsize() < 2:
                try:
                    self._ready.put(self._clone())
                except Exception:  # the server is stopping (or failed: new_database says so)
                    return
                continue
            try:
                doomed = self._doomed.get(timeout=0.2)
            except queue.Empty:
                continue
            with contextlib.suppress(Exception):
                self._admin(f"DROP DATABASE IF EXISTS {doomed} WITH (FORCE)")

    def new_database(self) -> str:
        """A fresh database with Omega's current schema; returns its URL."""
        if not self._template_ready:
            self._admin("CREATE DATABASE omega_template")
            from omega.memory.db import Database

            Database(self.url("omega_template")).close()
            self._template_ready = True
            threading.Thread(target=self._prepare, name="pg-clones", daemon=True).start()
        return self._ready.get(timeout=60)

    def empty_database(self) -> str:
        """A fresh database with no tables at all."""
        name = f"e{next(self._names)}"
        self._admin(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop(self, url: str) -> None:
        """Drop a database handed out before (its connections are ended), in the background."""
        self._doomed.put(url.rsplit("/", 1)[1])

    def stop(self) -> None:
        """Stop the cluster and remove its files."""
        self._closing.set()
        with contextlib.suppress(Exception):
            self._run([_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"])
        shutil.rmtree(self.root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A cluster for the length of the block."""
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()
