"""Landlock alone (no bubblewrap on PATH, as where unprivileged user namespaces are off): a
command can still `chmod` files it cannot open, Omega's own included. Through `omega chat
--jsonl` with the scripted provider asking for `run_shell`, the model opens config.toml and
$OMEGA_HOME to everyone; after the command Omega puts the modes back, audits it and alerts the
owner. Ordinary `chmod +x` work in the workspace goes on and triggers nothing."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.memory import Store
from omega.memory.db import store_location
from omega.paths import OmegaPaths
from omega.sandbox import Mode, Sandbox, probe
from omega.tools.home_guard import EVENT, check, snapshot, watched
from tests.conftest import run_omega
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_sandbox_walls import PY, chat
from tests.integration.test_tool_loop import tool_call

pytestmark = pytest.mark.slow

# Omega's own Python only: `bwrap` is not found, so commands run under Landlock alone. The
# command itself gets the system's programs back.
NO_BWRAP = {"PATH": str(Path(PY).parent)}
SYSTEM_PATH = "PATH=/usr/bin:/bin; "


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def prepared(home: Path) -> Path:
    """$OMEGA_HOME with a config.toml holding a key (0600) and memory.db made by `status`."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    config.write_text('[provider.anthropic]\napi_key = "sk-landlock-only-4242"\n')
    config.chmod(0o600)
    assert run_omega("status", env=NO_BWRAP).returncode == 0
    assert mode(home) == 0o700
    return config


def records(home: Path) -> tuple[list[dict[str, object]], list[str]]:
    """The audit rows of the repair and the owner alerts kept."""
    store = Store(store_location(home / "memory.db"))
    try:
        rows = [r for r in store.audit_entries(200) if r["event"] == EVENT]
        return rows, [a.text for a in store.pending_owner_alerts()]
    finally:
        store.close()


@pytest.mark.no_store
def test_landlock_alone_here_without_bwrap_on_path() -> None:
    status = probe("sandbox")
    assert status.enforcement.startswith("landlock"), status.describe()
    assert not shutil.which("bwrap", path=NO_BWRAP["PATH"])


@pytest.mark.no_store
@pytest.mark.parametrize("mode", ["sandbox", "rx", "rwx"])
def test_the_guard_runs_only_where_no_namespace_hides_omega_home(
    tmp_path: Path, mode: Mode
) -> None:
    paths = OmegaPaths(tmp_path)
    section = SandboxSection(mode=mode)
    alone = Sandbox(section, paths, status=probe(mode, namespace=""), platform="linux")
    assert alone.home_exposed
    walled = Sandbox(section, paths, status=probe(mode), platform="linux")
    assert walled.home_exposed == (mode == "rwx")


def test_modes_of_omegas_files_are_put_back_after_the_command(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    config = prepared(isolated_env)
    command = f"{SYSTEM_PATH}chmod 666 {config}; chmod 777 {isolated_env}; ls -ld {isolated_env}"
    out = chat(fake_openai, [tool_call("m", "run_shell", command=command)], **NO_BWRAP)["m"]
    assert "drwxrwxrwx" in out, out  # the attack got through while the command ran
    assert mode(config) == 0o600
    assert mode(isolated_env) == 0o700
    rows, alerts = records(isolated_env)
    (row,) = rows
    assert "tool call m:" in str(row["detail"])
    assert f"{config}: 0600 -> 0666, restored" in str(row["detail"])
    assert f"{isolated_env}: 0700 -> 0777, restored" in str(row["detail"])
    assert "chmod 666" in str(row["input_text"])
    (alert,) = [a for a in alerts if "permissions of Omega's own files" in a]
    assert "config.toml" in alert and "put back" in alert


def test_a_home_locked_out_is_opened_again(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    prepared(isolated_env)
    db = isolated_env / "memory.db"
    before = mode(db) if db.exists() else None
    home = isolated_env
    command = f"{SYSTEM_PATH}chmod 000 {home}/memory.db {home}/skills {home}"
    chat(fake_openai, [tool_call("z", "run_shell", command=command)], **NO_BWRAP)
    assert mode(isolated_env) == 0o700
    assert mode(isolated_env / "skills") == 0o700
    if before is not None:  # the SQLite store (PostgreSQL keeps no memory.db)
        assert mode(db) == 0o600
    rows, _ = records(isolated_env)
    assert len(rows) == 1 and "restored" in str(rows[0]["detail"])


def test_ordinary_chmod_in_the_workspace_triggers_nothing(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    prepared(isolated_env)
    command = (
        f"{SYSTEM_PATH}printf '#!/bin/sh\\necho script-ran-ok\\n' > script.sh && "
        "chmod +x script.sh && ./script.sh"
    )
    out = chat(fake_openai, [tool_call("s", "run_shell", command=command)], **NO_BWRAP)["s"]
    assert "script-ran-ok" in out and "exit code 0" in out, out
    rows, alerts = records(isolated_env)
    assert rows == []
    assert not [a for a in alerts if "permissions of Omega's own files" in a]


@pytest.mark.no_store
def test_what_cannot_be_put_back_is_reported(tmp_path: Path) -> None:
    """Fail closed: a path that can no longer be looked at, or was replaced, is unrestored."""
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "config.toml").write_text("x")
    (home / "config.toml").chmod(0o600)
    home.chmod(0o700)
    before = snapshot(watched(home, home / "workspace"))
    assert str(home / "workspace") not in before
    assert next(iter(before)) == str(home)
    (home / "config.toml").unlink()
    (home / "config.toml").mkdir()  # another kind of file in its place
    (repair,) = check(before)
    assert not repair.restored and "another kind" in repair.note
