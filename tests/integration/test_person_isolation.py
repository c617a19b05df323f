"""One person's data never reaches another's prompt or reply: played as the attacker through
`omega chat --jsonl` with the scripted OpenAI-compatible server, against a person ("ana")
whose memory was made before the run (on Telegram, or a skill the gate once approved from her
gap). Bob writes on the terminal and reads what he is sent; the requests the server recorded
show what the model was given."""

from __future__ import annotations

import json
from collections.abc import Mapping

from omega.evolution.proposals import scope_of
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest
from tests.integration.test_group_private_wishes import _legacy_skill_of

NO_ROUTING = {"OMEGA_PROVIDER__CLASSIFY": "false"}


def chat(fake: FakeOpenAI, *lines: Mapping[str, object], **env: str) -> list[dict[str, object]]:
    """Run `omega chat --jsonl` on `lines` with `env`; the events it wrote."""
    result = run_omega("chat", "--jsonl", env=openai_env(fake, **env), stdin=jsonl(*lines))
    assert result.returncode == 0, result.stderr
    return result.events


def test_another_channels_person_with_the_same_id_never_sets_the_language_of_a_notice(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    # Ana is Telegram's "8": the first to hold that id, her person key is "8" itself. Bob's
    # terminal id is "8" too: his person is "terminal:8", and Ana's facts are not his.
    deps = make_deps()
    ana = deps.store.person_of("telegram", "8")
    assert ana == "8"
    deps.store.set_fact(ana, "preferred_language", "Portuguese")
    deps.store.set_fact(ana, "welcomed", "true")
    long_english = "Please keep this whole note about the garden for me. " * 4
    events = chat(
        fake_openai,
        {"text": long_english, "sender_id": "8"},
        OMEGA_LIMITS__MAX_MESSAGE_CHARS="100",
        **NO_ROUTING,
    )
    [notice] = [e for e in events if e["kind"] == "notice"]
    # In the language of his own words, never in the one Ana chose.
    assert str(notice["text"]).startswith("Your message was too long"), notice["text"]
    assert deps.store.person_of("terminal", "8") == "terminal:8"
    assert deps.store.get_fact("terminal:8", "preferred_language") == "English"


def _planner_request(fake: FakeOpenAI, text: str) -> RecordedRequest:
    [request] = [r for r in fake.planner_requests if r.last_user_text.endswith(f"Request: {text}")]
    return request


def test_a_skill_born_of_anas_gap_is_not_named_to_bob(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    deps = make_deps()
    ana = deps.store.person_of("terminal", "ana")
    _legacy_skill_of(deps.store, deps.paths.home, f"person:{scope_of('terminal', ana)}")
    # Two lines, so the planner is asked (not an obviously direct question).
    ask = "Please look after the herd today\nand tell me what you did."
    events = chat(
        fake_openai,
        {"text": "/skills", "sender_id": "bob"},
        {"text": ask, "sender_id": "bob"},
    )
    [bobs_list] = [e for e in events if e["kind"] == "command"]
    assert "skill-creator" in str(bobs_list["text"])  # the catalog is listed...
    assert "zebra-herd" not in str(bobs_list["text"])  # ...without Ana's own skill
    assert "Count the herd" not in str(bobs_list["text"])
    planner = _planner_request(fake_openai, ask)
    assert "skill-creator" in planner.last_user_text
    assert "zebra-herd" not in json.dumps(planner.body)
    seen = [*fake_openai.requests, *fake_openai.planner_requests]
    assert not any("zebra-herd" in json.dumps(r.body) for r in seen)

    # Ana still has it: in her list and in her planner's catalog.
    fake_openai.requests.clear()
    fake_openai.planner_requests.clear()
    events = chat(
        fake_openai,
        {"text": "/skills", "sender_id": "ana"},
        {"text": ask, "sender_id": "ana"},
    )
    [anas_list] = [e for e in events if e["kind"] == "command"]
    assert "zebra-herd" in str(anas_list["text"])
    assert "zebra-herd" in _planner_request(fake_openai, ask).last_user_text
