"""Scheduler, heartbeat and summarizer, in process with a scripted provider."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time, timedelta

import pytest

from omega.gateway.pipeline import respond
from omega.hours import within_active_hours
from omega.loops.heartbeat import heartbeat_loop, is_heartbeat_ok, run_heartbeat
from omega.loops.scheduler import Scheduler
from omega.loops.summarizer import is_valid_fact, parse_facts, summarize_conversation
from omega.owner import OWNER
from omega.providers.base import ErrorKind, ProviderError
from omega.turn import PipelineDeps
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider


def add_task(deps: PipelineDeps, due: datetime, **fields: str) -> str:
    values: dict[str, str] = {
        "description": "Call mom",
        "repeat": "once",
        "task_type": "reminder",
        "timezone": "Europe/Lisbon",
        **fields,
    }
    task_id, _ = deps.store.create_task(
        channel="terminal",
        sender_id="ana",
        reply_target="ana",
        due_at=due,
        description=values["description"],
        repeat=values["repeat"],
        task_type=values["task_type"],
        timezone=values["timezone"],
    )
    return task_id


NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)


def test_due_reminder_is_delivered_once(make_deps: MakeDeps) -> None:
    deps = make_deps(ScriptedProvider())
    task_id = add_task(deps, NOW - timedelta(seconds=1))
    add_task(deps, NOW + timedelta(hours=1), description="later")
    out = Recorder()
    scheduler = Scheduler(deps, out, respond)
    assert asyncio.run(scheduler.run_due(NOW)) == 1
    assert asyncio.run(scheduler.run_due(NOW)) == 0
    assert [(m.text, m.kind, m.target) for m in out.sent] == [
        ("Reminder: Call mom", "reminder", "ana")
    ]
    task = deps.store.task(task_id)
    assert task is not None and task.status == "delivered"


def test_repeating_task_moves_to_its_next_occurrence(make_deps: MakeDeps) -> None:
    deps = make_deps(ScriptedProvider())
    task_id = add_task(deps, datetime(2020, 1, 31, 9, 0, tzinfo=UTC), repeat="monthly")
    out = Recorder()
    asyncio.run(Scheduler(deps, out, respond).run_due())
    task = deps.store.task(task_id)
    assert task is not None and task.status == "pending"
    assert task.due_at > datetime.now(UTC)
    local = task.due_at.astimezone(__import__("zoneinfo").ZoneInfo("Europe/Lisbon"))
    assert local.hour == 9
    assert len(out.sent) == 1  # years of missed occurrences fire once, not once each


def test_failed_send_is_retried_with_backoff_never_marked_delivered(make_deps: MakeDeps) -> None:
    deps = make_deps(
        ScriptedProvider(),
        OMEGA_SCHEDULER__RETRY_BASE_SECS="60",
        OMEGA_SCHEDULER__MAX_RETRIES="1",
    )
    task_id = add_task(deps, NOW - timedelta(minutes=5))
    out = Recorder(failures=1)
    scheduler = Scheduler(deps, out, respond)
    asyncio.run(scheduler.run_due(NOW))
    task = deps.store.task(task_id)
    assert task is not None
    assert (task.status, task.retry_count) == ("pending", 1)
    assert task.due_at > datetime.now(UTC) + timedelta(seconds=50)
    asyncio.run(scheduler.run_due(task.due_at))
    task = deps.store.task(task_id)
    assert task is not None and task.status == "delivered"
    assert [m.text for m in out.sent] == ["Reminder: Call mom"]
    # Past max_retries the task is failed, never delivered.
    other = add_task(deps, NOW - timedelta(minutes=1), description="doomed")
    out.failures = 5
    for _ in range(3):
        pending = deps.store.task(other)
        assert pending is not None
        asyncio.run(scheduler.run_due(max(pending.due_at, NOW)))
    final = deps.store.task(other)
    assert final is not None and final.status == "failed"


def test_a_reminder_cut_short_by_a_crash_is_delivered_again_with_its_stable_id(
    make_deps: MakeDeps,
) -> None:
    """A missed reminder is worse than a repeated one: a reminder the dead run had claimed is
    delivered again, at least once, with the id a first delivery carries (task:<id>@<due>), so
    a receiver can drop a repeat; then it moves on to its next time."""
    deps = make_deps(ScriptedProvider())
    task_id = add_task(deps, NOW - timedelta(seconds=5), repeat="daily")
    first = Recorder()
    assert asyncio.run(Scheduler(deps, first, respond).run_due(NOW)) == 1
    task = deps.store.task(task_id)
    assert task is not None
    deps.store.update_task("ana", task_id[:8], due_at=NOW - timedelta(seconds=5))  # again due
    assert deps.store.claim_task(task_id)  # the run that died had claimed it (and maybe sent)
    out = Recorder()
    scheduler = Scheduler(deps, out, respond)
    assert asyncio.run(scheduler.recover()) == 1
    asyncio.run(scheduler.run_due(NOW))
    assert [m.text for m in out.sent] == ["Reminder: Call mom"]
    assert out.sent[0].id == first.sent[0].id  # the same occurrence, the same id
    assert out.sent[0].id.startswith(f"task:{task_id}@")
    task = deps.store.task(task_id)
    assert task is not None and task.status == "pending" and task.due_at > NOW


def test_an_action_cut_short_by_a_crash_is_never_counted_done_nor_run_again_by_itself(
    make_deps: MakeDeps,
) -> None:
    """An action may act in the world: cut short, it is not run again by itself, and not
    silently counted as done: its person is told it may not have run, with the task, and
    /rerun runs it again (once)."""
    from omega.gateway.pipeline import handle_message
    from omega.types import IncomingMessage

    provider = ScriptedProvider("Ran it.", "Ran it again.")
    deps = make_deps(provider)
    task_id = add_task(
        deps, NOW - timedelta(seconds=1), description="Pay the rent", task_type="action"
    )
    assert deps.store.claim_task(task_id)  # claimed by a run that died mid-action
    out = Recorder()
    scheduler = Scheduler(deps, out, respond)
    assert asyncio.run(scheduler.recover()) == 1
    asyncio.run(scheduler.run_due(NOW + timedelta(days=1)))
    assert provider.prompts == []  # not run again by itself
    (told,) = out.sent
    assert told.kind == "alert" and told.target == "ana"
    assert "may not have run" in told.text and "Pay the rent" in told.text
    assert f"/rerun {task_id[:8]}" in told.text
    task = deps.store.task(task_id)
    assert task is not None and task.status == "failed"  # not "delivered"
    (row,) = deps.store.query("SELECT last_error FROM scheduled_tasks WHERE id = ?", (task_id,))
    assert "may not have run" in str(row["last_error"])
    # /rerun from the task's person runs it now, once.
    rerun = Recorder()
    message = IncomingMessage("terminal", "ana", f"/rerun {task_id[:8]}", assurance="local")
    asyncio.run(handle_message(deps, message, rerun))
    assert any("again now" in m.text for m in rerun.sent), [m.text for m in rerun.sent]
    asyncio.run(scheduler.run_due(datetime.now(UTC)))
    assert len(provider.prompts) == 1 and "Pay the rent" in provider.prompts[0]
    task = deps.store.task(task_id)
    assert task is not None and task.status == "delivered"
    # Someone else cannot run it.
    other = IncomingMessage("terminal", "bob", f"/rerun {task_id[:8]}", assurance="local")
    answer = Recorder()
    asyncio.run(handle_message(deps, other, answer))
    assert any("Nothing to run again" in m.text for m in answer.sent)


def test_action_task_runs_the_provider_and_can_schedule_more(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(
        "Top story: rain.\nSCHEDULE_ACTION: Check news again | 2031-01-01T08:00 | once"
    )
    deps = make_deps(provider)
    add_task(deps, NOW - timedelta(seconds=1), description="Check the news", task_type="action")
    out = Recorder()
    asyncio.run(Scheduler(deps, out, respond).run_due(NOW))
    assert [m.text for m in out.sent if m.kind == "reply"] == ["Top story: rain."]
    assert "Check the news" in provider.prompts[0]
    pending = deps.store.pending_tasks("ana")
    assert [t.description for t in pending] == ["Check news again"]
    assert pending[0].task_type == "action"


def test_failing_action_is_retried_not_lost(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(ProviderError("down", kind="timeout"), "Done now.")
    deps = make_deps(provider, OMEGA_SCHEDULER__RETRY_BASE_SECS="1")
    task_id = add_task(deps, NOW, description="Backup report", task_type="action")
    out = Recorder()
    scheduler = Scheduler(deps, out, respond)
    asyncio.run(scheduler.run_due(NOW))
    task = deps.store.task(task_id)
    assert task is not None and task.status == "pending" and task.retry_count == 1
    asyncio.run(scheduler.run_due(task.due_at))
    assert [m.text for m in out.sent if m.kind == "reply"] == ["Done now."]


def test_scheduler_sleeps_until_due_and_wakes_when_a_task_is_added(make_deps: MakeDeps) -> None:
    deps = make_deps(ScriptedProvider())
    out = Recorder()

    async def scenario() -> float:
        stop = asyncio.Event()
        runner = asyncio.create_task(Scheduler(deps, out, respond).run(stop))
        await asyncio.sleep(0.2)  # nothing pending: it sleeps (up to an hour)
        due = datetime.now(UTC) + timedelta(seconds=0.5)
        add_task(deps, due)
        deps.state.tasks_changed.set()
        while not out.sent:
            await asyncio.sleep(0.01)
        late = (datetime.now(UTC) - due).total_seconds()
        stop.set()
        await runner
        return late

    late = asyncio.run(scenario())
    assert 0 <= late < 1.0
    assert len(out.sent) == 1


@pytest.mark.no_store
@pytest.mark.parametrize(
    "now, start, end, inside",
    [
        (time(12, 0), "08:00", "22:00", True),
        (time(7, 59), "08:00", "22:00", False),
        (time(22, 0), "08:00", "22:00", False),
        (time(23, 30), "22:00", "06:00", True),
        (time(3, 0), "22:00", "06:00", True),
        (time(6, 0), "22:00", "06:00", False),
        (time(12, 0), "22:00", "06:00", False),
        (time(12, 0), "", "", True),
        (time(12, 0), "bad", "06:00", True),
    ],
)
def test_active_hours_with_midnight_wrap(now: time, start: str, end: str, inside: bool) -> None:
    assert within_active_hours(now, start, end) is inside


@pytest.mark.no_store
@pytest.mark.parametrize(
    "text, ok",
    [
        ("HEARTBEAT_OK", True),
        ("**HEARTBEAT_OK**", True),
        ("`heartbeat_ok`.", True),
        ("All good. HEARTBEAT_OK", True),
        ("Disk is 95% full!", False),
        ("", False),
    ],
)
def test_heartbeat_ok_is_tolerant_of_formatting(text: str, ok: bool) -> None:
    assert is_heartbeat_ok(text) is ok


def heartbeat_deps(make_deps: MakeDeps, provider: ScriptedProvider) -> PipelineDeps:
    return make_deps(
        provider,
        OMEGA_HEARTBEAT__CHANNEL="terminal",
        OMEGA_HEARTBEAT__REPLY_TARGET="owner",
    )


def test_heartbeat_skips_without_checklist(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider("Something is wrong")
    deps = heartbeat_deps(make_deps, provider)
    assert asyncio.run(run_heartbeat(deps, Recorder())) is None
    assert provider.prompts == []


def test_heartbeat_all_fine_is_suppressed_anything_else_delivered(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(
        "**HEARTBEAT_OK**", "Disk is 95% full, clean /tmp.\nHEARTBEAT_ADD: Disk"
    )
    deps = heartbeat_deps(make_deps, provider)
    deps.paths.heartbeat.write_text("# Checklist\n- Check disk space\n")
    deps.store.set_fact("owner", "name", "Ana")
    deps.store.close_conversation(
        deps.store.store_exchange("terminal", "owner", "a", "b"), "Talked about disks."
    )
    out = Recorder()
    assert asyncio.run(run_heartbeat(deps, out)) is None
    assert out.sent == []
    assert "Check disk space" in provider.prompts[0]
    assert "name: Ana" in provider.prompts[0]
    assert "Talked about disks." in provider.prompts[0]
    assert asyncio.run(run_heartbeat(deps, out)) == "Disk is 95% full, clean /tmp."
    assert [(m.channel, m.target, m.kind) for m in out.sent] == [(OWNER, OWNER, "alert")]
    events = [e["detail"] for e in deps.store.audit_entries() if e["event"] == "heartbeat"]
    assert events == ["alert delivered", "suppressed: all fine"]


def test_heartbeat_loop_follows_interval_changes(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(*["Alert!"] * 20)
    deps = heartbeat_deps(make_deps, provider)
    deps.paths.heartbeat.write_text("- Check things\n")
    out = Recorder()

    async def scenario() -> int:
        stop = asyncio.Event()
        deps.state.heartbeat_interval = 600  # 600 "minutes" of 0.01 s: 6 s
        loop = asyncio.create_task(heartbeat_loop(deps, out, stop, seconds_per_minute=0.01))
        await asyncio.sleep(0.3)
        before = len(provider.prompts)
        deps.state.heartbeat_interval = 5  # 0.05 s, as a HEARTBEAT_INTERVAL marker would
        deps.state.heartbeat_changed.set()
        await asyncio.sleep(0.5)
        stop.set()
        await loop
        return before

    assert asyncio.run(scenario()) == 0
    assert len(provider.prompts) >= 3


@pytest.mark.no_store
@pytest.mark.parametrize(
    "key, value, valid",
    [
        ("name", "Ana", True),
        ("timezone", "Europe/Lisbon", True),
        ("k" * 51, "x", False),
        ("name", "x" * 201, False),
        ("123", "x", False),
        ("budget", "$500", False),
        ("row", "a | b | c", False),
        ("price", "42.50", False),
        ("age", "34", False),
        ("", "x", False),
        ("name", "", False),
    ],
)
def test_fact_validation(key: str, value: str, valid: bool) -> None:
    assert is_valid_fact(key, value) is valid


@pytest.mark.no_store
def test_parse_facts_normalizes_and_filters() -> None:
    text = "- Preferred Name: Ana\n**city**: Porto\nprice: $30\nnot a fact line\n1234: x"
    assert parse_facts(text) == {"preferred_name": "Ana", "city": "Porto"}
    assert parse_facts("None.") == {}


def test_summarizer_stores_summary_and_facts_then_closes(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider("Ana planned her garden.", "name: Ana\ncity: Porto\nspend: $40")
    deps = make_deps(provider)
    conversation = deps.store.store_exchange("terminal", "ana", "I'm Ana from Porto", "Hi Ana")
    summary = asyncio.run(summarize_conversation(deps, conversation))
    assert summary == "Ana planned her garden."
    assert deps.store.facts("ana") == {"name": "Ana", "city": "Porto"}
    assert deps.store.recent_summaries("ana") == ["Ana planned her garden."]
    assert deps.store.active_conversation_id("terminal", "ana") is None
    assert "User: I'm Ana from Porto" in provider.prompts[0]


def test_failed_summary_falls_back_and_still_closes(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(ProviderError("down"), ProviderError("down"))
    deps = make_deps(provider)
    conversation = deps.store.store_exchange("terminal", "bo", "hello", "hi")
    asyncio.run(summarize_conversation(deps, conversation))
    assert deps.store.recent_summaries("bo") == ["(2 messages, summary unavailable)"]
    assert deps.store.active_conversation_id("terminal", "bo") is None


@pytest.mark.parametrize("kind", ["unavailable", "timeout", "overloaded", "rate_limit"])
def test_a_summary_the_provider_cannot_make_now_stays_queued(
    make_deps: MakeDeps, kind: ErrorKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: the provider down (or refusing for load, asked again by the limiter first)
    leaves the conversation open for a later pass, with no placeholder summary; the pass stops
    at the first such failure."""
    from omega.loops.summarizer import SummaryDeferredError, summarize_idle
    from omega.providers import limiter

    monkeypatch.setattr(limiter, "LOAD_BACKOFF_SECS", 0.01)
    provider = ScriptedProvider(default=ProviderError("down", kind=kind))
    deps = make_deps(provider)
    first = deps.store.store_exchange("terminal", "bo", "hello", "hi")
    deps.store.store_exchange("terminal", "cy", "hello", "hi")
    with pytest.raises(SummaryDeferredError):
        asyncio.run(summarize_conversation(deps, first))
    asked = len(provider.prompts)
    assert deps.store.recent_summaries("bo") == []
    assert deps.store.active_conversation_id("terminal", "bo") == first
    deps.config.memory.idle_minutes = 1e-9
    assert asyncio.run(summarize_idle(deps)) == 0
    assert len(provider.prompts) == 2 * asked  # the pass did not ask for the second one
    assert len(deps.store.active_conversations()) == 2


