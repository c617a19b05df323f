"""Repeating tasks keep their wall-clock time, through the whole path:
the model's SCHEDULE marker -> the task row -> the scheduler fires it -> its next due time."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from omega.gateway.pipeline import handle_message, respond
from omega.loops.scheduler import Scheduler
from omega.turn import PipelineDeps
from omega.types import IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider

LISBON = ZoneInfo("Europe/Lisbon")


def deps_for(make_deps: MakeDeps, model_reply: str) -> PipelineDeps:
    return make_deps(
        ScriptedProvider(model_reply),
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_OMEGA__TIMEZONE="Europe/Lisbon",
    )


def ask(deps: PipelineDeps, text: str) -> Recorder:
    out = Recorder()
    asyncio.run(
        handle_message(deps, IncomingMessage("terminal", "ana", text, assurance="local"), out)
    )
    return out


def fire(deps: PipelineDeps, times: int) -> list[datetime]:
    """Let the scheduler fire the person's one task `times` times; the local times it fired."""
    [task] = deps.store.pending_tasks("ana")
    out = Recorder()
    scheduler = Scheduler(deps, out, respond)
    fired: list[datetime] = []
    for _ in range(times):
        current = deps.store.task(task.id)
        assert current is not None and current.status == "pending"
        assert asyncio.run(scheduler.run_due(current.due_at + timedelta(seconds=1))) == 1
        fired.append(current.due_at.astimezone(LISBON).replace(tzinfo=None))
    assert [m.kind for m in out.sent] == ["reminder"] * times
    assert {m.text for m in out.sent} == {f"Reminder: {task.description}"}
    return fired


def test_monthly_on_the_31st_comes_back_to_the_31st(make_deps: MakeDeps) -> None:
    deps = deps_for(make_deps, "Sure. SCHEDULE: pay rent | 2027-01-31T09:00 | monthly")
    ask(deps, "remind me to pay rent on the 31st every month")
    assert fire(deps, 4) == [
        datetime(2027, 1, 31, 9, 0),
        datetime(2027, 2, 28, 9, 0),  # shorter month: its last day
        datetime(2027, 3, 31, 9, 0),  # and back to the 31st, not stuck on the 28th
        datetime(2027, 4, 30, 9, 0),
    ]


def test_daily_1_30_keeps_1_30_after_the_spring_forward_night(make_deps: MakeDeps) -> None:
    # Lisbon skips 01:00-02:00 on 2027-03-28: that night 01:30 does not exist.
    deps = deps_for(make_deps, "SCHEDULE: take the pill | 2027-03-27T01:30 | daily")
    ask(deps, "every night at 1:30 remind me to take the pill")
    assert fire(deps, 4) == [
        datetime(2027, 3, 27, 1, 30),
        datetime(2027, 3, 28, 2, 30),  # the gap shifts that one occurrence forward
        datetime(2027, 3, 29, 1, 30),  # then 01:30 again
        datetime(2027, 3, 30, 1, 30),
    ]


def test_weekdays_created_on_a_saturday_starts_on_monday(make_deps: MakeDeps) -> None:
    # 2027-01-02 is a Saturday.
    deps = deps_for(make_deps, "SCHEDULE: stand-up | 2027-01-02T09:00 | weekdays")
    ask(deps, "remind me of the stand-up on weekdays at 9")
    assert fire(deps, 6) == [
        datetime(2027, 1, 4, 9, 0),  # Monday
        datetime(2027, 1, 5, 9, 0),
        datetime(2027, 1, 6, 9, 0),
        datetime(2027, 1, 7, 9, 0),
        datetime(2027, 1, 8, 9, 0),  # Friday
        datetime(2027, 1, 11, 9, 0),  # then Monday again
    ]


def test_updating_the_time_moves_the_anchor_too(make_deps: MakeDeps) -> None:
    deps = deps_for(make_deps, "SCHEDULE: pay rent | 2027-01-15T09:00 | monthly")
    ask(deps, "remind me monthly on the 15th")
    [task] = deps.store.pending_tasks("ana")
    deps.provider = ScriptedProvider(f"Moved. UPDATE_TASK: {task.id[:8]} | | 2027-01-31T08:00 |")
    ask(deps, "make it the 31st at 8")
    assert fire(deps, 3) == [
        datetime(2027, 1, 31, 8, 0),
        datetime(2027, 2, 28, 8, 0),
        datetime(2027, 3, 31, 8, 0),
    ]
