"""`omega chat --jsonl` end to end against the scripted OpenAI-compatible server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step


def audit_rows(home: Path) -> list[sqlite3.Row]:
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    rows = list(conn.execute("SELECT * FROM audit_log WHERE event = 'exchange' ORDER BY id"))
    conn.close()
    return rows


def test_replies_use_system_prompt_and_remember_history(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Nice to meet you, Ana."), Step(text="You are Ana.")]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai),
        stdin=jsonl(
            {"text": "Hi, my name is Ana", "sender_id": "ana"},
            {"text": "What is my name?", "sender_id": "ana"},
        ),
    )
    assert result.returncode == 0, result.stderr
    replies = [(e["to"], e["text"]) for e in result.events if e["kind"] == "reply"]
    assert replies == [("ana", "Nice to meet you, Ana."), ("ana", "You are Ana.")]
    first, second = fake_openai.requests
    assert first.path == "/v1/chat/completions"
    assert first.body["model"] == "fake-model"
    assert "You are Omega" in first.system_text
    assert first.headers.get("authorization") == "Bearer sk-test-secret-key-0123456789"
    # The second call carries the first exchange from memory.db.
    contents = [m["content"] for m in second.messages if m["role"] != "system"]
    assert contents == ["Hi, my name is Ana", "Nice to meet you, Ana.", "What is my name?"]
    assert [r["status"] for r in audit_rows(isolated_env)] == ["ok", "ok"]
    assert audit_rows(isolated_env)[0]["provider"] == "openai"


def test_history_survives_a_restart_and_stays_per_sender(fake_openai: FakeOpenAI) -> None:
    env = openai_env(fake_openai)
    run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "remember 7", "sender_id": "a"}))
    result = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl(
            {"text": "what number?", "sender_id": "a"},
            {"text": "and for me?", "sender_id": "b"},
        ),
    )
    assert result.returncode == 0, result.stderr
    by_sender = {r.last_user_text: r for r in fake_openai.requests}
    a_turns = [m["content"] for m in by_sender["what number?"].messages if m["role"] != "system"]
    assert a_turns == ["remember 7", "echo: remember 7", "what number?"]
    b_turns = [m["content"] for m in by_sender["and for me?"].messages if m["role"] != "system"]
    assert b_turns == ["and for me?"]


def test_bad_lines_are_reported_and_the_rest_still_answered(fake_openai: FakeOpenAI) -> None:
    stdin = 'not json\n{"sender_id": "x"}\n\n' + jsonl({"text": "still here?"})
    result = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin=stdin)
    assert result.returncode == 0, result.stderr
    events = [e for e in result.events if e["kind"] != "welcome"]
    assert [e["kind"] for e in events] == ["error", "error", "reply"]
    assert "line 1" in str(events[0]["text"])
    assert events[2]["text"] == "echo: still here?"


def test_busy_sender_gets_ack_and_strict_order(fake_openai: FakeOpenAI) -> None:
    env = openai_env(fake_openai)
    run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hi", "sender_id": "a"}))
    fake_openai.requests.clear()  # a's welcome is behind them: the burst below is acknowledged
    fake_openai.default_delay = 0.4
    result = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl(
            {"text": "first", "sender_id": "a"},
            {"text": "second", "sender_id": "a"},
            {"text": "third", "sender_id": "a"},
        ),
    )
    assert result.returncode == 0, result.stderr
    acks = [e for e in result.events if e["kind"] == "ack"]
    replies = [e["text"] for e in result.events if e["kind"] == "reply"]
    assert len(acks) == 2
    assert acks[0]["text"] == "Got it, I'll get to this next."
    assert replies == ["echo: first", "echo: second", "echo: third"]
    # One provider call at a time for this sender: requests arrived in the same order.
    assert [r.last_user_text for r in fake_openai.requests] == ["first", "second", "third"]


def test_different_senders_are_answered_concurrently(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_delay = 2.0
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_LIMITS__MAX_CONCURRENT_PROVIDER_CALLS="8"),
        stdin=jsonl(*({"text": f"hello {i}", "sender_id": f"s{i}"} for i in range(5))),
    )
    assert result.returncode == 0, result.stderr
    assert sorted(str(e["to"]) for e in result.events if e["kind"] == "reply") == [
        f"s{i}" for i in range(5)
    ]
    assert not [e for e in result.events if e["kind"] == "ack"]
    # The five slow answers were asked for at the same time, not one after another.
    assert fake_openai.max_in_flight == 5


def test_provider_error_gives_friendly_message_and_error_audit(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # One attempt (issue 38: the SDK's own retries are off): a 5xx says the provider is down.
    fake_openai.script = [Step(status=500), Step(text="fine now")]
    env = openai_env(fake_openai)
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hello?"}))
    assert result.returncode == 0, result.stderr
    [event] = [e for e in result.events if e["kind"] != "welcome"]
    assert event["kind"] == "error"
    assert event["text"] == "My AI provider is not available right now. Please try again later."
    assert "500" not in str(event["text"])
    [row] = audit_rows(isolated_env)
    assert row["status"] == "error"
    assert "500" in row["detail"]
    assert "Traceback" not in result.stderr
    log = (isolated_env / "omega.log").read_text()
    assert "provider error" in log


def test_provider_timeout_gives_friendly_message(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(hang_secs=5)]
    env = openai_env(fake_openai, OMEGA_PROVIDER__TIMEOUT_SECS="1")
    result = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": "slow?"}, {"text": "quick?"})
    )
    assert result.returncode == 0, result.stderr
    texts = [(e["kind"], e["text"]) for e in result.events if e["kind"] in ("error", "reply")]
    assert texts[0] == ("error", "Sorry, that took too long and I had to stop. Please try again.")
    assert texts[1] == ("reply", "echo: quick?")
    assert [r["status"] for r in audit_rows(isolated_env)] == ["error", "ok"]


def test_secrets_never_reach_logs_or_output(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    env = openai_env(fake_openai, OMEGA_OMEGA__LOG_LEVEL="debug")
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hi"}))
    assert result.returncode == 0
    status = run_omega("status", env=env)
    secret = "sk-test-secret-key-0123456789"
    log = (isolated_env / "omega.log").read_text()
    assert "DEBUG" in log  # the debug level really was on
    for text in (log, result.stdout, result.stderr, status.stdout, status.stderr):
        assert secret not in text
    assert "set (hidden)" in status.stdout


def test_kill_9_mid_reply_loses_nothing(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    """A hard kill during a provider call; the restart answers every message, in order."""
    import os
    import subprocess
    import time

    from tests.conftest import OMEGA_BIN

    fake_openai.script = [Step(text="never delivered", hang_secs=20)]
    env = dict(os.environ, **openai_env(fake_openai))
    proc = subprocess.Popen(
        [OMEGA_BIN, "chat", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(jsonl({"text": "one"}, {"text": "two"}))
    proc.stdin.flush()
    deadline = time.monotonic() + 20
    while not fake_openai.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_openai.requests, "the first message never reached the provider"
    time.sleep(0.3)  # let the second message be received and buffered
    proc.kill()
    proc.wait()
    result = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin="")
    assert result.returncode == 0, result.stderr
    assert [e["text"] for e in result.events if e["kind"] == "reply"] == ["echo: one", "echo: two"]
    conn = connect_db(isolated_env / "memory.db")
    pending = conn.execute("SELECT COUNT(*) FROM inbox WHERE status = 'pending'").fetchone()[0]
    conn.close()
    assert pending == 0
