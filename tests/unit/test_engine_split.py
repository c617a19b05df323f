"""The `no_store` marker leaves a test out of the PostgreSQL run only while it is true: a test so
marked that opens a store fails on the SQLite run, and the PostgreSQL run leaves out nothing
else (tests/engine_split.py, the Makefile's second run)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LIAR = """
import os, subprocess, sys
from pathlib import Path
import pytest
from omega.memory.db import Database

pytestmark = pytest.mark.no_store

def test_opens_one_here(tmp_path: Path) -> None:
    Database(tmp_path / "here.db").close()

def test_an_omega_it_starts_opens_one(tmp_path: Path) -> None:
    code = "from omega.memory.db import Database; import sys; Database(sys.argv[1]).close()"
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "child.db")], check=True)

def test_needs_postgresql(postgres_server: object) -> None:
    pass

def test_truly_opens_none(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no store here")
    os.mkfifo(tmp_path / "a-fifo")  # the check must not block on it
"""


def _run_suite(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMEGA_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(ROOT),
            "-c",
            str(ROOT / "pyproject.toml"),
            "--basetemp",
            str(folder / "tmp"),
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


# The check belongs to the SQLite run (its inner suite runs on SQLite whatever the outer engine).
@pytest.mark.sqlite_only
def test_a_no_store_test_that_opens_a_store_fails_on_the_sqlite_run(tmp_path: Path) -> None:
    # The check lives in tests/conftest.py's fixtures: the file must sit below tests/.
    liar = ROOT / "tests" / "unit" / f"test_zz_liar_{os.getpid()}.py"
    liar.write_text(LIAR)
    try:
        run = _run_suite(tmp_path, str(liar))
    finally:
        liar.unlink()
    out = run.stdout + run.stderr
    assert "4 passed" in out and "3 errors" in out, out
    assert "test_opens_one_here is marked no_store but opened a store" in out
    assert "test_an_omega_it_starts_opens_one is marked no_store but opened a store" in out
    assert "child.db" in out
    assert "test_needs_postgresql is marked no_store but opened a store" in out


@pytest.mark.no_store
def test_the_postgresql_run_leaves_out_only_no_store_and_sqlite_only_tests() -> None:
    makefile = (ROOT / "Makefile").read_text()
    selections = re.findall(r'OMEGA_TEST_STORE=postgresql[^\n]*-m "([^"]+)"', makefile)
    assert selections == ["not sqlite_only and not no_store"]
