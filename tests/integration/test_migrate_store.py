"""`omega migrate-store`: an existing home's memory moves from SQLite to PostgreSQL, verified
by counts and checksums, and Omega then answers from it with nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omega.memory import Store
from omega.ops.migrate_store import table_checksum
from omega.ops.runlock import hold_running
from omega.types import IncomingMessage
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.postgres import PostgresServer

pytestmark = pytest.mark.sqlite_only  # the source is the home's SQLite file


def _a_lived_in_home(home: Path) -> None:
    store = Store(home / "memory.db", exact=True)
    store.store_exchange("cli", "ana", "My café is Flor in Lisboa", "Noted: Flor.")
    store.set_fact("ana", "name", "Ana")
    store.set_fact("ana", "note", "weird\0byte and 100% sure")
    store.inbox_put(IncomingMessage(channel="cli", sender_id="ana", text="hello", id="m-1"))
    store.close_active_conversation("cli", "ana")
    store.store_exchange("cli", "ana", "second conversation", "ok")
    store.close()


def test_a_home_moves_to_postgresql_verified_and_omega_answers_from_it(
    isolated_env: Path, postgres_server: PostgresServer, fake_openai: FakeOpenAI
) -> None:
    _a_lived_in_home(isolated_env)
    url = postgres_server.empty_database()
    result = run_omega("migrate-store", "--from", "sqlite", "--to", url)
    assert result.returncode == 0, result.stderr
    assert "every table verified" in result.stdout
    lines = {
        line.split()[0]: int(line.split()[1])
        for line in result.stdout.splitlines()
        if "rows  sha256" in line
    }
    assert lines["messages"] == 4 and lines["facts"] == 2 and lines["inbox"] == 1

    source = Store(isolated_env / "memory.db", exact=True)
    target = Store(url, exact=True)
    for table in ("messages", "facts", "conversations", "inbox", "audit_log"):
        mine = [tuple(r) for r in source.query(f"SELECT * FROM {table}")]
        cols = ", ".join(r[1] for r in source.query(f"PRAGMA table_info({table})"))
        theirs = [tuple(r) for r in target.query(f"SELECT {cols} FROM {table}")]
        assert table_checksum(mine) == table_checksum(theirs), table
    # Identity counters moved past the copied ids: new rows do not collide.
    target.store_exchange("cli", "bob", "new here", "welcome")
    assert len(target.query("SELECT id FROM messages")) == 6
    source.close()
    target.close()

    # Omega on the PostgreSQL store remembers what it knew on SQLite.
    fake_openai.script = [Step(text="Your café is Flor.")]
    config = isolated_env / "config.toml"
    config.write_text(f'[store]\nurl = "{url}"\n')
    chat = run_omega(
        "chat",
        "--jsonl",
        stdin=jsonl({"text": "where is my cafe?", "sender_id": "ana"}),
        env=openai_env(fake_openai),
    )
    assert chat.returncode == 0, chat.stderr
    assert json.loads(chat.stdout.splitlines()[-1])["text"] == "Your café is Flor."
    prompt = json.dumps(fake_openai.requests[-1].body)
    assert "Flor in Lisboa" in prompt  # recalled from a migrated conversation (tsvector)
    assert "Ana" in prompt  # a migrated fact


def test_a_target_with_data_is_refused(isolated_env: Path, postgres_server: PostgresServer) -> None:
    _a_lived_in_home(isolated_env)
    url = postgres_server.new_database()
    busy = Store(url, exact=True)
    busy.set_fact("zoe", "name", "Zoe")
    busy.close()
    result = run_omega("migrate-store", "--from", "sqlite", "--to", url)
    assert result.returncode == 1
    assert "already holds data" in result.stderr
    kept = Store(url, exact=True)
    assert kept.facts("ana") == {} and kept.facts("zoe") == {"name": "Zoe"}
    kept.close()


def test_copying_is_refused_while_omega_runs(
    isolated_env: Path, postgres_server: PostgresServer
) -> None:
    _a_lived_in_home(isolated_env)
    url = postgres_server.empty_database()
    hold = hold_running(isolated_env)
    try:
        result = run_omega("migrate-store", "--to", url)
    finally:
        import os

        os.close(hold)
    assert result.returncode == 1
    assert "stop it first" in result.stderr


def test_a_url_is_required_and_its_password_never_shown(isolated_env: Path) -> None:
    _a_lived_in_home(isolated_env)
    assert run_omega("migrate-store", "--to", "/tmp/x.db").returncode == 2
    result = run_omega("migrate-store", "--to", "postgresql://omega:s3cret-pw@127.0.0.1:1/none")
    assert result.returncode == 1
    assert "s3cret-pw" not in result.stdout + result.stderr


def test_status_and_backup_say_memory_is_on_postgresql(
    isolated_env: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.new_database().replace("postgres@", "postgres:pw-hidden@")
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(f'[store]\nurl = "{url}"\n')
    status = run_omega("status")
    assert status.returncode in (0, 1), status.stderr
    assert "PostgreSQL postgresql://" in status.stdout
    backup = run_omega("backup")
    assert backup.returncode == 0, backup.stderr
    assert "Memory is on PostgreSQL" in backup.stdout and "pg_dump" in backup.stdout
    assert "pw-hidden" not in status.stdout + backup.stdout
