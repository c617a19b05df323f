"""System prompt composition and the context built from memory."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omega.channels.base import TERMINAL_HINT
from omega.channels.builtin import WHATSAPP
from omega.memory import Store
from omega.memory.context import ContextRequest, build_context, onboarding_hint, profile_lines
from omega.prompts import Prompts
from omega.turn import GROUP_RULES, PromptSituation, compose_system_prompt
from omega.turn.prompt import DATA_HEADER
from omega.types import IncomingMessage

PROMPTS = Prompts(identity="I am Omega.", soul="Kind.", system="Rules.")


@pytest.mark.no_store
def test_situational_sections_appear_only_when_they_apply() -> None:
    plain = compose_system_prompt(
        PROMPTS,
        PromptSituation(channel="terminal", platform_hint=TERMINAL_HINT, sandbox_mode="rwx"),
    )
    assert plain.startswith("# Omega's rules\n\nI am Omega.\n\nKind.\n\nRules.")
    assert "Platform: terminal" in plain
    assert GROUP_RULES not in plain and "Active project" not in plain
    assert "SCHEDULE:" in plain  # marker guide
    assert "Sandbox mode" not in plain
    full = compose_system_prompt(
        PROMPTS,
        PromptSituation(
            channel="whatsapp",
            platform_hint=WHATSAPP.prompt_hint,
            is_group=True,
            project_name="site",
            project_instructions="Maintain the site.",
            personality="terse",
            checklist="- Check disk",
            sandbox_mode="sandbox",
            workspace="/w",
            skill_instructions=(("weather", "Use wttr.in"),),
        ),
    )
    # Omega's rules first, then the owner's project role, then the data with its origins.
    rules, _, data = full.partition(DATA_HEADER)
    assert rules.startswith("# Omega's rules\n\nI am Omega.")
    assert "[from: the owner, project role] Active project: site\nMaintain the site." in rules
    assert "[from: this person] They asked you to be like this: terse" in data
    assert "[from: the owner] Current heartbeat checklist" in data
    assert "[from: a skill] Skill 'weather' applies to this request:\nUse wttr.in" in data
    for piece in (
        GROUP_RULES,
        "Avoid Markdown tables",
        "terse",
        "- Check disk",
        "Use wttr.in",
        "inside your workspace /w",
    ):
        assert piece in full


@pytest.mark.no_store
def test_profile_puts_identity_first_and_hides_bookkeeping() -> None:
    facts = {
        "hobby": "chess",
        "timezone": "Europe/Lisbon",
        "welcomed": "true",
        "name": "Ana",
        "active_project": "x",
    }
    assert profile_lines(facts) == ["- name: Ana", "- timezone: Europe/Lisbon", "- hobby: chess"]


@pytest.mark.no_store
def test_onboarding_is_graduated() -> None:
    assert "know nothing" in onboarding_hint({"welcomed": "true"})
    assert "a little" in onboarding_hint({"name": "Ana"})
    assert onboarding_hint({"name": "Ana", "city": "Porto", "job": "nurse"}) == ""


def test_context_gathers_history_profile_summaries_recall_tasks_language(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    old = store.store_exchange("terminal", "ana", "my cat is called Miso", "lovely")
    store.close_conversation(old, "Ana talked about her cat.")
    store.store_exchange("terminal", "ana", "hello again", "hi!")
    store.set_fact("ana", "name", "Ana")
    store.create_task(
        channel="terminal",
        sender_id="ana",
        reply_target="ana",
        description="Feed Miso",
        due_at=datetime(2030, 1, 1, 8, tzinfo=UTC),
    )
    message = IncomingMessage("terminal", "ana", "what is my cat called?", assurance="local")
    context = build_context(
        store,
        ContextRequest(
            message=message,
            system_prompt="BASE",
            facts=store.facts("ana"),
            language="Spanish",
            max_history=10,
        ),
    )
    system = context.system_prompt
    assert system.startswith("BASE")
    for piece in (
        "- name: Ana",
        "Ana talked about her cat.",
        "my cat is called Miso",
        "Feed Miso",
        "Always answer in Spanish",
        "a little about this person",
    ):
        assert piece in system, piece
    assert [m.content for m in context.messages] == ["hello again", "hi!", "what is my cat called?"]
    alone = build_context(None, ContextRequest(message, "BASE", {}, "English", 10))
    assert alone.system_prompt == "BASE"
    assert len(alone.messages) == 1


@pytest.mark.no_store
def test_stable_prefix_is_the_same_bytes_whatever_the_turn_adds() -> None:
    from omega.turn import compose_prompt_parts

    person = PromptSituation(channel="telegram", personality="terse", workspace="/w")
    quiet = compose_prompt_parts(PROMPTS, person, now=datetime(2026, 1, 1, 9, tzinfo=UTC))
    busy = compose_prompt_parts(
        PROMPTS,
        dataclasses.replace(
            person,
            checklist="- Check disk",
            skill_instructions=(("weather", "Use wttr.in"),),
            extra=("Signal: calm",),
        ),
        now=datetime(2026, 1, 2, 17, 30, tzinfo=UTC),
    )
    assert quiet.stable == busy.stable
    assert "inside your workspace /w" in busy.stable and "terse" in busy.stable
    for turn_only in ("Current time", "- Check disk", "Use wttr.in", "Signal: calm"):
        assert turn_only in busy.per_turn and turn_only not in busy.stable
    assert busy.text == f"{busy.stable}\n\n{busy.per_turn}"
