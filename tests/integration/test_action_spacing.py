"""Actions are for later (`[limits] min_action_interval_secs`): an action task may not set
another for right now, by SCHEDULE_ACTION or by moving one with UPDATE_TASK (audit finding: two
of a person's daily actions moved each other a few seconds ahead, a ping-pong of model calls
with the person's tools that nobody kept going). Played through the pipeline and the scheduler
(`Scheduler.run_due`) with a scripted provider."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from omega.gateway.pipeline import handle_message, respond
from omega.loops.scheduler import Scheduler
from omega.types import IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import DIRECT, ScriptedProvider

PERSON = "mallory"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S+00:00")


def test_an_action_cannot_move_another_action_to_right_now(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(plan=DIRECT)
    deps = make_deps(provider)
    provider.answers[:] = [
        "Both set.\nSCHEDULE_ACTION: task A | 2031-01-01T09:00 | daily\n"
        "SCHEDULE_ACTION: task B | 2031-01-01T09:00 | daily"
    ]
    message = IncomingMessage("terminal", PERSON, "water and feed", assurance="local")
    asyncio.run(handle_message(deps, message, Recorder()))
    tasks = {t.description: t for t in deps.store.pending_tasks(PERSON)}
    assert set(tasks) == {"task A", "task B"}
    assert tasks["task A"].creator_role == "person"
    a, b = tasks["task A"], tasks["task B"]

    start = datetime.now(UTC)
    provider.answers[:] = [
        f"A ran.\nUPDATE_TASK: {b.id[:8]} | | {_stamp(start + timedelta(seconds=10))}",
        f"B ran.\nUPDATE_TASK: {a.id[:8]} | | {_stamp(start + timedelta(seconds=20))}",
    ]
    scheduler = Scheduler(deps, Recorder(), respond)
    deps.store.rerun_task(PERSON, a.id[:8])  # A is due now (the person's /rerun)
    runs = sum(
        asyncio.run(scheduler.run_due(start + timedelta(seconds=10 * i + 1))) for i in range(4)
    )
    assert runs == 1  # A ran once; B was never moved to right now
    moved = deps.store.task(b.id)
    assert moved is not None and moved.due_at == b.due_at
    assert sum("task A" in p for p in provider.prompts) == 1
    assert not any("task B" in p for p in provider.prompts[1:])


def test_a_reply_cannot_move_an_action_into_the_past(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(plan=DIRECT)
    deps = make_deps(provider)
    provider.answers[:] = ["Set.\nSCHEDULE_ACTION: task A | 2031-01-01T09:00 | once"]
    message = IncomingMessage("terminal", PERSON, "water the garden", assurance="local")
    asyncio.run(handle_message(deps, message, Recorder()))
    [task] = deps.store.pending_tasks(PERSON)
    provider.answers[:] = [f"Moved.\nUPDATE_TASK: {task.id[:8]} | | 2020-01-01T09:00"]
    out = Recorder()
    moving = IncomingMessage("terminal", PERSON, "move it", assurance="local")
    asyncio.run(handle_message(deps, moving, out))
    kept = deps.store.task(task.id)
    assert kept is not None and kept.due_at == task.due_at
    assert any("was not changed" in m.text for m in out.sent), [m.text for m in out.sent]
