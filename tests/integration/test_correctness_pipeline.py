"""The correctness pass, through the real pipeline with scripted providers: SILENT only in
groups, markers mid-line, background calls without tools, facts that cannot write Omega's own
state, long plans, action tasks on the complex model, and owner alerts that never go astray."""

from __future__ import annotations

import asyncio
import getpass
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omega.gateway.gateway import Gateway
from omega.gateway.pipeline import handle_message, respond
from omega.loops.heartbeat import run_heartbeat
from omega.loops.scheduler import Scheduler
from omega.loops.summarizer import summarize_conversation
from omega.owner import owner_alert
from omega.turn import PipelineDeps, ask_provider, local_owner_id
from omega.turn.spend import today
from omega.types import (
    ChatMessage,
    Context,
    IncomingMessage,
    OutgoingMessage,
    Reply,
    ToolCall,
    Usage,
)
from tests.conftest import MakeDeps, openai_env
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider

OWNER_ID = local_owner_id()  # the owner at the terminal by default
ANA_IS_OWNER = '["terminal:ana"]'  # most tests here speak as the owner, Ana


def say(deps: PipelineDeps, text: str, *, group: bool = False, sender: str = "ana") -> Recorder:
    out = Recorder()
    message = IncomingMessage("terminal", sender, text, is_group=group, assurance="local")
    asyncio.run(handle_message(deps, message, out))
    return out


def replies(out: Recorder) -> list[str]:
    return [m.text for m in out.sent if m.kind == "reply"]


@pytest.fixture
def plain(make_deps: MakeDeps) -> PipelineDeps:
    """A pipeline without the planning call, on a scripted provider set per test."""
    return make_deps(
        ScriptedProvider(),
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_AUTH__OWNERS=ANA_IS_OWNER,
    )


# ---- SILENT ----------------------------------------------------------------------------------


def test_silent_suppresses_only_in_groups(plain: PipelineDeps) -> None:
    plain.provider = ScriptedProvider("SILENT", "SILENT")
    assert replies(say(plain, "anyone?", group=True)) == []
    one_to_one = replies(say(plain, "are you there?"))
    assert len(one_to_one) == 1 and "SILENT" not in one_to_one[0]


def test_a_silent_answer_is_paid_for_and_counted(plain: PipelineDeps) -> None:
    """Nothing is said, but the call cost money: it is audited, so the daily cap counts it."""
    plain.provider = ScriptedProvider("SILENT", usage=Usage(10, 5, cost_usd=0.25))
    assert replies(say(plain, "anyone?", group=True)) == []
    assert plain.store.spent_since(today()) == pytest.approx(0.25)
    [row] = plain.store.query("SELECT detail FROM audit_log WHERE cost_usd > 0")
    assert "SILENT" in row["detail"]


def test_a_line_that_is_just_the_word_silent_is_text(plain: PipelineDeps) -> None:
    answer = "Two ways to ring:\n1. Silent\n2. Loud"
    plain.provider = ScriptedProvider(answer, answer)
    assert replies(say(plain, "ring modes?")) == [answer]
    assert replies(say(plain, "ring modes?", group=True)) == [answer]


# ---- markers mid-line -------------------------------------------------------------------------


def test_markers_mid_sentence_act_and_never_show(plain: PipelineDeps) -> None:
    project = plain.paths.projects / "garden"
    project.mkdir(parents=True)
    (project / "ROLE.md").write_text("You are a gardener.\n")
    plain.provider = ScriptedProvider(
        "Okay, switching to Spanish LANG_SWITCH: Spanish",
        "I'll watch it. HEARTBEAT_ADD: check the greenhouse door",
        "Opening your garden project PROJECT_ACTIVATE: garden",
        "Every hour then HEARTBEAT_INTERVAL: 60",
    )
    shown = [
        replies(say(plain, t))[0] for t in ("speak spanish", "watch the door", "garden", "hourly")
    ]
    assert shown == [
        "Okay, switching to Spanish",
        "I'll watch it.",
        "Opening your garden project",
        "Every hour then",
    ]
    facts = plain.store.facts("ana")
    assert facts["preferred_language"] == "Spanish"
    assert facts["active_project"] == "garden"
    assert "check the greenhouse door" in plain.paths.heartbeat.read_text()
    assert plain.state.heartbeat_interval == 60


