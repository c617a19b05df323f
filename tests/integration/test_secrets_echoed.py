"""Secrets echoed back never get stored: a provider's error that quotes a configured key (the
provider's own, or another login Omega holds) reaches neither omega.log, stderr nor the audit
log; a tool's output that carries a registered secret across the record's 300-character cut
leaves no piece of it in the tool_calls table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step

OWNER = '["terminal:ana"]'


def _rows_with(home: Path, table: str, needle: str) -> tuple[int, list[list[str]]]:
    """How many rows `table` has, and the text columns of those holding `needle`."""
    conn = connect_db(home / "memory.db")
    try:
        rows = list(conn.execute(f"SELECT * FROM {table}"))
    finally:
        conn.close()
    hits = [[str(v) for v in row if isinstance(v, str) and needle in v] for row in rows]
    return len(rows), [hit for hit in hits if hit]


@pytest.mark.parametrize(
    ("where", "key"),
    [
        ("OMEGA_PROVIDER__OLLAMA__API_KEY", "ollamaKEY-Zq-4242-abcdef"),
        ("config:claude-code.oauth_token", "claudeOAUTH-Zq-5353-abcdef"),
        ("config:claude-code.api_key", "claudeAPIKEY-Zq-6464-abcdef"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "envOAUTH-Zq-7575-abcdef"),
    ],
)
def test_a_provider_error_echoing_a_key_leaves_it_nowhere(
    fake_openai: FakeOpenAI, isolated_env: Path, where: str, key: str
) -> None:
    fake_openai.script = [
        Step(status=401, text=f"Invalid key provided in header: Authorization: Key {key}")
    ] * 6
    fake_openai.default_status = 401
    env = {
        "OMEGA_PROVIDER__DEFAULT": "ollama",
        "OMEGA_PROVIDER__OLLAMA__BASE_URL": fake_openai.base_url,
        "OMEGA_PROVIDER__OLLAMA__MODEL": "fake-model",
        "OMEGA_AUTH__OWNERS": OWNER,
    }
    if where.startswith("config:"):
        section, name = where.removeprefix("config:").split(".")
        isolated_env.mkdir(parents=True, exist_ok=True)
        (isolated_env / "config.toml").write_text(f'[provider.{section}]\n{name} = "{key}"\n')
    else:
        env[where] = key
    result = run_omega("ask", "hello", env=env)
    assert result.returncode != 0
    log = (isolated_env / "omega.log").read_text()
    assert "Invalid key provided" in log  # the error was logged, the key redacted
    assert key not in log
    assert key not in result.stdout + result.stderr
    count, hits = _rows_with(isolated_env, "audit_log", key)
    assert count >= 1
    assert hits == []


def _tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def test_a_secret_across_the_preview_cut_is_redacted_whole(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    key = "customKEY0123456789abcdefghijABCDEFGHIJ"  # no credential shape: only registered
    padding = 250
    command = f"head -c {padding} /dev/zero | tr '\\0' x; echo; echo {key}"
    fake_openai.script = [
        Step(tool_calls=[_tool_call("call_1", "run_shell", command=command)]),
        Step(text="done."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=OWNER, OMEGA_PROVIDER__OPENAI__API_KEY=key),
        stdin=jsonl({"text": "run it", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    conn = connect_db(isolated_env / "memory.db")
    try:
        rows = list(conn.execute("SELECT arguments, error, result_preview FROM tool_calls"))
    finally:
        conn.close()
    (row,) = rows
    preview = str(row[2])
    # The key starts well inside the 300-character cut: cut first, most of it would stay.
    start = preview.index("x" * padding) + padding + 1
    assert start + 8 < 297, preview
    stored = " ".join(str(value) for value in row)
    pieces = [key[i : i + 8] for i in range(len(key) - 7)]
    assert [piece for piece in pieces if piece in stored] == []
