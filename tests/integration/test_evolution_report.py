"""Prompt fragments and the self-evolution report through the real entry points: gaps found in
`omega chat --jsonl` become proposals; the owner approves one with `omega proposals approve
--promote`; its notes reach the next limitation analysis the provider receives, until the owner
deactivates the fragment with /fragments (a guest is refused); `omega fragments` lists, shows
and reactivates it; `omega evolution report` (rich and --json) shows all of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import CliResult, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step

NOTE = "Prefer drafts the owner sends himself"
ANALYST = "capability analyst"


def gap(capability: str) -> Step:
    """The planner's answer for a request no tool or skill can do."""
    text = json.dumps(
        {"kind": "requires_new_skill", "missing_capability": capability, "reason": "No tool."}
    )
    return Step(text=text, planner=True)


def proposal(name: str, description: str) -> Step:
    """The limitation analysis' answer: a low-risk skill."""
    spec = {
        "kind": "skill",
        "name": name,
        "category": "other",
        "description": description,
        "inputs": {"type": "object", "properties": {}},
        "side_effects": [],
        "risk_level": "low",
        "os_permissions": [],
        "rationale": "Omega cannot do it yet.",
        "alternative_approaches": [],
        "trigger_phrases": [name.split("-")[0]],
        "content": f"When asked, {description.lower()}",
    }
    return Step(text=json.dumps(spec), match=ANALYST)


def owner(text: str) -> dict[str, object]:
    return {"text": text, "sender_id": "owner"}


def omega(*args: str, **env: str) -> CliResult:
    return run_omega(*args, env={"COLUMNS": "220", **env})


def test_fragments_from_cli_and_chat_and_the_report(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(
        fake_openai, OMEGA_HEARTBEAT__CHANNEL="terminal", OMEGA_HEARTBEAT__REPLY_TARGET="owner"
    )
    fake_openai.script = [
        gap("send email"),
        proposal("email-composer", "Draft emails the person can send from their mail client."),
    ]
    first = run_omega("chat", "--jsonl", env=env, stdin=jsonl(owner("Send an email to my boss")))
    assert first.returncode == 0, first.stderr
    approved = omega("proposals", "approve", "1", "--note", NOTE, "--promote")
    assert approved.returncode == 0, approved.stderr
    listed = omega("fragments", "list")
    assert listed.stdout.startswith(
        f"[1] active: {NOTE} (review notes of proposal #1, promoted by owner (cli), "
    )
    assert "feeds introspection_evaluation, limitation_analysis)" in listed.stdout

    fake_openai.script = [
        gap("print documents"),
        proposal("print-helper", "Prepare documents so the person can print them at home."),
        gap("fax [b]letters[/b]"),
        proposal("fax-helper", "Turn letters into PDF pages the person can fax elsewhere."),
    ]
    second = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl(
            owner("Print my report"),
            {"text": "/fragments deactivate 1", "sender_id": "mallory"},
            owner("/fragments deactivate 1"),
            owner("/fragments 1"),
            owner("Fax this letter"),
        ),
    )
    assert second.returncode == 0, second.stderr
    analyses = [r.last_user_text for r in fake_openai.requests if ANALYST in r.last_user_text]
    assert len(analyses) == 3  # email (before the promotion), print, fax
    analyses = analyses[1:]
    assert f"Guidance from earlier reviews:\n- {NOTE}" in analyses[0]  # print: injected
    assert NOTE not in analyses[1]  # fax: after the owner deactivated it
    commands = [str(e["text"]) for e in second.events if e["kind"] == "command"]
    assert "Only my owner can do that." in commands
    assert f"Deactivated prompt fragment #1: {NOTE}" in commands
    [shown] = [c for c in commands if c.startswith("Prompt fragment #1")]
    assert "(inactive)" in shown.splitlines()[0]
    assert "From: review notes of proposal #1, promoted by owner (cli)" in shown
    assert "deactivated by owner (terminal:owner)" in shown

    assert omega("fragments", "list").stdout == "No active prompt fragments.\n"
    assert omega("fragments", "list", "--all").stdout.startswith(f"[1] inactive: {NOTE}")
    again = omega("fragments", "deactivate", "1")
    assert again.returncode == 1
    assert again.stderr.endswith("omega: prompt fragment #1 is already inactive\n")
    assert omega("fragments", "reactivate", "1").stdout.startswith("Reactivated prompt fragment #1")
    assert omega("fragments", "show", "7").returncode == 1
    huge = omega("fragments", "deactivate", str(10**30))  # past any row id: a usage error
    assert huge.returncode == 2 and "9223372036854775807" in huge.stderr
    history = omega("fragments", "show", "1").stdout.split("History:\n")[1].splitlines()
    assert [line.split(" ", 2)[2] for line in history] == [
        "promoted by owner (cli)",
        "deactivated by owner (terminal:owner)",
        "reactivated by owner (cli)",
    ]

    report = omega("evolution", "report", "--json")
    assert report.returncode == 0, report.stderr
    check_report(json.loads(report.stdout))
    shown_report = omega("evolution", "report", "--days", "3")
    assert shown_report.returncode == 0, shown_report.stderr
    for text in (
        "What Omega learned",
        NOTE,
        "fax [b]letters[/b]",  # printed as it is: never read as rich markup
        "The gate's decisions",
        "email-composer",
        "manual_review",
        "self_evolution",
        "proposal:approved",
    ):
        assert text in shown_report.stdout, text
    assert omega("evolution", "report", "--days", "0").returncode == 2


