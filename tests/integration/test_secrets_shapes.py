"""Credentials nobody registered are still hidden by their shape: a provider's error that
echoes the `Authorization: Basic` header made from its URL's user and password reaches neither
omega.log, stderr nor the audit log; a URL whose password holds an unescaped `@`, an AWS
credentials line or a `passwd=` in a tool's output leave no piece in the tool_calls table."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step

OWNER = '["terminal:ana"]'


def _stored(home: Path, table: str) -> str:
    """Every value of every row of `table`, as one text."""
    conn = connect_db(home / "memory.db")
    try:
        rows = list(conn.execute(f"SELECT * FROM {table}"))
    finally:
        conn.close()
    assert rows, f"{table} is empty"
    return "\n".join(str(value) for row in rows for value in row)


def test_an_echoed_basic_authorization_header_leaves_it_nowhere(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    user_password = "omegauser:Zq-proxy-pass-4242"  # the password is registered, not this
    basic = base64.b64encode(user_password.encode()).decode()
    fake_openai.script = [
        Step(status=401, text=f"bad credentials; you sent Authorization: Basic {basic}")
    ] * 6
    fake_openai.default_status = 401
    base_url = fake_openai.base_url.replace("://", f"://{user_password}@", 1)
    env = {
        "OMEGA_PROVIDER__DEFAULT": "ollama",
        "OMEGA_PROVIDER__OLLAMA__BASE_URL": base_url,
        "OMEGA_PROVIDER__OLLAMA__MODEL": "fake-model",
        "OMEGA_AUTH__OWNERS": OWNER,
    }
    result = run_omega("ask", "hello", env=env)
    assert result.returncode != 0
    log = (isolated_env / "omega.log").read_text()
    assert "bad credentials" in log  # the error was logged, its credential hidden
    assert basic not in log
    assert basic not in result.stdout + result.stderr
    assert basic not in _stored(isolated_env, "audit_log")


def _tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


@pytest.mark.parametrize(
    ("printed", "secret"),
    [
        ("remote: https://deploy:Zq7@hidden-4711@git.example.org/repo.git", "hidden-4711"),
        ("aws_secret_access_key = Zq8wJalrXUtnFEMIK7MDENG", "Zq8wJalrXUtnFEMIK7MDENG"),
        ("db passwd=Zq9-hunter-2222", "Zq9-hunter-2222"),
    ],
)
def test_a_credential_in_a_tool_output_is_hidden_by_its_shape(
    fake_openai: FakeOpenAI, isolated_env: Path, printed: str, secret: str
) -> None:
    fake_openai.script = [
        Step(tool_calls=[_tool_call("call_1", "run_shell", command=f"echo '{printed}'")]),
        Step(text="done."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=OWNER),
        stdin=jsonl({"text": "run it", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    conn = connect_db(isolated_env / "memory.db")
    try:
        rows = list(conn.execute("SELECT result_preview FROM tool_calls"))
    finally:
        conn.close()
    (row,) = rows
    assert "[REDACTED]" in str(row[0]) or "***@" in str(row[0]), row
    assert secret not in str(row[0])