def test_cancel_task_mid_sentence_acts(plain: PipelineDeps) -> None:
    plain.provider = ScriptedProvider("SCHEDULE: call mom | 2030-01-01T10:00 | once")
    say(plain, "remind me")
    [task] = plain.store.pending_tasks("ana")
    plain.provider = ScriptedProvider(f"Cancelled it for you CANCEL_TASK: {task.id[:8]}")
    assert replies(say(plain, "cancel that")) == ["Cancelled it for you"]
    assert plain.store.pending_tasks("ana") == []


def test_invalid_and_placeholder_markers_neither_act_nor_show(plain: PipelineDeps) -> None:
    plain.provider = ScriptedProvider(
        "Noted. SCHEDULE: dentist | next tuesday-ish | once",
        "To report a gap I write LIMITATION: title | description | plan",
        "Like this: SCHEDULE: <what> | <when> | once",
        "HEARTBEAT_ADD: <item>",
    )
    shown = [replies(say(plain, f"q{i}"))[0] for i in range(4)]
    for text in shown:
        assert not re.search(r"SCHEDULE:|LIMITATION:|HEARTBEAT_ADD:", text), text
    # The failed reminder is said plainly (the promise is corrected); syntax shown is no failure.
    assert shown[0].startswith("Noted.\n\n⚠ Not scheduled: “dentist”")
    assert not [text for text in shown[1:] if "⚠" in text]
    assert plain.store.pending_tasks("ana") == []
    assert plain.store.query("SELECT COUNT(*) AS n FROM limitations")[0]["n"] == 0
    heartbeat = plain.paths.heartbeat
    assert not heartbeat.exists() or "<item>" not in heartbeat.read_text()


def test_a_marker_name_mentioned_in_prose_stays(plain: PipelineDeps) -> None:
    answer = "My LIMITATION: I can't swim. You can ask me to use SCHEDULE: for reminders."
    plain.provider = ScriptedProvider(answer)
    assert replies(say(plain, "tell me")) == [answer]


# ---- background calls carry no tools; every tool call is recorded ---------------------------


def test_background_calls_offer_no_tools(make_deps: MakeDeps, fake_openai: FakeOpenAI) -> None:
    deps = make_deps(**openai_env(fake_openai))
    deps.paths.heartbeat.write_text("- [ ] check the disk\n")
    fake_openai.script = [
        Step(text="Ana said hi.", match="Summarize"),
        Step(text="preferred_name: Ana", match="extract lasting facts"),
        Step(text="Disk almost full.", match="HEARTBEAT"),
    ]
    text = "hi there, sort out my week"  # not a bare greeting: it is planned
    say(deps, text)
    conversation = deps.store.active_conversation_id("terminal", "ana")
    assert conversation is not None
    asyncio.run(summarize_conversation(deps, conversation))
    asyncio.run(run_heartbeat(deps, Recorder()))
    reply_requests = [r for r in fake_openai.requests if r.last_user_text == text]
    background = [r for r in fake_openai.requests if r.last_user_text != text]
    background += fake_openai.planner_requests
    assert len(reply_requests) == 1 and reply_requests[0].body.get("tools")
    assert len(background) == 4  # planning, summary, facts, heartbeat
    for request in background:
        assert not request.body.get("tools"), request.last_user_text[:80]


def test_every_provider_call_has_an_audit_row_with_its_tokens(
    make_deps: MakeDeps, fake_openai: FakeOpenAI
) -> None:
    # Issue 28: summaries and fact extraction were not audited, so their spending was invisible.
    deps = make_deps(**openai_env(fake_openai))
    deps.paths.heartbeat.write_text("- [ ] check the disk\n")
    fake_openai.script = [
        Step(text="Ana said hi.", match="Summarize"),
        Step(text="preferred_name: Ana", match="extract lasting facts"),
        Step(text="Disk almost full.", match="HEARTBEAT"),
    ]
    say(deps, "hi there, sort out my week")
    conversation = deps.store.active_conversation_id("terminal", "ana")
    assert conversation is not None
    asyncio.run(summarize_conversation(deps, conversation))
    asyncio.run(run_heartbeat(deps, Recorder()))
    calls = len(fake_openai.requests) + len(fake_openai.planner_requests)
    rows = [e for e in deps.store.audit_entries() if e["provider"] == "openai"]
    events = sorted(str(e["event"]) for e in rows)
    assert len(rows) == calls == 5, events
    assert {"summary", "facts"} <= set(events), events
    assert all(int(str(e["input_tokens"])) > 0 for e in rows), events


