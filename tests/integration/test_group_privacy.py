"""A group room's prompt holds nothing private of its speaker (issue F4/F5 of the provenance
audit): through `omega chat --jsonl` with the scripted OpenAI-compatible server, whose captured
requests show what the model was given. A room's answer is read by everyone in it, so only who
the speaker is reaches it: not a fact they told Omega in private, not what Omega learned from
their own turns, and not the owner's heartbeat checklist or quant signal."""

from __future__ import annotations

import json
from collections.abc import Mapping

from omega.evolution.proposals import ProposalStore, scope_of
from omega.quant.settings import QuantStateStore
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest

NO_ROUTING = {"OMEGA_PROVIDER__CLASSIFY": "false"}
ROOM = "hello room, is a new skill needed?"  # "new skill" matches the bundled skill-creator
ALONE = "just me: is a new skill needed?"


def room_and_alone(
    fake: FakeOpenAI, *lines: Mapping[str, object]
) -> tuple[RecordedRequest, RecordedRequest]:
    """Run `omega chat --jsonl` on `lines`; the requests answering ROOM and ALONE."""
    result = run_omega("chat", "--jsonl", env=openai_env(fake, **NO_ROUTING), stdin=jsonl(*lines))
    assert result.returncode == 0, result.stderr
    [room] = [r for r in fake.requests if r.last_user_text == ROOM]
    [alone] = [r for r in fake.requests if r.last_user_text == ALONE]
    return room, alone


def test_a_private_fact_stays_out_of_a_rooms_prompt(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    store = make_deps(**NO_ROUTING).store
    ana = store.person_of("terminal", "ana")
    store.set_fact(ana, "preferred_name", "Ana")
    store.set_fact(ana, "pronouns", "she/her")
    store.set_fact(ana, "diagnosis", "zebrafever")  # told in private; a key no list names
    store.set_fact(ana, "city", "Lisbon")  # a known key, but not who she is
    room, alone = room_and_alone(
        fake_openai,
        {"text": ROOM, "sender_id": "ana", "is_group": True},
        {"text": ALONE, "sender_id": "ana"},
    )
    assert "- preferred_name: Ana" in room.system_text  # who she is, to address her
    assert "- pronouns: she/her" in room.system_text
    assert "zebrafever" not in json.dumps(room.body)
    assert "Lisbon" not in json.dumps(room.body)
    # In her own chat all she told Omega is there.
    assert "- diagnosis: zebrafever" in alone.system_text
    assert "- city: Lisbon" in alone.system_text


def test_what_omega_learned_from_a_persons_turns_stays_out_of_a_rooms_prompt(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    store = make_deps(**NO_ROUTING).store
    ana = store.person_of("terminal", "ana")
    repo = ProposalStore(store)
    scope = scope_of("terminal", ana)
    repo.add_learnings("openai", ["notes/zebrafever.txt holds her records"], scope)
    repo.add_lesson("skill-creator", "Name her skills after zebrafever", scope, scope)
    room, alone = room_and_alone(
        fake_openai,
        {"text": ROOM, "sender_id": "ana", "is_group": True},
        {"text": ALONE, "sender_id": "ana"},
    )
    assert "zebrafever" not in json.dumps(room.body)
    assert "Skill creator" in room.system_text  # the skill itself is there, its lesson is not
    assert "notes/zebrafever.txt holds her records" in alone.system_text
    assert "Name her skills after zebrafever" in alone.system_text


def test_the_owners_checklist_and_quant_signal_stay_out_of_a_rooms_prompt(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    deps = make_deps(**NO_ROUTING)
    deps.paths.heartbeat.write_text("- Watch the divorce lawyer's mail\n")
    quant = QuantStateStore(deps.store)
    quant.save_signal("SPY", {"regime": "Bull"}, "ADVISORY (NOT FINANCIAL ADVICE): regime=Bull")
    quant.update(enabled=True)
    # On --jsonl the default sender is the owner (the local user), in a room too.
    room, alone = room_and_alone(fake_openai, {"text": ROOM, "is_group": True}, {"text": ALONE})
    assert "divorce lawyer" not in json.dumps(room.body)
    assert "regime=Bull" not in json.dumps(room.body)
    assert "divorce lawyer" in alone.system_text
    assert "[SPY] ADVISORY (NOT FINANCIAL ADVICE): regime=Bull" in alone.system_text
