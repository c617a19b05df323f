"""The store URL's password, written in any form libpq takes, is never printed: not in the
store's location `omega status` shows, nor in the error psycopg raises about the URL (which
may quote it), nor by `omega migrate-store` about its target."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.memory import Store
from tests.conftest import run_omega

PASSWORD = "Hunter2"
# Port 1 on loopback refuses at once: every form ends in an error about the store.
FORMS = [
    "postgresql://omega:Hunter2Secret@127.0.0.1:1/omega",
    "postgresql://omega@127.0.0.1:1/omega?password=Hunter2Secret",
    "postgresql://omega@127.0.0.1:1/omega?sslmode=disable&password=Hunter2Secret",
    "postgresql://:Hunter2Secret@127.0.0.1:1/omega",
    "postgresql://omega:Hunter2@Secret@127.0.0.1:1/omega",
    "postgresql://omega:Hunter2Secret@127.0.0.1:1/omega?sslmode=bogus",
    # Not valid percent-encoding: psycopg's error quotes the password itself.
    "postgres://omega:Hunter2%Secret@127.0.0.1:1/omega",
]


@pytest.mark.no_store  # the store is never reached: the same on either engine's run
@pytest.mark.parametrize("url", FORMS)
def test_status_never_prints_the_store_password(isolated_env: Path, url: str) -> None:
    result = run_omega("status", env={"OMEGA_STORE_URL": url})
    assert result.returncode != 0
    assert "127.0.0.1" in result.stdout + result.stderr  # the store was named, not its password
    assert PASSWORD not in result.stdout + result.stderr
    log = isolated_env / "omega.log"
    assert PASSWORD not in (log.read_text() if log.exists() else "")


@pytest.mark.sqlite_only  # the source is the home's SQLite file
def test_migrate_store_never_prints_its_targets_password(isolated_env: Path) -> None:
    Store(isolated_env / "memory.db", exact=True).close()
    result = run_omega("migrate-store", "--to", "postgres://omega:Hunter2%Secret@127.0.0.1:1/db")
    assert result.returncode != 0
    assert "percent-encoded" in result.stderr
    assert PASSWORD not in result.stdout + result.stderr