def test_heartbeat_carries_open_limitations_and_can_resolve_them(make_deps: MakeDeps) -> None:
    from omega.evolution.gaps import LimitationStore

    provider = ScriptedProvider(
        "LIMITATION_RESOLVED: No email | SMTP skill installed\nHEARTBEAT_OK"
    )
    deps = heartbeat_deps(make_deps, provider)
    repo = LimitationStore(deps.store)
    repo.add("No email", "Cannot send emails", "Add SMTP", "marker", reported_by="owner")
    deps.paths.heartbeat.write_text("- [ ] No email — Cannot send emails\n- Check disk\n")
    assert asyncio.run(run_heartbeat(deps, Recorder())) is None
    assert "## Self-Audit" in provider.prompts[0]
    assert "OS sandbox of your commands: sandbox (landlock ABI" in provider.prompts[0]
    assert "Open limitations:\n- No email — Cannot send emails" in provider.prompts[0]
    [item] = repo.list()
    assert item.status == "resolved"
    assert "No email" not in deps.paths.heartbeat.read_text()


def test_the_heartbeat_interval_is_kept_in_the_store_and_read_by_the_loop(
    make_deps: MakeDeps,
) -> None:
    """A HEARTBEAT_INTERVAL marker keeps its interval in the store (memory.state): the
    replica running the heartbeat, or the next start, uses it, not only the process that
    answered the marker."""
    from omega.memory.state import HEARTBEAT_INTERVAL, SETTINGS

    provider = ScriptedProvider(*["Alert!"] * 20)
    deps = heartbeat_deps(make_deps, provider)
    deps.paths.heartbeat.write_text("- Check things\n")
    deps.store.state_put(SETTINGS, HEARTBEAT_INTERVAL, 5)  # set by another replica
    out = Recorder()

    async def scenario() -> None:
        stop = asyncio.Event()
        deps.state.heartbeat_interval = 600  # this replica's own: 6 s, no beat in the test
        loop = asyncio.create_task(heartbeat_loop(deps, out, stop, seconds_per_minute=0.01))
        for _ in range(200):
            if len(provider.prompts) >= 3:
                break
            await asyncio.sleep(0.02)
        stop.set()
        await loop

    asyncio.run(scenario())
    assert deps.state.heartbeat_interval == 5
    assert len(provider.prompts) >= 3
