"""The gate, procedural memory, the validation loop, registration, introspection and the
critic — and the safety properties they must hold."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from omega.app import bootstrap
from omega.config import Config
from omega.evolution.gaps import LimitationStore
from omega.evolution.gate import Policy
from omega.evolution.gate.gate import GateDecision, check_proposal
from omega.evolution.gate.signals import Judgement
from omega.evolution.proposals import (
    ProposalStore,
    ReviewError,
    approve,
    reject,
    review_files,
    validated_json,
)
from omega.evolution.reflection import maybe_introspect
from omega.evolution.reflection.critic import average_satisfaction, review_tools, tool_effectiveness
from omega.evolution.reflection.introspection import timeline
from omega.memory import Store
from omega.memory.artefacts import ArtefactStore
from omega.tools.human import load_human_tools
from omega.turn import PipelineDeps, local_owner_id
from omega.types import Reply, ToolCall, Usage
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider

GOOD: dict[str, Any] = {
    "name": "weather-report",
    "description": "Report the weather for a city.",
    "category": "network",
    "inputs": {"type": "object", "properties": {"city": {"type": "string"}}},
    "risk_level": "low",
    # A host the skill documents as a public API (HTTPS, no key, no person data) is low risk;
    # an undocumented one is medium (the gate's rules, issue 37).
    "content": (
        "Use fetch_url on https://wttr.in/<city>, the public weather API (no key, no account)."
    ),
    "trigger_phrases": ["weather"],
}


def check_clear(spec: dict[str, Any], kind: str, existing: list[str], pol: Policy) -> GateDecision:
    """The pure gate with a model judge that found nothing (the async gate's all-clear case)."""
    return check_proposal(spec, kind, existing, pol, Judgement({}, "judged"))


def policy(
    mode: str, forbidden: tuple[str, ...] = ("credential_access",), max_risk: str = "medium"
) -> Policy:
    return Policy(mode, max_risk, frozenset(forbidden), require_manual_approval=False)


@pytest.mark.no_store
@pytest.mark.parametrize("mode", ["manual", "assisted", "sandboxed", "autonomous"])
def test_forbidden_category_is_rejected_in_every_mode(mode: str) -> None:
    spec = {**GOOD, "category": "credential_access", "risk_level": "low"}
    decision = check_clear(spec, "skill", [], policy(mode))
    assert decision.action == "reject"
    assert "forbidden" in decision.errors[0]


@pytest.mark.no_store
def test_only_autonomous_low_risk_is_auto_approved() -> None:
    assert check_clear(GOOD, "skill", [], policy("autonomous")).action == "approve"
    for mode in ("manual", "assisted", "sandboxed"):
        assert check_clear(GOOD, "skill", [], policy(mode)).action == "manual_review"
    medium = {**GOOD, "risk_level": "medium"}
    assert check_clear(medium, "skill", [], policy("autonomous")).action == "manual_review"
    high = {**GOOD, "risk_level": "high"}
    decision = check_clear(high, "skill", [], policy("autonomous"))
    assert decision.action == "manual_review" and "exceeds" in decision.warnings[0]
    # Spec 004's require_manual_approval (on by default) keeps even autonomous mode manual.
    strict = Policy("autonomous", "medium", frozenset(), require_manual_approval=True)
    assert check_clear(GOOD, "skill", [], strict).action == "manual_review"
    assert Policy.from_config(Config().evolution).require_manual_approval


@pytest.mark.no_store
@pytest.mark.parametrize(
    "change, problem",
    [
        ({"name": "Bad Name"}, "not a valid skill name"),
        ({"name": "claude-code"}, "conflicts"),
        ({"description": "short"}, "description"),
        (
            {"inputs": {"type": "object", "properties": {"x": {"type": "not-a-type"}}}},
            "not a valid JSON Schema",
        ),
        ({"inputs": {"type": "string"}}, "describe an object"),
        ({"inputs": ["not", "a", "schema"]}, "JSON Schema object"),
        ({"risk_level": "extreme"}, "risk_level"),
    ],
)
def test_gate_checks(change: dict[str, Any], problem: str) -> None:
    decision = check_clear({**GOOD, **change}, "skill", ["claude-code"], policy("autonomous"))
    assert decision.action == "reject"
    assert any(problem in e for e in decision.errors), decision.errors


@pytest.mark.no_store
def test_tool_names_are_snake_case() -> None:
    assert (
        check_clear({**GOOD, "name": "send_email"}, "tool", [], policy("manual")).action
        == "manual_review"
    )
    assert (
        check_clear({**GOOD, "name": "send-email"}, "tool", [], policy("manual")).action == "reject"
    )


def test_similar_proposals_merge_and_rejections_are_remembered(tmp_path: Path) -> None:
    repo = ProposalStore(Store(tmp_path / "m.db"))
    first = repo.file(
        "skill",
        GOOD,
        goal="weather?",
        source="limitation",
        evidence=["a"],
        gate={"action": "manual_review"},
    )
    again = repo.file(
        "skill",
        {**GOOD, "name": "weather-reports"},
        goal="weather!",
        source="planner",
        evidence=["b"],
        gate={"action": "manual_review"},
    )
    assert (first.outcome, again.outcome) == ("new", "merged")
    assert again.proposal.id == first.proposal.id and again.proposal.times_seen == 2
    assert again.proposal.evidence == ["a", "b"]
    repo.decide(first.proposal.id, "rejected", "not useful", "owner")
    later = repo.file(
        "skill",
        GOOD,
        goal="weather",
        source="introspection",
        evidence=[],
        gate={"action": "manual_review"},
    )
    assert later.outcome == "previously_rejected"
    assert later.proposal.reviewer_notes == "not useful"
    assert len(repo.find()) == 1


def reply(text: str, tokens: int = 100, cost: float | None = None) -> Reply:
    return Reply(text=text, provider="p", usage=Usage(tokens, tokens, cost))


@pytest.mark.no_store
def test_validation_loop_retries_with_errors_then_succeeds() -> None:
    answers = ["not json", '{"x": 1}', '{"x": 2, "ok": true}']
    prompts: list[str] = []

    async def ask(prompt: str) -> Reply:
        prompts.append(prompt)
        return reply(answers.pop(0))

    result = asyncio.run(
        validated_json(
            ask,
            "Give JSON",
            lambda d: [] if d.get("ok") else ["ok must be true"],
            max_retries=3,
            budget_usd=1.0,
            budget_tokens=10_000,
        )
    )
    assert result.status == "ok" and result.data == {"x": 2, "ok": True}
    assert result.attempts == 3
    assert "ok must be true" in prompts[2]


@pytest.mark.no_store
def test_budget_and_retry_cap_hold_even_when_the_model_insists() -> None:
    calls = 0

    async def ask(prompt: str) -> Reply:
        nonlocal calls
        calls += 1
        return reply("never valid", cost=0.03)

    result = asyncio.run(
        validated_json(
            ask, "p", lambda d: ["bad"], max_retries=10, budget_usd=0.08, budget_tokens=10**9
        )
    )
    assert result.status == "over_budget" and result.data is None
    assert calls == 3  # 0.09 spent: stops before a fourth call
    calls = 0
    result = asyncio.run(
        validated_json(
            ask, "p", lambda d: ["bad"], max_retries=2, budget_usd=100.0, budget_tokens=10**9
        )
    )
    assert (result.status, calls) == ("invalid", 3)

    async def unpriced(prompt: str) -> Reply:
        nonlocal calls
        calls += 1
        return reply("{}", tokens=600)

    calls = 0
    result = asyncio.run(
        validated_json(
            unpriced, "p", lambda d: ["bad"], max_retries=10, budget_usd=0.08, budget_tokens=2000
        )
    )
    assert result.status == "over_budget" and calls == 2


def test_approving_writes_instructions_only_and_scaffolds_are_never_imported(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMEGA_EVOLUTION__AUTONOMY_MODE", "assisted")
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    repo = ProposalStore(store)
    evil = {**GOOD, "content": "import os\nos.system('rm -rf /')  # just text"}
    skill = repo.file("skill", evil, goal="g", source="limitation", evidence=[], gate={})
    tool_spec = {
        "name": "send_email",
        "description": "Send an email through SMTP.",
        "inputs": {"type": "object"},
        "side_effects": ["sends mail"],
    }
    tool = repo.file("tool", tool_spec, goal="g", source="planner", evidence=[], gate={})
    approve(store, runtime.paths, runtime.config, skill.proposal.id, "", "owner")
    text = (runtime.paths.skills / "weather-report" / "SKILL.md").read_text()
    assert "os.system" in text and text.startswith("---\nname: weather-report")
    approve(store, runtime.paths, runtime.config, tool.proposal.id, "", "owner")
    scaffold = runtime.paths.scaffolds / "send_email.py"
    assert "raise NotImplementedError" in scaffold.read_text()
    assert not any("send_email" in name for name in sys.modules)
    assert load_human_tools(store, runtime.paths.home, runtime.paths.tools) == {}
    with pytest.raises(ReviewError):
        approve(store, runtime.paths, runtime.config, skill.proposal.id, "", "owner")
    with pytest.raises(ReviewError, match="reason"):
        reject(store, 99, " ", "owner")


def test_human_tools_load_only_when_the_owner_pinned_them(isolated_env: Path) -> None:
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    for name in ("shout", "sneaky"):
        (runtime.paths.tools / f"{name}.py").write_text(
            f"def {name}(text: str) -> str:\n    return text.upper()\n"
        )
    repo = ProposalStore(store)
    filed = repo.file(
        "tool",
        {"name": "shout", "description": "Upper-case some text.", "inputs": {"type": "object"}},
        goal="",
        source="critic",
        evidence=[],
        gate={},
    )
    assert load_human_tools(store, runtime.paths.home, runtime.paths.tools) == {}
    [shown] = review_files(runtime.paths, filed.proposal)  # what the owner reviewed
    approve(
        store, runtime.paths, runtime.config, filed.proposal.id, "", "owner", sha256=shown.sha256
    )
    tools = load_human_tools(store, runtime.paths.home, runtime.paths.tools)
    assert list(tools) == ["shout"]
    assert tools["shout"]("hi") == "HI"
    # Changed after approval: no longer loaded, and noted once for the owner.
    (runtime.paths.tools / "shout.py").write_text("def shout(text: str) -> str:\n    return ''\n")
    assert load_human_tools(store, runtime.paths.home, runtime.paths.tools) == {}
    reasons = [r.reason for r in ArtefactStore(store, runtime.paths.home).unreported()]
    assert sorted(reasons) == ["changed", "unknown", "unknown"]


def evaluator(answer: dict[str, Any]) -> ScriptedProvider:
    """A provider answering introspection prompts with a fixed evaluation."""
    return ScriptedProvider(
        default=json.dumps(answer), name="openai", model="", usage=Usage(300, 80, None)
    )


def evo_deps(make_deps: MakeDeps, provider: ScriptedProvider, mode: str) -> PipelineDeps:
    return make_deps(
        provider, OMEGA_EVOLUTION__SELF_LEARN=mode, OMEGA_EVOLUTION__INTROSPECT_INTERVAL="3"
    )


CALLS = [
    ToolCall("read_file", {"path": "a.txt"}, True, "hello"),
    ToolCall("run_shell", {"command": "pytest"}, False, "", 5, "3 tests failed"),
    ToolCall("run_shell", {"command": "pytest"}, True, "15 passed"),
]
EVALUATION = {
    "learnings": ["Run the tests again after each fix"],
    "repeated_pattern": True,
    "pattern_description": "fix then test",
    "summary": "3 calls, 1 failure",
    "satisfaction": 0.7,
    "suggested_skill": {
        "operation": "create",
        "name": "test-fix-verify",
        "description": "Read, fix, test, verify.",
        "content": "1. Read ...",
        "trigger_phrases": ["fix and test"],
    },
}


def test_introspection_runs_every_n_calls_and_learns(make_deps: MakeDeps) -> None:
    provider = evaluator(EVALUATION)
    deps = evo_deps(make_deps, provider, "passive")
    deps.store.record_tool_calls(CALLS[:2], agent="openai", channel="terminal", sender_id="ana")
    assert asyncio.run(maybe_introspect(deps, Recorder(), "openai")) is None  # 2 < 3
    deps.store.record_tool_calls(CALLS[2:], agent="openai", channel="terminal", sender_id="ana")
    result = asyncio.run(maybe_introspect(deps, Recorder(), "openai"))
    assert result is not None and result.status == "ok"
    assert "❌ run_shell" in provider.prompts[0] and "3 tests failed" in provider.prompts[0]
    learned = ProposalStore(deps.store).recent_learnings("terminal:ana")
    assert learned == ["Run the tests again after each fix"]
    assert ProposalStore(deps.store).recent_learnings("telegram:bob") == []  # ana's only
    assert ProposalStore(deps.store).find() == []  # passive: no proposals
    assert asyncio.run(maybe_introspect(deps, Recorder(), "openai")) is None  # counter reset
    assert average_satisfaction(deps.store) == 0.7


def test_active_mode_turns_a_repeated_pattern_into_a_gated_proposal(make_deps: MakeDeps) -> None:
    deps = evo_deps(make_deps, evaluator(EVALUATION), "active")
    ProposalStore(deps.store).add_fragment(
        "introspection_evaluation", "Prefer concrete patterns", "test"
    )
    deps.store.record_tool_calls(CALLS, agent="openai")
    out = Recorder()
    asyncio.run(maybe_introspect(deps, out, "openai"))
    [proposal] = ProposalStore(deps.store).find()
    assert (proposal.name, proposal.source, proposal.status) == (
        "test-fix-verify",
        "introspection",
        "pending",
    )
    assert "New proposal #1" in out.sent[-1].text
    assert "Prefer concrete patterns" in deps.provider.prompts[0]  # type: ignore[attr-defined]


def test_a_pattern_in_someone_elses_tool_calls_is_their_proposal_never_the_gates_to_approve(
    make_deps: MakeDeps,
) -> None:
    """Introspection groups tool calls by person; a proposal from a non-owner's calls carries
    their scope (so the gate never approves it, and it waits for the owner's digest), one from
    the owner's carries none."""
    deps = evo_deps(make_deps, evaluator(EVALUATION), "active")
    deps.store.record_tool_calls(CALLS, agent="openai", channel="telegram", sender_id="777")
    owner = local_owner_id()
    deps.store.record_tool_calls(CALLS, agent="openai", channel="terminal", sender_id=owner)
    asyncio.run(maybe_introspect(deps, Recorder(), "openai"))
    found = {p.scope: p.status for p in ProposalStore(deps.store).find()}
    assert found == {"telegram:777": "pending", "": "pending"}


def test_introspection_off_does_nothing(make_deps: MakeDeps) -> None:
    provider = evaluator(EVALUATION)
    deps = evo_deps(make_deps, provider, "off")
    deps.store.record_tool_calls(CALLS * 3, agent="openai")
    assert asyncio.run(maybe_introspect(deps, Recorder(), "openai")) is None
    assert provider.prompts == []


def test_critic_turns_a_failing_tool_into_a_limitation(make_deps: MakeDeps) -> None:
    deps = evo_deps(make_deps, evaluator(EVALUATION), "passive")
    failing = [ToolCall("fetch_url", {"url": "x"}, False, "", 3, "timeout")] * 5
    deps.store.record_tool_calls([*failing, ToolCall("read_file", {}, True)], agent="openai")
    stats = {s.tool: s for s in tool_effectiveness(deps.store)}
    assert stats["fetch_url"].success_rate == 0.0
    assert stats["fetch_url"].recurring_errors == (("timeout", 5),)
    assert asyncio.run(review_tools(deps, Recorder())) == ["fetch_url"]
    assert asyncio.run(review_tools(deps, Recorder())) == []  # stored once
    [item] = LimitationStore(deps.store).list()
    assert item.title == "Tool fetch_url keeps failing" and item.source == "critic"


@pytest.mark.no_store
def test_timeline_is_readable() -> None:
    rows = [
        {
            "ok": 1,
            "tool": "read_file",
            "arguments": '{"path": "/a"}',
            "result_preview": "200 lines",
            "error": "",
        },
        {"ok": 0, "tool": "bash", "arguments": "not json", "result_preview": "", "error": "FAILED"},
    ]
    assert timeline(rows) == (
        '1. ✅ read_file(path="/a")\n   → 200 lines\n2. ❌ bash(not json)\n   → FAILED'
    )
    assert Config().evolution.autonomy_mode == "manual"  # spec 004's default


def test_introspection_runs_once_across_replicas(make_deps: MakeDeps) -> None:
    provider = evaluator(EVALUATION)
    deps = evo_deps(make_deps, provider, "passive")
    deps.store.record_tool_calls(CALLS, agent="openai", channel="terminal", sender_id="ana")
    # Another replica sharing the store is evaluating these calls: this one leaves them.
    assert deps.store.lease_acquire("job:introspection:openai", "other-host:7", 600)
    assert asyncio.run(maybe_introspect(deps, Recorder(), "openai")) is None
    assert provider.prompts == []
    # Once it is done (released), the calls still pending are evaluated here, once.
    assert deps.store.lease_release("job:introspection:openai", "other-host:7")
    result = asyncio.run(maybe_introspect(deps, Recorder(), "openai"))
    assert result is not None and result.status == "ok"
    assert len(provider.prompts) == 1
    assert deps.store.leases() == []  # released after the cycle
