"""Issue 40: a reply that offers tools makes its first request directly, with the tools the
agent would offer, and enters pydantic-ai's agent graph only when the model calls a tool.
Through the real reply path (handle_message, the configured provider) against the scripted
OpenAI-compatible server over HTTP."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from omega.config import Config
from omega.gateway.pipeline import handle_message
from omega.paths import OmegaPaths
from omega.providers import api, build_provider
from omega.turn import PipelineDeps
from omega.types import ChatMessage, Context, IncomingMessage, McpServer
from tests.conftest import MakeDeps, openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"
PRICED = "gpt-4o-mini"  # a model genai-prices knows, so every answer has a cost


@pytest.fixture
def agent_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per pydantic-ai agent run started in this process."""
    from pydantic_ai import Agent

    runs: list[int] = []
    original = Agent.run

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(Agent, "run", counted)
    return runs


@pytest.fixture
def deps(make_deps: MakeDeps, fake_openai: FakeOpenAI) -> PipelineDeps:
    """The pipeline as `omega start` builds it, its provider on the scripted server; Ana is
    the owner (the tools are hers) and no planning call comes first."""
    env = openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__MODEL=PRICED)
    return make_deps(**env, OMEGA_PROVIDER__CLASSIFY="false", OMEGA_AUTH__OWNERS='["terminal:ana"]')


def say(deps: PipelineDeps, text: str) -> list[str]:
    """Ana's message through the reply path; the replies sent."""
    out = Recorder()
    message = IncomingMessage("terminal", "ana", text, assurance="local")
    asyncio.run(handle_message(deps, message, out))
    return [m.text for m in out.sent if m.kind == "reply"]


def rows(home: Path, sql: str) -> list[sqlite3.Row]:
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    found = list(conn.execute(sql))
    conn.close()
    return found


def exchange(home: Path) -> sqlite3.Row:
    """The one audit row of the reply's provider call."""
    (row,) = rows(home, "SELECT * FROM audit_log WHERE event = 'exchange'")
    return row


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_a_reply_that_calls_no_tool_is_one_request_outside_the_agent_graph(
    deps: PipelineDeps, fake_openai: FakeOpenAI, isolated_env: Path, agent_runs: list[int]
) -> None:
    assert say(deps, "what about the garden budget?") == ["echo: what about the garden budget?"]
    (request,) = fake_openai.requests  # one HTTP request
    assert "x-stainless-lang" not in request.headers  # sent lean, without the OpenAI SDK
    assert {"read_file", "write_file", "run_shell"} <= set(tool_names(request.body))
    assert agent_runs == []  # no agent run
    ((_, usage),) = fake_openai.answered
    row = exchange(isolated_env)
    assert (row["status"], row["provider"]) == ("ok", "openai")
    assert (row["input_tokens"], row["output_tokens"]) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert row["cost_usd"] and row["cost_usd"] > 0
    assert rows(isolated_env, "SELECT * FROM tool_calls") == []


def test_a_reply_that_calls_a_tool_runs_it_in_the_agent_and_answers(
    deps: PipelineDeps, fake_openai: FakeOpenAI, isolated_env: Path, agent_runs: list[int]
) -> None:
    fake_openai.script = [
        Step(tool_calls=[tool_call("call_1", "write_file", path="notes.txt", content="hello")]),
        Step(text="Saved it to notes.txt."),
    ]
    assert say(deps, "save hello in notes.txt") == ["Saved it to notes.txt."]
    assert (isolated_env / "workspace" / "notes.txt").read_text() == "hello"
    first, second = fake_openai.requests
    assert "x-stainless-lang" not in first.headers  # the first sent lean (lean_api)
    assert agent_runs == [1]  # the agent took over from the first response
    assert tool_names(first.body) == tool_names(second.body)
    assert second.messages[: len(first.messages)] == first.messages
    (told,) = [m for m in second.messages if m.get("role") == "tool"]
    assert (told["tool_call_id"], told["content"]) == ("call_1", "wrote 5 bytes to notes.txt")
    (recorded,) = rows(isolated_env, "SELECT * FROM tool_calls")
    assert (recorded["tool"], recorded["ok"], recorded["sender_id"]) == ("write_file", 1, "ana")
    assert json.loads(recorded["arguments"]) == {"path": "notes.txt", "content": "hello"}
    # One audit row for the answer, with both requests' tokens and cost.
    row = exchange(isolated_env)
    answered = [usage for _, usage in fake_openai.answered]
    assert row["input_tokens"] == sum(u["prompt_tokens"] for u in answered)
    assert row["output_tokens"] == sum(u["completion_tokens"] for u in answered)
    assert row["cost_usd"] and row["cost_usd"] > 0


