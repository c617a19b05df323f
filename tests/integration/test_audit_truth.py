"""Issue 28, truth in the records: every request the provider answers is in the audit log with
its tokens, once. A realistic session against the scripted OpenAI-compatible server: a chat
with classification on, a tool call, introspection, a gap analysed into a proposal, the
summaries and facts of the conversation, a heartbeat, `omega ask` and `omega ask --tools`."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from omega.loops.heartbeat import run_heartbeat
from omega.loops.summarizer import summarize_all_active
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Step
from tests.fakes.outbox import Recorder
from tests.integration.test_evolution_e2e import GAP, PROPOSAL
from tests.integration.test_tool_loop import tool_call

OWNER = '["terminal:ana"]'


def rows(home: Path, sql: str) -> list[sqlite3.Row]:
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    found = list(conn.execute(sql))
    conn.close()
    return found


def continues_a_tool_loop(request: RecordedRequest) -> bool:
    """A request that carries tool results: the same answer's next round, not a new call."""
    return any(m.get("role") == "tool" for m in request.messages)


def session_env(server: FakeOpenAI) -> dict[str, str]:
    return openai_env(
        server,
        OMEGA_PROVIDER__OPENAI__MODEL="gpt-4o-mini",  # a model genai-prices knows: costs too
        OMEGA_AUTH__OWNERS=OWNER,
        OMEGA_EVOLUTION__INTROSPECT_INTERVAL="1",  # the tool call below starts introspection
        OMEGA_EVOLUTION__MAX_RETRIES="1",
        OMEGA_HEARTBEAT__CHANNEL="terminal",
        OMEGA_HEARTBEAT__REPLY_TARGET="ana",
    )


def test_every_request_the_server_answers_has_an_audit_row_with_its_usage(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    env = session_env(fake_openai)
    fake_openai.script = [
        Step(text='{"kind": "direct"}', planner=True),
        Step(match="run the build", tool_calls=[tool_call("c1", "run_shell", command="exit 3")]),
        Step(match="run the build", text="The build failed with exit code 3."),
        Step(text=GAP, planner=True),
        Step(text=PROPOSAL, match="capability analyst"),
        Step(match="Summarize", text="Ana ran a build that failed and asked for email."),
        Step(match="facts", text="none"),
        Step(match="HEARTBEAT", text="HEARTBEAT_OK"),
        Step(match="What is in my workspace", tool_calls=[tool_call("c2", "list_files")]),
        Step(match="What is in my workspace", text="Nothing much."),
    ]
    chat = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl(
            {"text": "please run the build script for me", "sender_id": "ana"},
            {"text": "send an email to my landlord about the leak", "sender_id": "ana"},
        ),
        timeout=120,
    )
    assert chat.returncode == 0, chat.stderr
    deps = make_deps(**env)
    (isolated_env / "HEARTBEAT.md").write_text("- check that the backups ran\n")
    assert asyncio.run(summarize_all_active(deps)) >= 1
    assert asyncio.run(run_heartbeat(deps, Recorder())) is None  # all fine
    lean = run_omega("ask", "What is the capital of France?", env=env)
    assert lean.returncode == 0, lean.stderr
    tooled = run_omega("ask", "--tools", "What is in my workspace?", env=env)
    assert tooled.returncode == 0, tooled.stderr
    assert tooled.stdout.strip() == "Nothing much."

    audited = rows(
        isolated_env,
        "SELECT event, input_tokens, output_tokens, cost_usd FROM audit_log "
        "WHERE provider != '' AND (input_tokens > 0 OR output_tokens > 0)",
    )
    answered = fake_openai.answered
    calls = [usage for request, usage in answered if not continues_a_tool_loop(request)]
    # One row per provider call (a tool loop's rounds are one call), and each request's tokens
    # counted exactly once.
    assert len(audited) == len(calls), [r["event"] for r in audited]
    assert sum(r["input_tokens"] for r in audited) == sum(u["prompt_tokens"] for _, u in answered)
    assert sum(r["output_tokens"] for r in audited) == sum(
        u["completion_tokens"] for _, u in answered
    )
    events = {r["event"] for r in audited}
    assert {
        "classify",
        "exchange",
        "introspection",
        "analysis",
        "summary",
        "facts",
        "heartbeat",
        "ask",
    } <= events, events
    priced = [r for r in audited if r["event"] != "ask" or r["cost_usd"] is not None]
    assert all(r["cost_usd"] and r["cost_usd"] > 0 for r in priced), [dict(r) for r in priced]
    # The aggregated proposal row carries no tokens any more (they are in the analysis rows).
    (proposal,) = rows(isolated_env, "SELECT * FROM audit_log WHERE event LIKE 'proposal:%'")
    assert (proposal["input_tokens"], proposal["cost_usd"]) == (0, None)
    # `omega ask --tools` records its tool calls.
    recorded = rows(isolated_env, "SELECT tool, ok, channel FROM tool_calls ORDER BY id")
    assert [(r["tool"], r["ok"], r["channel"]) for r in recorded] == [
        ("run_shell", 0, "terminal"),
        ("list_files", 1, "cli"),
    ]


def test_a_failing_ask_is_audited_as_an_error(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    fake_openai.script = [Step(status=400, text="bad request")]
    result = run_omega("ask", "hello there", env=openai_env(fake_openai))
    assert result.returncode == 1
    (row,) = rows(isolated_env, "SELECT * FROM audit_log WHERE event = 'ask'")
    assert (row["status"], row["provider"], row["sender_id"]) == ("error", "openai", "cli")
    assert "HTTP 400" in row["detail"]
