"""Marker effects: tasks, projects, language, heartbeat, skills — and failures that stay local."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from omega.app import bootstrap
from omega.markers import parse_markers
from omega.markers.handlers import HANDLERS, apply_markers
from omega.markers.registry import MARKERS
from omega.memory import Store
from omega.skills import ProjectCatalog, SkillCatalog, deploy_bundled_skills
from omega.turn import MarkerContext, MarkerOutcome, RuntimeState
from omega.types import IncomingMessage, OutgoingMessage


@pytest.fixture
def ctx(isolated_env: Path) -> MarkerContext:
    runtime = bootstrap(isolated_env)
    deploy_bundled_skills(runtime.paths.skills)
    sent: list[OutgoingMessage] = []

    async def notify(message: OutgoingMessage) -> None:
        sent.append(message)

    context = MarkerContext(
        store=Store(runtime.paths.db),
        paths=runtime.paths,
        config=runtime.config,
        message=IncomingMessage("terminal", "ana", "x", assurance="local"),
        timezone=ZoneInfo("Europe/Lisbon"),
        skills=SkillCatalog(runtime.paths.skills),
        projects=ProjectCatalog(runtime.paths.projects),
        state=RuntimeState(heartbeat_interval=30),
        notify=notify,
        role="owner",
    )
    context.sent = sent  # type: ignore[attr-defined]
    return context


def apply(ctx: MarkerContext, text: str) -> MarkerOutcome:
    return asyncio.run(apply_markers(parse_markers(text), ctx))


@pytest.mark.no_store
def test_every_action_marker_has_a_handler() -> None:
    caller_handled = {"SILENT", "HEARTBEAT_OK"}
    names = {m.name for m in MARKERS}
    assert names - set(HANDLERS) == caller_handled


def test_schedule_in_user_timezone_and_no_duplicates(ctx: MarkerContext) -> None:
    text = "SCHEDULE: Dentist | 2030-07-01T09:00 | once"
    apply(ctx, text)
    apply(ctx, text)
    [task] = ctx.store.pending_tasks("ana")
    assert task.due_at == datetime(2030, 7, 1, 8, 0, tzinfo=UTC)  # Lisbon summer time
    assert task.timezone == "Europe/Lisbon"
    assert task.task_type == "reminder"
    apply(ctx, "SCHEDULE_ACTION: Summarize news | 2030-07-01T07:00Z | daily")
    action = next(t for t in ctx.store.pending_tasks("ana") if t.task_type == "action")
    assert action.due_at.hour == 7 and action.repeat == "daily"


def test_cancel_and_update_by_exact_prefix(ctx: MarkerContext) -> None:
    apply(ctx, "SCHEDULE: Water plants | 2030-07-01T09:00 | daily")
    [task] = ctx.store.pending_tasks("ana")
    apply(ctx, f"UPDATE_TASK: {task.id[:6]} | Water the roses | | weekly")
    [updated] = ctx.store.pending_tasks("ana")
    assert (updated.description, updated.repeat, updated.due_at) == (
        "Water the roses",
        "weekly",
        task.due_at,
    )
    outcome = apply(ctx, "CANCEL_TASK: 0000")
    assert outcome.failed and not outcome.applied
    apply(ctx, f"CANCEL_TASK: {task.id[:8]}")
    assert ctx.store.pending_tasks("ana") == []


def test_other_senders_tasks_are_out_of_reach(ctx: MarkerContext) -> None:
    ctx.store.create_task(
        channel="terminal",
        sender_id="bob",
        reply_target="bob",
        description="bob's",
        due_at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    [bob_task] = ctx.store.pending_tasks("bob")
    outcome = apply(ctx, f"CANCEL_TASK: {bob_task.id}")
    assert outcome.failed
    assert ctx.store.pending_tasks("bob") != []


def test_heartbeat_interval_updates_state_and_confirms(ctx: MarkerContext) -> None:
    apply(ctx, "HEARTBEAT_INTERVAL: 45")
    assert ctx.state.heartbeat_interval == 45
    assert [m.text for m in ctx.sent] == ["Heartbeat interval set to 45 minutes."]  # type: ignore[attr-defined]
    # Kept in the store, where the replica running the heartbeat (and a restart) reads it.
    assert ctx.store.state_get("settings", "heartbeat_interval") == 45
    apply(ctx, "HEARTBEAT_INTERVAL: 0")
    assert ctx.state.heartbeat_interval == 45
    assert ctx.store.state_get("settings", "heartbeat_interval") == 45


def test_unknown_project_or_skill_fails_alone(ctx: MarkerContext) -> None:
    outcome = apply(
        ctx, "PROJECT_ACTIVATE: nowhere\nSKILL_IMPROVE: no-such | x\nLANG_SWITCH: french"
    )
    assert len(outcome.failed) == 2
    assert ctx.store.get_fact("ana", "preferred_language") == "French"
    assert ctx.store.get_fact("ana", "active_project") is None


def test_whatsapp_qr_without_whatsapp_tells_the_user(ctx: MarkerContext) -> None:
    outcome = apply(ctx, "WHATSAPP_QR")
    assert outcome.failed
    assert "not enabled" in ctx.sent[0].text  # type: ignore[attr-defined]


def test_skill_improve_from_the_owner_is_a_global_lesson_never_a_file_edit(
    ctx: MarkerContext,
) -> None:
    from omega.evolution.proposals import ProposalStore
    from omega.evolution.reflection import with_lessons

    before = (ctx.paths.skills / "claude-code" / "SKILL.md").read_text()
    ctx.role = "owner"
    outcome = apply(ctx, "SKILL_IMPROVE: claude-code | Pass --max-turns for long tasks")
    assert outcome.applied == ["SKILL_IMPROVE claude-code lesson added"]
    assert (ctx.paths.skills / "claude-code" / "SKILL.md").read_text() == before
    skill = ctx.skills.get("claude-code")
    assert skill is not None
    [shown] = with_lessons(ctx.store, [skill], "telegram:someone-else")
    assert shown.body.endswith("- [lesson from the owner] Pass --max-turns for long tasks")
    [entry] = [e for e in ctx.store.audit_entries() if e["event"] == "skill_lesson"]
    assert "Pass --max-turns" in str(entry["input_text"])
    assert ProposalStore(ctx.store).find() == []