def test_an_empty_first_answer_is_asked_again_and_both_are_billed(
    deps: PipelineDeps, fake_openai: FakeOpenAI, isolated_env: Path, agent_runs: list[int]
) -> None:
    """A first response with neither text nor a tool call is not taken as the answer (the agent
    would not take it either): a whole agent run asks again; both requests are audited."""
    fake_openai.script = [Step(text=""), Step(text="Here it is.")]
    assert say(deps, "what about the garden budget?") == ["Here it is."]
    first, second = fake_openai.requests
    assert "x-stainless-lang" not in first.headers  # the first sent lean (lean_api)
    assert second.messages == first.messages and second.body["tools"] == first.body["tools"]
    assert agent_runs == [1]
    row = exchange(isolated_env)
    answered = [usage for _, usage in fake_openai.answered]
    assert row["input_tokens"] == sum(u["prompt_tokens"] for u in answered)
    assert row["output_tokens"] == sum(u["completion_tokens"] for u in answered)


def test_the_tool_round_limit_counts_the_first_request(
    deps: PipelineDeps,
    fake_openai: FakeOpenAI,
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api, "MAX_TOOL_ROUNDS", 2)
    fake_openai.script = [Step(tool_calls=[tool_call(f"c{i}", "list_files")]) for i in range(3)] + [
        Step(text="done")
    ]
    assert say(deps, "list the files again and again") == ["done"]
    assert len(fake_openai.requests) == 4  # MAX_TOOL_ROUNDS + 2, the first one included
    recorded = rows(isolated_env, "SELECT tool, ok, error FROM tool_calls ORDER BY id")
    assert [(r["tool"], r["ok"]) for r in recorded] == [("list_files", 1)] * 2 + [("list_files", 0)]
    assert "tool-call limit reached (2 rounds)" in recorded[-1]["error"]


@pytest.mark.parametrize("allowed", [None, frozenset({"read_file", "calc_add"})])
def test_the_first_request_is_the_one_the_agent_sends(
    fake_openai: FakeOpenAI,
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    allowed: frozenset[str] | None,
) -> None:
    """The same call sent directly, then with the agent making its first request (as when a
    tool is more than a plain function): the same body, built-in and MCP tools alike."""
    from omega.tools.wrappers import RecordingToolset

    section = {"base_url": fake_openai.base_url, "api_key": "sk-test", "model": PRICED}
    config = Config.model_validate({"provider": {"openai": section}})
    provider = build_provider("openai", config, OmegaPaths(isolated_env))
    context = Context(
        system_prompt="You are a test assistant.",
        messages=[
            ChatMessage("user", "Hi"),
            ChatMessage("assistant", "Hello"),
            ChatMessage("user", "Sum?"),
        ],
        use_tools=True,
        allowed_tools=allowed,
        max_tokens=300,
        mcp_servers=(McpServer("calc", sys.executable, (str(ECHO_SERVER),)),),
    )
    direct = asyncio.run(provider.complete(context))

    async def only_the_agent(self: Any, ctx: Any) -> None:
        return None

    monkeypatch.setattr(RecordingToolset, "definitions", only_the_agent)
    through_agent = asyncio.run(provider.complete(context))
    first, second = fake_openai.requests
    assert first.body == second.body
    names = set(tool_names(first.body))
    assert {"calc_add", "read_file"} <= names
    assert allowed is None or "write_file" not in names  # a guest's own tools only
    assert direct.text == through_agent.text == "echo: Sum?"
    assert direct.usage == through_agent.usage


def test_an_anthropic_first_request_is_the_one_the_agent_sends(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Anthropic's cache points (after the tool schemas, after the prompt's stable prefix)
    the direct first request is byte for byte the agent's too."""
    from omega.tools.wrappers import RecordingToolset
    from tests.fakes.anthropic_server import FakeAnthropic

    prefix = "You are a test assistant.\n\nBe brief."
    context = Context(
        system_prompt=prefix + "\n\nIt is Sunday.",
        stable_prefix=prefix,
        messages=[ChatMessage("user", "Sum?")],
        use_tools=True,
    )

    async def only_the_agent(self: Any, ctx: Any) -> None:
        return None

    with FakeAnthropic() as server:
        section = {"base_url": server.base_url, "api_key": "sk-ant-test", "model": "claude-x"}
        config = Config.model_validate({"provider": {"anthropic": section}})
        provider = build_provider("anthropic", config, OmegaPaths(isolated_env))
        direct = asyncio.run(provider.complete(context))
        monkeypatch.setattr(RecordingToolset, "definitions", only_the_agent)
        through_agent = asyncio.run(provider.complete(context))
        first, second = server.requests
    assert first.body == second.body
    assert {"read_file", "write_file"} <= {tool["name"] for tool in first.body["tools"]}
    assert "cache_control" in first.body["tools"][-1]
    assert direct.text == through_agent.text
