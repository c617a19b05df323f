"""The daily spending cap (`[limits] daily_usd`, turn/spend.py) through the pipeline, with the
scripted server reporting usage (a priced model, so every answer has a cost): background work
stops at 80% of the cap and the owner is told once; replies go on until the cap itself, then
the person gets an honest message in their language and the refusal is audited."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from omega import i18n
from omega.app import bootstrap
from omega.loops.heartbeat import run_heartbeat
from omega.loops.summarizer import summarize_all_active
from omega.memory import Store
from omega.memory.audit import AuditEntry
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder
from tests.integration.test_tool_loop import tool_call

CAP = 1.0


def spent_already(home: Path, usd: float) -> None:
    """Today's earlier calls cost `usd` (one audited answer)."""
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    try:
        store.audit(
            AuditEntry(
                channel="terminal",
                sender_id="owner",
                status="ok",
                event="exchange",
                provider="openai",
                model="gpt-4o-mini",
                input_tokens=1000,
                cost_usd=usd,
            )
        )
    finally:
        store.close()


def audit(home: Path, where: str) -> list[sqlite3.Row]:
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    found = list(conn.execute(f"SELECT * FROM audit_log WHERE {where} ORDER BY id"))
    conn.close()
    return found


def capped_env(server: FakeOpenAI) -> dict[str, str]:
    return openai_env(
        server,
        OMEGA_PROVIDER__OPENAI__MODEL="gpt-4o-mini",  # priced by genai-prices
        OMEGA_LIMITS__DAILY_USD=str(CAP),
        OMEGA_AUTH__OWNERS='["terminal:owner"]',
        OMEGA_HEARTBEAT__CHANNEL="terminal",
        OMEGA_HEARTBEAT__REPLY_TARGET="owner",
        OMEGA_EVOLUTION__INTROSPECT_INTERVAL="1",  # each tool call would start introspection
    )


def test_background_work_stops_first_and_the_owner_is_told_once(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    # Just under 80% spent: the first answer's reported usage crosses the background line.
    spent_already(isolated_env, 0.8 * CAP - 1e-9)
    fake_openai.script = [
        Step(match="build", tool_calls=[tool_call("c1", "run_shell", command="echo built")]),
        Step(match="build", text="Built."),
        Step(match="tests", tool_calls=[tool_call("c2", "run_shell", command="echo passed")]),
        Step(match="tests", text="Passed."),
    ]
    env = capped_env(fake_openai)
    result = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl(
            {"text": "please run the build script for me", "sender_id": "owner"},
            {"text": "now please run the tests for me", "sender_id": "owner"},
        ),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert [e["text"] for e in result.events if e["kind"] == "reply"] == ["Built.", "Passed."]
    alerts = [str(e["text"]) for e in result.events if e["kind"] == "alert"]
    assert len(alerts) == 1 and "daily cap" in alerts[0] and "background" in alerts[0]
    # Later background work, in process: summaries, facts and the heartbeat are refused too.
    deps = make_deps(**env)
    (isolated_env / "HEARTBEAT.md").write_text("- check that the backups ran\n")
    asyncio.run(summarize_all_active(deps))
    asyncio.run(run_heartbeat(deps, Recorder()))
    asked = [r.last_user_text for r in fake_openai.requests + fake_openai.planner_requests]
    assert not [t for t in asked if "Analyse these actions" in t or "Summarize" in t], asked
    assert not [t for t in asked if "heartbeat" in t.lower()], asked
    refused = audit(isolated_env, "status = 'denied' AND provider != ''")
    assert {r["event"] for r in refused} == {"introspection", "summary", "facts", "heartbeat"}
    assert all(r["cost_usd"] is None and "daily spending cap" in r["detail"] for r in refused)
    (told,) = audit(isolated_env, "event LIKE 'spending_cap:%'")
    assert told["event"] == "spending_cap:background"
    # What crossed the line is the answers' own reported usage, priced.
    assert audit(isolated_env, "event = 'exchange' AND status = 'ok'")[-1]["cost_usd"] > 0


def test_replies_stop_at_the_cap_with_an_honest_message_in_the_persons_language(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    spent_already(isolated_env, CAP)
    result = run_omega(
        "chat",
        "--jsonl",
        env=capped_env(fake_openai),
        stdin=jsonl(
            {"text": "please tell me what the weather is like today", "sender_id": "owner"},
            {
                "text": "Kannst du mir bitte sagen, wie das Wetter heute ist und was ich "
                "anziehen soll?",
                "sender_id": "lena",
            },
        ),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert fake_openai.requests == [] and fake_openai.planner_requests == []
    # Two people, two turns side by side: which is told first is not the point.
    errors = {e["to"]: str(e["text"]) for e in result.events if e["kind"] == "error"}
    assert errors == {
        "owner": i18n.message("error_spending_cap", "English"),
        "lena": i18n.message("error_spending_cap", "German"),
    }
    refused = audit(isolated_env, "event IN ('exchange', 'classify') AND status = 'denied'")
    assert sorted(r["event"] for r in refused) == ["classify", "classify", "exchange", "exchange"]
    assert all("daily spending cap" in r["detail"] for r in refused)
    assert [r["event"] for r in audit(isolated_env, "event LIKE 'spending_cap:%'")] == [
        "spending_cap:replies"
    ]
    alerts = [str(e["text"]) for e in result.events if e["kind"] == "alert"]
    assert len(alerts) == 1 and "replies to people are paused" in alerts[0]


def test_no_cap_reads_nothing_and_refuses_nothing(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    spent_already(isolated_env, 1000.0)
    env = capped_env(fake_openai) | {"OMEGA_LIMITS__DAILY_USD": "0"}
    result = run_omega("ask", "What is the capital of France?", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "echo: What is the capital of France?"
