"""A group room's prompt carries no person's own wishes: through `omega chat --jsonl` with the
scripted OpenAI-compatible server, whose captured requests show what the model was given. What
a person set for Omega in private (their `/personality`, the project they activated with
`/project`) and a skill born of their own gap shape their direct chat only: the room's answer
is read by everyone in it, so it gets only the global skills and lessons."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from omega.evolution.proposals import ProposalStore, scope_of
from omega.memory.artefacts import ArtefactStore
from omega.memory.store import Store
from omega.skills.guarded import GATE
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest

NO_ROUTING = {"OMEGA_PROVIDER__CLASSIFY": "false"}
ROOM = "hello room, is a new skill needed for the zebra herd?"  # "new skill": skill-creator
ALONE = "just me: is a new skill needed for the zebra herd?"
PERSONALITY = "talk like a pirate who knows my zebrafever"
ROLE = "You keep the private ledger of the divorce settlement."
SKILL = """---
name: zebra-herd
description: Count the herd.
triggers: zebra herd
---
Count Ana's zebras in notes/zebrafever.txt before answering.
"""


def chat(fake: FakeOpenAI, *lines: Mapping[str, object]) -> tuple[RecordedRequest, RecordedRequest]:
    """Run `omega chat --jsonl` on `lines`; the requests answering ROOM and ALONE."""
    result = run_omega("chat", "--jsonl", env=openai_env(fake, **NO_ROUTING), stdin=jsonl(*lines))
    assert result.returncode == 0, result.stderr
    [room] = [r for r in fake.requests if r.last_user_text == ROOM]
    [alone] = [r for r in fake.requests if r.last_user_text == ALONE]
    return room, alone


def test_a_persons_personality_and_project_stay_out_of_a_rooms_prompt(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    deps = make_deps(**NO_ROUTING)
    folder = deps.paths.projects / "settlement"
    folder.mkdir(parents=True)
    (folder / "ROLE.md").write_text(ROLE + "\n")
    # On --jsonl the default sender is the owner (the local user): in her own chat she sets
    # how Omega talks to her and activates her project, then speaks in a room.
    room, alone = chat(
        fake_openai,
        {"text": f"/personality {PERSONALITY}"},
        {"text": "/project settlement"},
        {"text": ALONE},
        {"text": ROOM, "is_group": True},
    )
    for private in ("pirate", "zebrafever", "divorce settlement", "Active project"):
        assert private not in json.dumps(room.body), private
    assert "This is a group chat." in room.system_text  # it is the room's request
    # In her own chat both still shape the answer, as before.
    assert f"They asked you to be like this: {PERSONALITY}" in alone.system_text
    assert f"Active project: settlement\n{ROLE}" in alone.system_text


def test_a_persons_personality_stays_out_of_a_rooms_prompt_for_anyone(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    deps = make_deps(**NO_ROUTING)
    ana = deps.store.person_of("terminal", "ana")
    deps.store.set_fact(ana, "personality", PERSONALITY)
    room, alone = chat(
        fake_openai,
        {"text": ALONE, "sender_id": "ana"},
        {"text": ROOM, "sender_id": "ana", "is_group": True},
    )
    assert "pirate" not in json.dumps(room.body)
    assert f"They asked you to be like this: {PERSONALITY}" in alone.system_text


def _legacy_skill_of(store: Store, home: Path, person: str) -> None:
    """A skill the gate approved by itself from `person`'s gap (versions before the gate held
    a person's gap for the owner did so): its pin names the proposal, whose scope is theirs."""
    folder = home / "skills" / "zebra-herd"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    spec = {"name": "zebra-herd", "description": "Count the herd."}
    filed = ProposalStore(store).file(
        "skill", spec, goal="count zebras", source="limitation", evidence=[], gate={}, scope=person
    )
    ArtefactStore(store, home).pin(
        "skill", "zebra-herd", folder, origin="approved", by=GATE, proposal_id=filed.proposal.id
    )


def test_a_skill_born_of_a_persons_gap_stays_out_of_a_rooms_prompt(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    deps = make_deps(**NO_ROUTING)
    ana = deps.store.person_of("terminal", "ana")
    _legacy_skill_of(deps.store, deps.paths.home, f"person:{scope_of('terminal', ana)}")
    room, alone = chat(
        fake_openai,
        {"text": ALONE, "sender_id": "ana"},
        {"text": ROOM, "sender_id": "ana", "is_group": True},
    )
    assert "zebrafever" not in json.dumps(room.body)
    assert "Skill 'zebra-herd'" not in room.system_text
    assert "Skill 'skill-creator'" in room.system_text  # a global skill still applies
    assert "Skill 'zebra-herd' applies to this request" in alone.system_text
    assert "notes/zebrafever.txt" in alone.system_text
