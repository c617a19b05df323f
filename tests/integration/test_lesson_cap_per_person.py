"""Lesson proposals are capped per person and day (audit finding): each SKILL_IMPROVE from
anyone but the owner becomes a proposal the gate's model judges, so past `[limits]
max_lessons_per_person_per_day` a person's SKILL_IMPROVE is refused before the judge is asked:
audited as denied and said as not done. The cap is per person, and the owner is exempt (their
lessons that read external content are still proposals, still judged). Played through `omega
chat --jsonl` with the scripted OpenAI fake, counting the requests the gate's judge made."""

from __future__ import annotations

import json
from pathlib import Path

from omega.config.safety import LimitsSection
from omega.i18n import message
from omega.turn import local_owner_id
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_containment_e2e import CLEAR_JUDGE
from tests.integration.test_many_people import chat, db
from tests.integration.test_tool_loop import tool_call

RUBRIC = "Judge the proposal fenced above"
OWNER = local_owner_id()
NOT_DONE = message("marker_failed_other", "English", what="SKILL_IMPROVE")


# Lessons unlike each other (alike pending proposals of one person would merge).
LESSONS = {
    "m1": "Ask for the trigger words before drafting",
    "m2": "Keep each skill under forty lines of instructions",
    "m3": "Write the description in the third person",
    "b1": "Name skills with short kebab-case words",
    "o1": "Offer an example conversation with every new skill",
    "o2": "Check that no two skills share a trigger phrase",
    "o3": "List the inputs a skill needs before its steps",
}


def _lesson(tag: str) -> str:
    return LESSONS[tag]


def _says_lesson(tag: str) -> Step:
    return Step(
        match=f"{tag} please", text=f"Noted.\nSKILL_IMPROVE: skill-creator | {_lesson(tag)}"
    )


def _reads_then_says_lesson(tag: str) -> list[Step]:
    """A turn of the owner's that reads a file first: its lesson is a proposal, judged."""
    read = tool_call(f"r-{tag}", "read_file", path="notes.txt")
    return [Step(match=f"{tag} please", tool_calls=[read]), _says_lesson(tag)]


def test_a_persons_lessons_past_the_daily_cap_are_refused_without_a_judge_call(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    assert LimitsSection().max_lessons_per_person_per_day == 5  # the default
    mallory = ["m1", "m2", "m3"]
    owner = ["o1", "o2", "o3"]
    fake_openai.script = [
        *(_says_lesson(tag) for tag in mallory),
        _says_lesson("b1"),
        *(step for tag in owner for step in _reads_then_says_lesson(tag)),
        *(Step(match=RUBRIC, text=CLEAR_JUDGE) for _ in range(10)),
    ]
    result = chat(
        fake_openai,
        *({"text": f"{tag} please", "sender_id": "mallory"} for tag in mallory),
        {"text": "b1 please", "sender_id": "bob"},
        *({"text": f"{tag} please"} for tag in owner),
        OMEGA_LIMITS__MAX_LESSONS_PER_PERSON_PER_DAY="2",
    )
    judged = [r for r in fake_openai.requests if RUBRIC in r.last_user_text]
    # Mallory's first two, Bob's one (the cap is per person), the owner's three (exempt).
    assert len(judged) == 6
    assert not any(_lesson("m3") in r.last_user_text for r in judged)
    rows = db(isolated_env, "SELECT scope, spec FROM proposals WHERE kind = 'lesson'")
    filed = {(row["scope"], json.loads(row["spec"])["content"]) for row in rows}
    assert filed == {
        *(("person:terminal:mallory", LESSONS[tag]) for tag in ("m1", "m2")),
        ("person:terminal:bob", LESSONS["b1"]),
        *(("", LESSONS[tag]) for tag in owner),
    }
    # Mallory's third is said as not done (people are answered side by side: by whom), and
    # audited as denied.
    replies = [e for e in result.events if e["kind"] == "reply"]
    said = {
        who: [NOT_DONE in str(e["text"]) for e in replies if e["to"] == who]
        for who in ("mallory", "bob", OWNER)
    }
    assert said == {"mallory": [False, False, True], "bob": [False], OWNER: [False] * 3}
    [refused] = db(
        isolated_env,
        "SELECT sender_id, detail FROM audit_log WHERE status = 'denied' "
        "AND event = 'marker_refused'",
    )
    assert refused["sender_id"] == "mallory"
    assert "SKILL_IMPROVE: more than 2 lesson proposals a day from one person" in refused["detail"]
    assert _lesson("m3") in refused["detail"]
