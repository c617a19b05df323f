"""A stable prompt prefix providers can cache (issue 27): the system prompt's stable part and the
tool schemas are byte-identical across a person's turns, the per-turn parts come after them,
Anthropic gets cache points there, and the cached tokens a provider reports reach the audit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes import anthropic_server
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI, Step

ANTHROPIC_ENV = {
    "OMEGA_PROVIDER__DEFAULT": "anthropic",
    "OMEGA_PROVIDER__ANTHROPIC__API_KEY": "sk-ant-test-secret-0123456789",
    "OMEGA_PROVIDER__ANTHROPIC__MODEL": "claude-sonnet-4-6",
}
TWO_TURNS = jsonl(
    {"text": "my garden needs water", "sender_id": "ana"},
    {"text": "and the budget for the garden?", "sender_id": "ana"},
)


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running scripted Anthropic Messages API server."""
    with FakeAnthropic() as server:
        yield server


def cached_tokens(home: Path) -> list[int]:
    conn = connect_db(home / "memory.db")
    rows = conn.execute("SELECT cached_tokens FROM audit_log WHERE event = 'exchange' ORDER BY id")
    found = [int(row[0]) for row in rows]
    conn.close()
    return found


def blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    system = body["system"]
    assert isinstance(system, list), "the system prompt is sent as blocks"
    return system


def test_anthropic_prefix_is_identical_marked_and_before_the_turn(
    fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    fake_anthropic.script = [
        anthropic_server.Step(text="Noted.", cache_read_tokens=0),
        anthropic_server.Step(text="About 20 euros.", cache_read_tokens=1200),
    ]
    env = dict(ANTHROPIC_ENV, OMEGA_PROVIDER__ANTHROPIC__BASE_URL=fake_anthropic.base_url)
    result = run_omega("chat", "--jsonl", env=env, stdin=TWO_TURNS)
    assert result.returncode == 0, result.stderr
    first, second = fake_anthropic.requests
    one, two = blocks(first.body), blocks(second.body)
    # The stable prefix: the same bytes on both turns, a cache point right after it.
    assert json.dumps(one[0]) == json.dumps(two[0])
    assert one[0]["cache_control"]["type"] == "ephemeral"
    assert "You are Omega" in one[0]["text"] and "SCHEDULE:" in one[0]["text"]
    # What changes per turn comes after it, in the next block, never in the prefix.
    for turn in (one, two):
        assert "Current time:" not in turn[0]["text"]
        assert "Current time:" in turn[1]["text"]
    assert "my garden needs water" not in two[0]["text"]
    # Tool schemas: the same bytes on both turns, cached after the last one.
    assert first.body.get("tools"), "the owner's tools are offered"
    assert json.dumps(first.body["tools"]) == json.dumps(second.body["tools"])
    assert first.body["tools"][-1]["cache_control"]["type"] == "ephemeral"
    assert cached_tokens(isolated_env) == [0, 1200]


def test_openai_prefix_is_identical_and_cached_tokens_are_audited(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Noted."), Step(text="About 20 euros.", cached_tokens=512)]
    result = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin=TWO_TURNS)
    assert result.returncode == 0, result.stderr
    first, second = fake_openai.requests
    one, two = first.system_text, second.system_text
    cut = one.index("Current time:")
    assert "SCHEDULE:" in one[:cut]
    # Everything before the turn's part is the same bytes on both turns; the time and what
    # memory adds for this message (facts, recall) come after it.
    assert two.index("Current time:") == cut and one[:cut] == two[:cut]
    assert json.dumps(first.body.get("tools")) == json.dumps(second.body.get("tools"))
    assert cached_tokens(isolated_env) == [0, 512]
