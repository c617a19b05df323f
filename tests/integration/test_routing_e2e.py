"""Classify and route end to end: the planner's call, a 12-step plan, a missing skill."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step


def test_a_request_is_classified_with_the_fast_model(fake_openai: FakeOpenAI) -> None:
    env = openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__MODEL_COMPLEX="big-model")
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "sort out my week"}))
    assert result.returncode == 0, result.stderr
    [planning] = fake_openai.planner_requests
    assert planning.body["model"] == "fake-model"
    assert "tools" not in planning.body
    assert "Request: sort out my week" in planning.last_user_text
    assert fake_openai.requests[0].body["model"] == "fake-model"


def test_hi_costs_one_provider_call_with_classification_on(fake_openai: FakeOpenAI) -> None:
    """Issue 27: a greeting or a plain question needs no routing call; a request that may
    need several steps still gets one."""
    env = openai_env(fake_openai, OMEGA_PROVIDER__CLASSIFY="true")
    result = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl({"text": "hi"}, {"text": "What is the capital of France?"}),
    )
    assert result.returncode == 0, result.stderr
    assert [e["text"] for e in result.events if e["kind"] == "reply"] == [
        "echo: hi",
        "echo: What is the capital of France?",
    ]
    assert fake_openai.planner_requests == []
    assert len(fake_openai.requests) == 2  # everything the server received: one call each
    plan = {"kind": "steps", "steps": [{"do": "find the invoice"}, {"do": "email it"}]}
    fake_openai.script = [Step(text=json.dumps(plan), planner=True)]
    result = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": "find the invoice and email it to Bob"})
    )
    assert result.returncode == 0, result.stderr
    assert len(fake_openai.planner_requests) == 1
    statuses = [str(e["text"]) for e in result.events if e["kind"] == "status"]
    assert statuses[0].startswith("Plan:\n1. find the invoice")


def test_twelve_step_plan_runs_every_step(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    plan = {"kind": "steps", "steps": [{"do": f"part {i}"} for i in range(1, 13)]}
    fake_openai.script = [Step(text=json.dumps(plan), planner=True)]
    env = openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__MODEL_COMPLEX="big-model")
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "do the big job"}))
    assert result.returncode == 0, result.stderr
    statuses = [str(e["text"]) for e in result.events if e["kind"] == "status"]
    assert [s for s in statuses if s.startswith("✓")] == [
        f"✓ Step {i}/12: part {i}" for i in range(1, 13)
    ]
    assert len([e for e in result.events if e["kind"] == "reply"]) == 1
    step_requests = fake_openai.requests[:12]
    assert all(r.body["model"] == "big-model" for r in step_requests)
    assert "Now do step 12: part 12" in step_requests[11].last_user_text
    conn = connect_db(isolated_env / "memory.db")
    steps = conn.execute("SELECT COUNT(*) FROM audit_log WHERE event = 'step'").fetchone()[0]
    conn.close()
    assert steps == 12


def test_requires_new_skill_reply(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [
        Step(
            text=json.dumps(
                {
                    "kind": "requires_new_skill",
                    "missing_capability": "send email",
                    "reason": "There is no email tool.",
                }
            ),
            planner=True,
        )
    ]
    result = run_omega(
        "chat", "--jsonl", env=openai_env(fake_openai), stdin=jsonl({"text": "email my boss"})
    )
    assert [e["text"] for e in result.events if e["kind"] == "reply"] == [
        "I can't do that yet: send email. There is no email tool."
    ]
    # No answer was generated; the only other call was the analysis of the new limitation.
    assert all("capability analyst" in r.last_user_text for r in fake_openai.requests)


def test_a_plan_that_needs_a_missing_tool_stops_and_records_a_gap(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """Spec 004 §3.1 hard rule 3: the planner's plan names `send_fax`, which does not exist.
    Omega runs none of the plan, does not answer as if it were done, records the gap with
    source "planner", and tells the person (and the owner)."""
    plan = {
        "kind": "steps",
        "steps": [
            {"do": "read the contract", "uses": ["read_file"]},
            {"do": "fax it to the bank", "uses": ["send_fax"]},
        ],
    }
    fake_openai.script = [Step(text=json.dumps(plan), planner=True)]
    env = openai_env(
        fake_openai, OMEGA_HEARTBEAT__CHANNEL="terminal", OMEGA_HEARTBEAT__REPLY_TARGET="owner"
    )
    line = {"text": "read the contract and fax it to the bank", "id": "f1"}
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl(line))
    assert result.returncode == 0, result.stderr
    [reply] = [str(e["text"]) for e in result.events if e["kind"] == "reply"]
    assert reply.startswith("I can't do that yet: the tool send_fax.")
    assert "fax it to the bank" in reply
    assert not any(e["kind"] == "status" for e in result.events)  # no plan shown, none run
    # The only calls: the planner's, and the analysis of the new gap (no step, no answer).
    assert all(
        r in fake_openai.planner_requests or "capability analyst" in r.last_user_text
        for r in fake_openai.requests
    )
    conn = connect_db(isolated_env / "memory.db")
    try:
        gaps = conn.execute("SELECT title, source FROM limitations").fetchall()
        steps = conn.execute("SELECT COUNT(*) FROM audit_log WHERE event = 'step'").fetchone()
    finally:
        conn.close()
    assert gaps == [("the tool send_fax", "planner")]
    assert steps == (0,)
    assert any("send_fax" in str(e["text"]) for e in result.events if e["kind"] == "alert")
