"""Introspection decides whose tool calls it reviews by the proven owner, never by a link
(audit finding; a link joins memory, never authority): after `omega people link
terminal:guest terminal:<owner>` the guest's tool calls are kept under the owner's person, yet a
skill the introspection model suggests from them is the guest's, held for the owner however
permissive the gate; the owner's own calls still give a skill the gate may approve by itself.
Played through `omega chat --jsonl` with the scripted OpenAI fake."""

from __future__ import annotations

import json
from pathlib import Path

from omega.turn import local_owner_id
from tests.conftest import run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_containment_e2e import AUTONOMOUS, CLEAR_JUDGE, INTROSPECTION
from tests.integration.test_many_people import chat, db
from tests.integration.test_tool_loop import tool_call

OWNER = local_owner_id()
GUEST = "guest"
RUBRIC = "Judge the proposal fenced above"
ENV = {
    **AUTONOMOUS,
    "OMEGA_EVOLUTION__SELF_LEARN": "active",
    "OMEGA_EVOLUTION__INTROSPECT_INTERVAL": "1",
}


def _evaluation(name: str) -> str:
    """The introspection model's answer: a repeated pattern and a harmless skill for it."""
    return json.dumps(
        {
            "learnings": ["Recipes are scaled often"],
            "repeated_pattern": True,
            "pattern_description": "scaling recipes for more servings",
            "summary": "one call",
            "satisfaction": 0.9,
            "suggested_skill": {
                "operation": "create",
                "name": name,
                "category": "other",
                "risk_level": "low",
                "description": "Scale a recipe's quantities for another number of servings.",
                "trigger_phrases": [f"scale my recipe {name}"],
                "content": "Multiply each quantity by the new servings over the old ones.",
            },
        }
    )


def _listed(fake: FakeOpenAI, sender: str, name: str) -> None:
    """`sender` has Omega list their files: one tool call, reviewed by introspection at once,
    whose suggested skill `name` goes through the gate (its judge finding nothing)."""
    fake.script = [
        Step(match=f"list {name}", tool_calls=[tool_call("c1", "list_files", path=".")]),
        Step(match=f"list {name}", text="Listed."),
        Step(match=INTROSPECTION, text=_evaluation(name)),
        Step(match=RUBRIC, text=CLEAR_JUDGE),
    ]
    chat(fake, {"text": f"list {name}", "sender_id": sender}, **ENV)
    assert any(INTROSPECTION in r.last_user_text for r in fake.requests)


def test_a_linked_persons_tool_calls_never_give_a_skill_the_gate_approves_by_itself(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    linked = run_omega("people", "link", f"terminal:{GUEST}", f"terminal:{OWNER}")
    assert linked.returncode == 0, linked.stderr
    _listed(fake_openai, GUEST, "guest-pattern")
    # The guest's calls are kept under the owner's person (memory is joined)...
    [call] = db(isolated_env, "SELECT channel, sender_id FROM tool_calls")
    assert (call["channel"], call["sender_id"]) == ("terminal", OWNER)
    # ...but the skill suggested from them is the guest's: held for the owner, not installed.
    [held] = db(isolated_env, "SELECT name, status, scope FROM proposals")
    assert (held["name"], held["status"]) == ("guest-pattern", "pending")
    assert held["scope"] == f"terminal:{OWNER}"
    assert not (isolated_env / "skills" / "guest-pattern").exists()

    # The owner's own calls, once no other id shares their person on that channel: the gate's
    # approval is acted on (the same permissive set-up, so the hold above was the link's).
    unlinked = run_omega("people", "link", f"terminal:{GUEST}", f"terminal:{GUEST}-alone")
    assert unlinked.returncode == 0, unlinked.stderr
    _listed(fake_openai, OWNER, "owner-pattern")
    rows = db(isolated_env, "SELECT name, status, scope FROM proposals ORDER BY id")
    assert [(r["name"], r["status"], r["scope"]) for r in rows] == [
        ("guest-pattern", "pending", f"terminal:{OWNER}"),
        ("owner-pattern", "approved", ""),
    ]
    assert (isolated_env / "skills" / "owner-pattern").exists()