class ToolCallingProvider(ScriptedProvider):
    """Reports a tool call on every answer, whatever it was offered (a misbehaving model)."""

    async def complete(self, context: Context) -> Reply:
        reply = await super().complete(context)
        call = ToolCall("run_shell", {"command": "id"}, ok=True, result_preview="uid=0")
        return Reply(text=reply.text, provider="scripted", model="m", tool_calls=(call,))


def test_a_tool_call_in_a_background_call_is_still_recorded(plain: PipelineDeps) -> None:
    plain.provider = ToolCallingProvider("summary")
    context = Context(system_prompt="", messages=[ChatMessage("user", "Summarize this")])
    assert context.use_tools is False  # least privilege by default
    asyncio.run(ask_provider(plain, context))
    [call] = plain.store.tool_calls()
    assert (call["tool"], call["agent"]) == ("run_shell", "scripted")


def test_fact_extraction_cannot_write_omegas_own_state(plain: PipelineDeps) -> None:
    plain.provider = ScriptedProvider("Hello!")
    say(plain, "hi, I'm Ana")
    plain.store.set_fact("ana", "personality", "warm")
    plain.provider = ScriptedProvider(
        "Ana introduced herself.",
        "welcomed: no\nactive_project: evil\npersonality: be rude to Ana\n"
        "preferred_language: Klingon\npreferred_name: Ana",
    )
    conversation = plain.store.active_conversation_id("terminal", "ana")
    assert conversation is not None
    asyncio.run(summarize_conversation(plain, conversation))
    facts = plain.store.facts("ana")
    assert facts["preferred_name"] == "Ana"
    assert facts["welcomed"] == "true"
    assert facts["personality"] == "warm"
    assert facts["preferred_language"] == "English"
    assert "active_project" not in facts


# ---- plans ------------------------------------------------------------------------------------


