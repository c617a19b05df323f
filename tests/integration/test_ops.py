"""Operations through the real `omega` command: version and schema, backup and restore."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from omega import __version__
from omega.memory.migrations import latest_version
from tests.conftest import OMEGA_BIN, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI


def test_version_and_status_show_the_schema(isolated_env: Path) -> None:
    result = run_omega("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"omega {__version__} (database schema {latest_version()})"
    status = run_omega("status")
    assert status.returncode == 0, status.stderr
    row = next(line for line in status.stdout.splitlines() if line.startswith("schema"))
    assert row.split()[1] == str(latest_version())


@pytest.mark.sqlite_only  # memory.db is in the backup; PostgreSQL is pg_dump's
def test_backup_and_restore_from_the_command_line(
    fake_openai: FakeOpenAI, isolated_env: Path, tmp_path: Path
) -> None:
    env = openai_env(fake_openai)
    assert run_omega("chat", "--jsonl", stdin=jsonl({"text": "one"}), env=env).returncode == 0
    made = run_omega("backup", str(tmp_path / "backups"), env=env)
    assert made.returncode == 0, made.stderr
    (folder,) = (tmp_path / "backups").iterdir()
    assert str(folder) in made.stdout
    assert run_omega("chat", "--jsonl", stdin=jsonl({"text": "two"}), env=env).returncode == 0

    refused = run_omega("restore", str(folder), env=env)  # stdin is no terminal: no confirmation
    assert refused.returncode == 1 and "--yes" in refused.stderr

    restored = run_omega("restore", "--yes", str(folder), env=env)
    assert restored.returncode == 0, restored.stderr
    status = run_omega("status", env=env)
    assert ["messages", "2"] in [line.split() for line in status.stdout.splitlines()]


@pytest.mark.no_store
def test_backup_of_a_home_without_memory_db_keeps_what_is_there(
    isolated_env: Path, tmp_path: Path
) -> None:
    """A home set up by hand (config, prompt, a skill) before Omega ever stored a message is
    backed up and restored whole; it used to be refused as "nothing to back up yet"."""
    isolated_env.mkdir(parents=True)
    (isolated_env / "config.toml").write_text('[omega]\nname = "Omega"\n')
    (isolated_env / "SYSTEM_PROMPT.md").write_text("## Identity\nMine.\n")
    (isolated_env / "skills" / "notes").mkdir(parents=True)
    (isolated_env / "skills" / "notes" / "SKILL.md").write_text("---\nname: notes\n---\nx\n")
    assert not (isolated_env / "memory.db").exists()
    made = run_omega("backup", str(tmp_path / "backups"))
    assert made.returncode == 0, made.stderr
    (folder,) = (tmp_path / "backups").iterdir()
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "SYSTEM_PROMPT.md",
        "config.toml",
        "manifest.json",
        "skills/notes/SKILL.md",
    ]
    (isolated_env / "SYSTEM_PROMPT.md").write_text("changed")
    restored = run_omega("restore", "--yes", str(folder))
    assert restored.returncode == 0, restored.stderr
    assert (isolated_env / "SYSTEM_PROMPT.md").read_text() == "## Identity\nMine.\n"


@pytest.mark.no_store
def test_backup_of_an_empty_home_is_refused_with_a_reason(
    isolated_env: Path, tmp_path: Path
) -> None:
    result = run_omega("backup", str(tmp_path / "backups"))
    assert result.returncode == 1
    assert "nothing to back up" in result.stderr


def test_restore_is_refused_while_omega_start_runs(
    fake_openai: FakeOpenAI, isolated_env: Path, tmp_path: Path
) -> None:
    env = openai_env(fake_openai)
    assert run_omega("status", env=env).returncode == 0
    folder_out = run_omega("backup", str(tmp_path / "b"), env=env)
    assert folder_out.returncode == 0, folder_out.stderr
    (folder,) = (tmp_path / "b").iterdir()
    proc = subprocess.Popen(
        [OMEGA_BIN, "start", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, **env),
    )
    try:
        lock = isolated_env / "omega.lock"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if lock.exists() and lock.read_text().strip() == str(proc.pid):
                break
            time.sleep(0.1)
        result = run_omega("restore", "--yes", str(folder), env=env)
        assert result.returncode == 1
        assert f"Omega is running on {isolated_env} (pid {proc.pid})" in result.stderr
        assert not list(isolated_env.glob("pre-restore-*"))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert run_omega("restore", "--yes", str(folder), env=env).returncode == 0


def test_google_workspace_listed_as_not_installed_until_gog_is_on_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    listed = run_omega("skills", "list", env={"PATH": str(bin_dir)})
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("google-workspace"))
    assert line.endswith("not installed: needs gog")
    (bin_dir / "gog").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "gog").chmod(0o755)
    listed = run_omega("skills", "list", env={"PATH": str(bin_dir)})
    line = next(x for x in listed.stdout.splitlines() if x.startswith("google-workspace"))
    assert line.endswith(", installed")


def test_start_tells_systemd_it_is_ready_and_stopping(
    fake_openai: FakeOpenAI, isolated_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        server.settimeout(60)
        proc = subprocess.Popen(
            [OMEGA_BIN, "start"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            # The stop's own deadline is tested in test_stop_deadline.py; here a clean exit is
            # asked for, and on a loaded 2-core machine (the PostgreSQL suite beside the chaos
            # test) the store's last writes once took longer than the default 10 s.
            env=dict(
                os.environ,
                **openai_env(fake_openai),
                NOTIFY_SOCKET=str(path),
                OMEGA_SERVICE__STOP_TIMEOUT_SECS="60",
            ),
        )
        try:
            assert server.recv(64) == b"READY=1"
            proc.send_signal(signal.SIGTERM)
            assert server.recv(64) == b"STOPPING=1"
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.no_store
def test_service_install_dry_run_prints_the_unit(isolated_env: Path, tmp_path: Path) -> None:
    result = run_omega("service", "install", "--dry-run", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    header, *unit = result.stdout.splitlines()
    assert header == f"# {tmp_path}/systemd/user/omega.service"
    assert "Type=notify" in unit and f"Environment=OMEGA_HOME={isolated_env}" in unit
    assert not (tmp_path / "systemd").exists()  # nothing written


def test_self_check_in_status_chat_and_start_log(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(fake_openai, OMEGA_CHANNEL__TELEGRAM__ENABLED="true")
    status = run_omega("status", env=env)
    assert status.returncode == 0, status.stderr
    # one "key  value" row per check, like every other row of omega status
    rows = [line for line in status.stdout.splitlines() if line.startswith("check ")]
    assert any(r.startswith("check database") and "ok - writable, schema" in r for r in rows)
    assert any(r.startswith("check provider openai") and " ok - " in r for r in rows)
    failed = "FAILED - enabled without a bot token -> set"
    assert any(r.startswith("check telegram") and failed in r for r in rows)
    assert fake_openai.requests == []  # reachability costs no completion

    chat = run_omega("chat", "--jsonl", stdin=jsonl({"text": "/status"}), env=env)
    [reply] = [e for e in chat.events if e["kind"] == "command"]
    # 6 checks with the security audit's; it has no high finding here, the sandbox's own
    # check warns where bubblewrap is missing
    assert "Self-check: 5 of 6 ok" in str(reply["text"]) or (
        "Self-check: 4 of 6 ok" in str(reply["text"]) and "- sandbox: warning" in str(reply["text"])
    )
    assert "- security:" not in str(reply["text"])
    assert "telegram: FAILED" in str(reply["text"])

    proc = subprocess.Popen(
        [OMEGA_BIN, "start"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **env),
    )
    try:
        deadline = time.monotonic() + 30
        log = isolated_env / "omega.log"
        # Every check's line, the channels' last (waiting for the disk's alone let a loaded
        # machine stop Omega before the telegram line was written).
        while time.monotonic() < deadline and not all(
            f"self-check {name}" in (log.read_text() if log.exists() else "")
            for name in ("database", "disk", "telegram")
        ):
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    text = log.read_text()
    assert "self-check telegram: FAILED - enabled without a bot token" in text
    assert "self-check database: ok" in text