# The documented JSON shape of `omega evolution report --json` (docs/evolution.md, the report).
SCHEMA: dict[str, Any] = {
    "version": int,
    "period": {"since", "until"},
    "learned": {"learning", "lesson", "fragment"},
    "gaps": {"opened", "closed", "open_now"},
    "proposals": {"filed", "decided", "now"},
    "cost": {"events", "self_evolution", "background"},
    "gate": {"verdicts", "decisions"},
    "critic": {"tools", "issues", "recommendations", "satisfaction"},
}
LEARNED_KEYS = {"kind", "text", "scope", "source", "at", "active"}
GAP_KEYS = {
    "id",
    "title",
    "source",
    "reported_by",
    "status",
    "created_at",
    "resolved_at",
    "resolved_by",
    "resolution",
}
COST_KEYS = {
    "event",
    "group",
    "calls",
    "errors",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "unpriced",
}
VERDICT_KEYS = {
    "proposal_id",
    "kind",
    "name",
    "source",
    "action",
    "errors",
    "warnings",
    "risk",
    "status",
    "reviewed_by",
    "reviewer_notes",
    "created_at",
}
DECISION_KEYS = {"at", "event", "by", "status", "subject", "detail"}


def check_report(data: dict[str, Any]) -> None:
    """The report's JSON holds the documented keys and what the scenario did."""
    from omega.evolution.reflection.report import REPORT_KEYS

    assert tuple(data) == REPORT_KEYS
    for key, shape in SCHEMA.items():
        if isinstance(shape, set):
            assert set(data[key]) == shape, key
        else:
            assert isinstance(data[key], shape), key
    [fragment] = data["learned"]["fragment"]
    assert set(fragment) == LEARNED_KEYS
    assert (fragment["text"], fragment["active"]) == (NOTE, True)
    opened = data["gaps"]["opened"]
    assert all(set(g) == GAP_KEYS for g in opened)
    assert [g["title"] for g in opened] == ["send email", "print documents", "fax [b]letters[/b]"]
    assert data["gaps"]["open_now"] == 3
    assert data["proposals"]["filed"] == {"pending": 2, "approved": 1, "rejected": 0}
    assert data["proposals"]["decided"] == {"pending": 0, "approved": 1, "rejected": 0}
    events = {c["event"]: c for c in data["cost"]["events"]}
    assert all(set(c) == COST_KEYS for c in events.values())
    # The three analyses' tokens, each call on its own `analysis` row; the gate's model judge
    # of each proposal on `gate_judge` rows; the proposal:new rows carry none.
    assert events["analysis"]["calls"] == 3
    assert events["analysis"]["input_tokens"] > 0
    assert events["gate_judge"]["calls"] >= 3
    assert events["gate_judge"]["group"] == "self_evolution"
    assert events.get("proposal:new", {}).get("input_tokens", 0) == 0
    assert "proposal:approved" not in events  # a review is no provider call
    assert "exchange" not in events  # replies to people are not self-evolution
    totals = data["cost"]["self_evolution"]
    assert totals["calls"] == sum(
        c["calls"] for c in events.values() if c["group"] == "self_evolution"
    )
    verdicts = data["gate"]["verdicts"]
    assert all(set(v) == VERDICT_KEYS for v in verdicts)
    assert [(v["name"], v["action"], v["status"]) for v in verdicts] == [
        ("email-composer", "manual_review", "approved"),
        ("print-helper", "manual_review", "pending"),
        ("fax-helper", "manual_review", "pending"),
    ]
    assert verdicts[0]["reviewed_by"] == "owner (cli)"
    decisions = data["gate"]["decisions"]
    assert all(set(d) == DECISION_KEYS for d in decisions)
    assert [d["event"] for d in decisions].count("proposal:new") == 3
    assert any(d["event"] == "proposal:approved" and d["by"] == "owner (cli)" for d in decisions)
