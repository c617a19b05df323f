"""Limitations (stored once, alerted once, on HEARTBEAT.md until resolved) and self-healing
(iteration cap enforced in code, verification tasks, escalation, resolution)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from omega.app import bootstrap
from omega.evolution.gaps import LimitationStore
from omega.evolution.heal import SelfHealStore
from omega.evolution.heal.lifecycle import MAX_ITERATIONS
from omega.gateway.commands import CommandContext, parse_command, run_command
from omega.markers import parse_markers
from omega.markers.handlers import apply_markers
from omega.memory import Store
from omega.owner import OWNER
from omega.skills import ProjectCatalog, SkillCatalog
from omega.turn import MarkerContext, RuntimeState
from omega.types import IncomingMessage, OutgoingMessage


@pytest.fixture
def ctx(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> MarkerContext:
    monkeypatch.setenv("OMEGA_HEARTBEAT__CHANNEL", "telegram")
    monkeypatch.setenv("OMEGA_HEARTBEAT__REPLY_TARGET", "42")
    runtime = bootstrap(isolated_env)
    sent: list[OutgoingMessage] = []

    async def notify(message: OutgoingMessage) -> None:
        sent.append(message)

    context = MarkerContext(
        store=Store(runtime.paths.db),
        paths=runtime.paths,
        config=runtime.config,
        message=IncomingMessage("terminal", "ana", "x", assurance="local"),
        timezone=UTC,
        skills=SkillCatalog(runtime.paths.skills),
        projects=ProjectCatalog(runtime.paths.projects),
        state=RuntimeState(heartbeat_interval=30),
        notify=notify,
        role="owner",
    )
    context.sent = sent  # type: ignore[attr-defined]
    return context


def apply(ctx: MarkerContext, text: str) -> list[str]:
    """Markers of a new reply (each reply is its own message)."""
    ctx.message = dataclasses.replace(ctx.message, id=uuid.uuid4().hex)
    outcome = asyncio.run(apply_markers(parse_markers(text), ctx))
    return outcome.applied + outcome.failed


def sent(ctx: MarkerContext) -> list[OutgoingMessage]:
    return ctx.sent  # type: ignore[attr-defined, no-any-return]


def test_limitation_is_stored_once_alerted_once_and_put_on_the_checklist(
    ctx: MarkerContext,
) -> None:
    reply = "I can't send email yet. LIMITATION: No email | Cannot send emails | Add SMTP"
    apply(ctx, reply)
    apply(ctx, "Still no. LIMITATION: NO EMAIL | again | again")
    [item] = LimitationStore(ctx.store).list()
    assert (item.title, item.description, item.proposed_plan, item.source) == (
        "No email",
        "Cannot send emails",
        "Add SMTP",
        "marker",
    )
    alerts = [m for m in sent(ctx) if m.kind == "alert"]
    # Addressed to the owner; the gateway delivers it wherever the owner is reachable.
    assert [(a.channel, a.target) for a in alerts] == [(OWNER, OWNER)]
    assert alerts[0].text.startswith("New limitation detected: No email — Cannot send emails")
    assert "- [ ] No email — Cannot send emails" in ctx.paths.heartbeat.read_text()
    [entry] = [e for e in ctx.store.audit_entries() if e["event"] == "limitation:marker"]
    assert "+- [ ] No email" in str(entry["detail"])


def test_model_may_resolve_only_during_a_heartbeat(ctx: MarkerContext) -> None:
    apply(ctx, "LIMITATION: No PDF editing | Cannot modify PDFs | Add a PDF tool")
    result = apply(ctx, "LIMITATION_RESOLVED: No PDF editing | a tool exists now")
    assert any("only accepted in heartbeat" in r for r in result)
    assert LimitationStore(ctx.store).list("open")
    ctx.cause = "heartbeat"
    apply(ctx, "LIMITATION_RESOLVED: no pdf editing | pdf tool installed")
    [item] = LimitationStore(ctx.store).list()
    assert (item.status, item.resolution, item.resolved_by) == (
        "resolved",
        "pdf tool installed",
        "model (heartbeat)",
    )
    assert "No PDF editing" not in ctx.paths.heartbeat.read_text()


def command(ctx: MarkerContext, text: str, channel: str = "terminal", sender: str = "ana") -> str:
    command = parse_command(text)
    assert command is not None
    return asyncio.run(
        run_command(
            command,
            CommandContext(
                store=ctx.store,
                config=ctx.config,
                paths=ctx.paths,
                message=IncomingMessage(channel, sender, text, assurance="platform"),
                provider_name="x",
                started_at=0.0,
                skills=ctx.skills,
                projects=ctx.projects,
                timezone=UTC,
            ),
        )
    )


def test_owner_lists_and_resolves_strangers_cannot(ctx: MarkerContext) -> None:
    apply(ctx, "LIMITATION: No calendar | Cannot read calendars | Add CalDAV")
    assert "[1] open: No calendar — Cannot read calendars" in command(ctx, "/limitations")
    assert (
        command(ctx, "/resolve 1", channel="telegram", sender="999") == "Only my owner can do that."
    )
    assert LimitationStore(ctx.store).list("open")
    assert (
        command(ctx, "/resolve 1 added CalDAV", channel="telegram", sender="42")
        == "Resolved [1] No calendar — Cannot read calendars."
    )
    assert "No calendar" not in ctx.paths.heartbeat.read_text()
    assert "resolved: No calendar" in command(ctx, "/limitations")


def test_self_heal_counts_notifies_and_schedules_verification(ctx: MarkerContext) -> None:
    apply(ctx, "SELF_HEAL: audit_log misses the model | SELECT model FROM audit_log LIMIT 1")
    state = SelfHealStore(ctx.store).current()
    assert state is not None
    assert json.loads(ctx.paths.self_healing.read_text())["iteration"] == 1  # the readable view
    assert (state.iteration, state.anomaly) == (1, "audit_log misses the model")
    assert state.verification == "SELECT model FROM audit_log LIMIT 1"
    [alert] = sent(ctx)
    assert alert.text.startswith("🔧 SELF-HEALING (1/10): audit_log misses the model")
    [task] = ctx.store.pending_tasks(OWNER)
    assert task.task_type == "action" and task.channel == OWNER
    assert "SELECT model FROM audit_log LIMIT 1" in task.description
    assert "SELF_HEAL_RESOLVED" in task.description
    delay = task.due_at - datetime.now(UTC)
    assert timedelta(seconds=100) < delay <= timedelta(minutes=2)
    assert ctx.paths.self_healing.stat().st_mode & 0o777 == 0o600


def test_cap_holds_even_when_the_model_insists(ctx: MarkerContext) -> None:
    for attempt in range(12):
        apply(ctx, f"SELF_HEAL: fix attempt {attempt} | check it")
    # The model (or anyone) editing the file cannot lift the cap or reset the count either.
    data = json.loads(ctx.paths.self_healing.read_text())
    data["max_iterations"], data["iteration"] = 999, 0
    ctx.paths.self_healing.write_text(json.dumps(data))
    refused = apply(ctx, "SELF_HEAL: one more | check it")
    assert "escalated" in refused[0]
    assert ctx.store.pending_tasks(OWNER) == []  # escalation cancelled its ten checks
    escalations = [m for m in sent(ctx) if "ESCALATION" in m.text]
    assert len(escalations) == 1
    state = SelfHealStore(ctx.store).current()
    assert state is not None and state.status == "escalated"
    assert state.iteration == MAX_ITERATIONS + 1  # preserved for the owner
    # The model cannot close an escalation; the owner can.
    apply(ctx, "SELF_HEAL_RESOLVED")
    assert SelfHealStore(ctx.store).current() is not None
    assert (
        command(ctx, "/selfheal clear", channel="telegram", sender="999")
        == "Only my owner can do that."
    )
    cleared = command(ctx, "/selfheal clear", channel="telegram", sender="42")
    assert cleared.startswith("Cleared")
    assert SelfHealStore(ctx.store).current() is None
    assert not ctx.paths.self_healing.exists()


def test_resolution_deletes_the_state_and_tells_the_owner(ctx: MarkerContext) -> None:
    apply(ctx, "SELF_HEAL: broken thing | verify thing")
    apply(ctx, "Verified.\nSELF_HEAL_RESOLVED")
    assert not ctx.paths.self_healing.exists()
    assert sent(ctx)[-1].text == "✅ Self-healing complete: broken thing"
    events = [e["event"] for e in ctx.store.audit_entries()]
    assert "self_heal" in events and "self_heal_resolved" in events


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(verb="/resolve", args="¹")  # str.isdigit() says yes, int() says no: it crashed
@example(verb="/merge", args="² 1")
@example(verb="/proposals", args="³")
@example(verb="/approve", args="¹ fine")
@example(verb="/resolve", args="٣")  # an Arabic-Indic three: a number, as int() reads it
@example(verb="/resolve", args="9223372036854775808")  # past SQLite's integers: it crashed
@example(verb="/merge", args="1 99999999999999999999")
@example(verb="/proposals", args="9223372036854775808")
@example(verb="/approve", args="9223372036854775808 fine")
@example(verb="/reject", args="99999999999999999999 no")
@given(
    verb=st.sampled_from(["/merge", "/resolve", "/proposals", "/approve", "/reject"]),
    args=st.text(
        st.characters(exclude_categories=["Cs"]) | st.sampled_from("12 ٣¹x-"), max_size=30
    ),
)
def test_merge_and_resolve_answer_any_arguments_and_change_only_what_they_name(
    ctx: MarkerContext, verb: str, args: str
) -> None:
    """Whatever follows a command that takes an id (digits of other scripts, signs, spaces,
    nothing), the owner gets a reply, and only a well-formed /merge or /resolve changes the
    limitations."""
    store = LimitationStore(ctx.store)
    while len(store.list("open")) < 2:  # the examples before may have merged or resolved
        apply(ctx, f"LIMITATION: Gap {uuid.uuid4().hex[:6]} | missing | add it")
    before = [(item.id, item.status) for item in store.list()]
    reply = command(ctx, f"{verb} {args}", channel="telegram", sender="42")
    assert isinstance(reply, str) and reply.strip()
    after = [(item.id, item.status) for item in store.list()]
    if not reply.startswith(("Merged [", "Resolved [")):
        assert after == before, reply
    else:
        changed = [a for a, b in zip(after, before, strict=True) if a != b]
        named = int(args.split()[0])
        assert len(changed) == 1 and changed[0][0] == named, (reply, changed)
