"""Issue 17, played as an attacker through `omega chat --jsonl` with the scripted provider:
strangers cost nothing, a huge message is cut (and the sender told), big attachments are
refused, and secrets stay out of the audit log, `omega status` and the tools' environment."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path

from omega.gateway.pipeline import handle_message
from omega.types import IncomingMessage
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder
from tests.integration.test_tool_loop import tool_call

ONLY_ALICE = {"OMEGA_CHANNEL__TERMINAL__ALLOWED_USERS": '["alice"]'}


def db_bytes(home: Path) -> bytes:
    """Everything memory.db holds on disk, its WAL included (freed pages too)."""
    return b"".join(p.read_bytes() for p in sorted(home.glob("memory.db*")) if p.is_file())


def query(home: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    conn = connect_db(home / "memory.db")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_a_stranger_costs_nothing_and_is_answered_once_a_day(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(fake_openai, **ONLY_ALICE)
    blob = base64.b64encode(os.urandom(1_000_000)).decode("ascii")
    spam = [
        {
            "text": f"stranger-secret-{i} " + "x" * 100_000,
            "sender_id": "mallory",
            "attachments": [{"kind": "document", "name": "big.bin", "data": blob}],
        }
        for i in range(5)
    ]
    result = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl(*spam, {"text": "hello", "sender_id": "alice"})
    )
    assert result.returncode == 0, result.stderr
    to_mallory = [e for e in result.events if e["to"] == "mallory"]
    assert [e["kind"] for e in to_mallory] == ["denied"]  # no "Got it", one denial
    assert any(e["to"] == "alice" and e["kind"] == "reply" for e in result.events)
    assert all("stranger-secret" not in r.last_user_text for r in fake_openai.requests)
    # Nothing of the stranger's messages was ever written: not in the inbox, not in the audit,
    # not in a freed page, not as an attachment file.
    assert b"stranger-secret" not in db_bytes(isolated_env)
    assert len(db_bytes(isolated_env)) < 2_000_000
    inbox_dir = isolated_env / "workspace" / "inbox"
    assert not inbox_dir.exists() or not any(inbox_dir.iterdir())
    denied = query(
        isolated_env, "SELECT input_text, status FROM audit_log WHERE sender_id = 'mallory'"
    )
    assert denied == [("", "denied")]

    # A restart does not answer the stranger again within the day.
    again = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": "hello?", "sender_id": "mallory"})
    )
    assert again.returncode == 0, again.stderr
    assert [e for e in again.events if e["to"] == "mallory"] == []
    assert len(query(isolated_env, "SELECT id FROM audit_log WHERE sender_id = 'mallory'")) == 1

    # A day later they are answered (and audited) once more, with how many were dropped.
    conn = connect_db(isolated_env / "memory.db")
    conn.execute("UPDATE denials SET last_at = '2000-01-01T00:00:00.000000Z'")
    conn.commit()
    conn.close()
    later = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": "anyone?", "sender_id": "mallory"})
    )
    assert [e["kind"] for e in later.events if e["to"] == "mallory"] == ["denied"]
    details = query(
        isolated_env, "SELECT detail FROM audit_log WHERE sender_id = 'mallory' ORDER BY id"
    )
    assert len(details) == 2
    assert "5 more message(s) dropped" in str(details[1][0])


def test_the_pipeline_denies_through_the_one_deny_and_keeps_nothing_of_the_stranger(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    """A stranger's message handed straight to the pipeline (not through the gateway's front
    door) is denied the same way: answered and audited once a day, their text never stored."""
    deps = make_deps(**openai_env(fake_openai, **ONLY_ALICE))
    out = Recorder()
    for i in range(3):
        message = IncomingMessage(
            "terminal", "mallory", f"stranger-secret-{i}", "Mallory", assurance="local"
        )
        asyncio.run(handle_message(deps, message, out))
    deps.store.close()  # all of it in the database file before its bytes are read
    assert [(m.target, m.kind) for m in out.sent] == [("mallory", "denied")]
    assert fake_openai.requests == []
    assert b"stranger-secret" not in db_bytes(isolated_env)
    audited = query(
        isolated_env,
        "SELECT input_text, output_text, status, event FROM audit_log WHERE sender_id = 'mallory'",
    )
    assert audited == [("", "", "denied", "denied")]


def test_a_huge_message_is_cut_and_never_carried_again(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    huge = "word " * 2_000_000  # 10 MB
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai),
        stdin=jsonl({"text": huge}, {"text": "and now?"}),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    [notice] = [e for e in result.events if e["kind"] == "notice"]
    assert "first 20000 of 10000000 characters" in str(notice["text"])
    assert len([e for e in result.events if e["kind"] == "reply"]) == 2
    first, second = fake_openai.requests
    assert len(first.last_user_text) <= 20_000
    assert sum(len(str(m.get("content", ""))) for m in second.messages) < 100_000
    assert len(db_bytes(isolated_env)) < 3_000_000
    longest = query(isolated_env, "SELECT MAX(LENGTH(content)) FROM messages")[0][0]
    assert isinstance(longest, int) and longest <= 20_100  # the cut text, or its echo


def test_an_attachment_over_the_limit_is_refused_with_a_clear_message(
    fake_openai: FakeOpenAI,
) -> None:
    small = base64.b64encode(b"shopping: milk, eggs\n").decode("ascii")
    big = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 10_000).decode("ascii")
    message = {
        "text": "see my files",
        "attachments": [
            {"kind": "image", "name": "holiday.png", "data": big},
            {"kind": "document", "name": "notes.txt", "mime_type": "text/plain", "data": small},
        ],
    }
    env = openai_env(fake_openai, OMEGA_LIMITS__MAX_ATTACHMENT_BYTES="2048")
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl(message))
    assert result.returncode == 0, result.stderr
    [notice] = [e for e in result.events if e["kind"] == "notice"]
    assert str(notice["text"]) == (
        "I did not take your file 'holiday.png': it is 9.8 KB, and the limit is 2.0 KB."
    )
    [request] = fake_openai.requests
    assert request.last_user_text.count("[Attached file:") == 1  # the small one still came
    assert ".txt]" in request.last_user_text


def test_a_bad_attachment_is_an_error_for_that_line_only(fake_openai: FakeOpenAI) -> None:
    bad = {"text": "x", "attachments": [{"kind": "image", "data": "not base64!"}]}
    result = run_omega(
        "chat", "--jsonl", env=openai_env(fake_openai), stdin=jsonl(bad, {"text": "fine"})
    )
    assert result.returncode == 0, result.stderr
    [error] = [e for e in result.events if e["kind"] == "error"]
    assert error["to"] is None and "not valid base64" in str(error["text"])
    assert [e["text"] for e in result.events if e["kind"] == "reply"] == ["echo: fine"]


def test_the_audit_never_keeps_a_secret_the_provider_echoed(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    key = "plain-looking-credential-42xyz"  # no known key shape: redacted because configured
    fake_openai.script = [Step(status=400, text=f"Incorrect API key provided: {key}")] * 3
    env = openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__API_KEY=key)
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hi"}))
    assert result.returncode == 0, result.stderr
    assert [e["kind"] for e in result.events if e["kind"] in ("reply", "error")] == ["error"]
    assert key not in result.stdout
    rows = query(isolated_env, "SELECT detail, status FROM audit_log WHERE status = 'error'")
    assert rows and all("[REDACTED]" in str(detail) for detail, _ in rows)
    assert key.encode() not in db_bytes(isolated_env)
    assert key not in (isolated_env / "omega.log").read_text()


def test_status_hides_credentials_in_a_base_url(fake_openai: FakeOpenAI) -> None:
    env = openai_env(
        fake_openai,
        OMEGA_PROVIDER__OPENAI__BASE_URL="https://bob:hunter2-password@llm.example.invalid/v1",
    )
    result = run_omega("status", env=env)
    assert result.returncode == 0, result.stderr
    assert "hunter2-password" not in result.stdout
    assert "bob:" not in result.stdout
    assert "https://***@llm.example.invalid/v1" in result.stdout


def test_run_shell_gets_no_credentials_from_omegas_environment(fake_openai: FakeOpenAI) -> None:
    leaked = {
        "AWS_ACCESS_KEY_ID": "AKIA-leak-0001",
        "DATABASE_URL": "postgres://app:dbpass-leak-0002@db/prod",
        "SSH_AUTH_SOCK": "/tmp/agent-leak-0003.sock",
    }
    fake_openai.script = [
        Step(tool_calls=[tool_call("c1", "run_shell", command="env")]),
        Step(text="Here is the environment."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, **leaked),
        stdin=jsonl({"text": "print the environment"}),
    )
    assert result.returncode == 0, result.stderr
    _, after_tool = fake_openai.requests
    sent = json.dumps(after_tool.body)
    assert "PATH=" in sent  # the tool did run and its output went back to the model
    for name, value in leaked.items():
        assert name not in sent and value not in sent