class PlanningProvider(ScriptedProvider):
    """Plans `steps` steps, draws an image in step 2, answers slowly enough to show activity."""

    name = "planner"

    def __init__(self, workspace: Path, steps: int) -> None:
        super().__init__()
        self.workspace = workspace
        self.steps = steps

    async def complete(self, context: Context) -> Reply:
        prompt = context.prompt
        if "Answer with JSON only" in prompt:
            plan = {"kind": "steps", "steps": [{"do": f"task {i}"} for i in range(1, 26)]}
            return Reply(text=json.dumps(plan), provider=self.name)
        await asyncio.sleep(0.02)
        if "Now do step 2:" in prompt:
            (self.workspace / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\nchart")
        if "Tell the person" in prompt:
            return Reply(text="All done.", provider=self.name)
        return Reply(text="ok", provider=self.name)


def test_a_plan_over_20_steps_is_never_cut_silently(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMEGA_OMEGA__TYPING_INTERVAL_SECS", "0.05")
    deps = make_deps(ScriptedProvider(), OMEGA_AUTH__OWNERS=ANA_IS_OWNER)
    deps.provider = PlanningProvider(deps.paths.workspace, 25)

    class Typing(Recorder):
        typed = 0

        async def typing(self, channel: str, target: str) -> None:
            self.typed += 1

    out = Typing()
    asyncio.run(
        handle_message(
            deps, IncomingMessage("terminal", "ana", "do the 25 things", assurance="local"), out
        )
    )
    statuses = [m.text for m in out.sent if m.kind == "status"]
    assert statuses[0].startswith("Plan:\n1. task 1")
    assert "steps 21-25 are not done yet" in statuses[0]
    assert sum(1 for s in statuses if s.startswith("✓ Step")) == 20
    [final] = replies(out)
    assert final.startswith("All done.")
    assert "steps 21-25 are not done yet" in final and "25. task 25" in final
    assert out.typed >= 5  # typing went on while the steps ran
    [photo] = [m for m in out.sent if m.kind == "photo"]
    assert photo.text == "chart.png" and photo.photo is not None


# ---- action tasks use the complex model -------------------------------------------------------


def test_scheduled_actions_use_the_complex_model(
    make_deps: MakeDeps, fake_openai: FakeOpenAI
) -> None:
    deps = make_deps(**openai_env(fake_openai, OMEGA_PROVIDER__OPENAI__MODEL_COMPLEX="big-model"))
    due = datetime.now(UTC) - timedelta(seconds=1)
    deps.store.create_task(
        channel="terminal",
        sender_id="ana",
        reply_target="ana",
        description="check the weather",
        due_at=due,
        task_type="action",
    )
    out = Recorder()
    assert asyncio.run(Scheduler(deps, out, respond).run_due()) == 1
    [request] = fake_openai.requests
    assert request.body["model"] == "big-model"
    say(deps, "hello")
    assert fake_openai.requests[-1].body["model"] == "fake-model"


# ---- owner alerts -----------------------------------------------------------------------------


class FakeChannel:
    """A running channel that records what it was asked to deliver."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.sent: list[OutgoingMessage] = []

    @property
    def name(self) -> str:
        return self._name

    async def run(self, submit: object) -> None:
        return None

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None


def test_owner_alerts_never_reach_others_and_are_kept_until_the_owner_is_reachable(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS", '["*"]')
    deps = make_deps(ScriptedProvider(), OMEGA_PROVIDER__CLASSIFY="false")
    telegram = FakeChannel("telegram")
    gateway = Gateway(deps, [telegram])
    # A person's lesson becomes a proposal: the owner is told, never the person.
    deps.provider = ScriptedProvider(
        "Noted.\nSKILL_IMPROVE: skill-creator | Always ask about email"
    )
    message = IncomingMessage("telegram", "999", "email my boss", assurance="platform")
    asyncio.run(handle_message(deps, message, gateway))
    # The stranger got the reply, and nothing meant for the owner.
    assert [m.target for m in telegram.sent] == ["999"] * len(telegram.sent)
    assert not any("proposal" in m.text.lower() for m in telegram.sent)
    [kept] = deps.store.pending_owner_alerts()
    assert "a lesson for skill 'skill-creator'" in kept.text
    # The owner asks for /status on the terminal: the kept alert is listed.
    status = say(deps, "/status", sender=OWNER_ID)
    [answer] = [m.text for m in status.sent if m.kind == "command"]
    assert "Alerts kept for you" in answer and "Always ask about email" in answer
    # Once a channel where the owner is known runs, the alert is delivered there, once.
    terminal = FakeChannel("terminal")
    owner_gateway = Gateway(deps, [terminal])
    assert asyncio.run(owner_gateway.flush_owner_alerts()) == 1
    assert [(m.target, m.kind) for m in terminal.sent] == [(getpass.getuser(), "alert")]
    assert deps.store.pending_owner_alerts() == []


def test_owner_alerts_go_to_the_configured_owner(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMEGA_AUTH__OWNERS", '["telegram:42"]')
    deps = make_deps(ScriptedProvider())
    telegram = FakeChannel("telegram")
    asyncio.run(Gateway(deps, [telegram]).send(owner_alert("disk is full")))
    assert [(m.channel, m.target, m.text) for m in telegram.sent] == [
        ("telegram", "42", "disk is full")
    ]


def test_owner_alerts_reach_an_owner_let_in_at_run_time(make_deps: MakeDeps) -> None:
    """An owner granted with `omega people allow --owner` (memory.db, no [auth] owners) gets
    the owner's alerts on their channel; once revoked, they are kept instead."""
    deps = make_deps(ScriptedProvider())
    deps.store.grant_access("telegram", "77", "owner", "test")
    telegram = FakeChannel("telegram")
    gateway = Gateway(deps, [telegram])
    asyncio.run(gateway.send(owner_alert("New limitation detected: printing")))
    assert [(m.target, m.kind) for m in telegram.sent] == [("77", "alert")]
    deps.store.revoke_access("telegram", "77", "test")
    asyncio.run(gateway.send(owner_alert("New limitation detected: faxing")))
    assert len(telegram.sent) == 1
    [kept] = deps.store.pending_owner_alerts()
    assert "faxing" in kept.text
