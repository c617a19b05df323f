"""The scheduler: delivers reminders and runs action tasks when they are due.

It sleeps until the next due task (or until one is added), never polls blindly; while other
replicas share the database it looks again at least every `[store] lease_seconds`, since a
task added on another replica does not wake this one. A task is
claimed before it is sent; a failed send goes back to pending with backoff and is never marked
delivered.

A task found claimed at start-up (Omega died between claiming and bookkeeping) is settled by
what it is: a reminder (text only) is delivered again, at least once, with the stable id
`task:<id>@<due time>` that lets a receiver drop a repeat, since a missed reminder is worse
than a repeated one; an action, which may act in the world, is never run again by itself and
never silently counted as done: its person is told it may not have run, with the task, and
`/rerun <id>` runs it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Protocol

from omega.memory.audit import AuditEntry
from omega.memory.db import to_db_time
from omega.memory.tasks import Task
from omega.memory.wakeups import TASKS
from omega.schedule import ScheduleError, next_occurrence, resolve_timezone
from omega.turn import (
    Outbox,
    PipelineDeps,
    Responder,
    creator_role,
    granted_role,
    load_turn,
    lowest,
    record_audit,
    role_of,
)
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)
MAX_BACKOFF_SECS = 3600.0
CONCURRENT_SENDERS = 16


class Deliverer(Outbox, Protocol):
    """An outbox that can also deliver with errors raised (for retries)."""

    async def deliver(self, message: OutgoingMessage) -> None:
        """Send, raising when the message could not be delivered."""
        ...


class _Strict:
    """Outbox view whose `send` raises, so an action's final reply failure is retried."""

    def __init__(self, out: Deliverer) -> None:
        self._out = out

    async def send(self, message: OutgoingMessage) -> None:
        if message.kind in ("reply", "reminder"):
            await self._out.deliver(message)
        else:
            await self._out.send(message)

    async def typing(self, channel: str, target: str) -> None:
        await self._out.typing(channel, target)


def _creator_message(task: Task) -> IncomingMessage:
    """The message a task acts as, from its creator, in the conversation it was made in."""
    return IncomingMessage(
        channel=task.channel,
        sender_id=task.sender_id,
        reply_target=task.reply_target,
        # The conversation it was made in: made in a room, it runs with that room's
        # history only, never with what its creator said in private.
        thread=task.thread,
        is_group=task.is_group,
        text=f"[Scheduled action, due now] {task.description}",
        origin_id=task.origin_id,  # the creator's rights, as their channel knows them
        assurance="stored",  # the creator was proven when the task was made
    )


def following_due(task: Task, now: datetime) -> datetime | None:
    """When a delivered task is next due (None for one-shot tasks)."""
    if task.repeat == "once":
        return None
    zone = resolve_timezone(task.timezone)
    anchor = task.anchor_local or task.due_at.astimezone(zone).replace(tzinfo=None)
    return next_occurrence(anchor, task.repeat, zone, max(now, task.due_at))


class Scheduler:
    """Runs due tasks; `run` until `stop` is set. Action tasks are answered through `respond`
    (the pipeline's answer path, passed in by the gateway)."""

    def __init__(self, deps: PipelineDeps, out: Deliverer, respond: Responder) -> None:
        self.deps = deps
        self.out = out
        self.respond = respond
        self._limit = asyncio.Semaphore(CONCURRENT_SENDERS)

    async def recover(self) -> int:
        """Settle tasks a previous run claimed but never finished (see the module docstring):
        reminders go out again, actions are reported as possibly not run."""
        store = self.deps.store
        interrupted = await store.call(store.interrupted_tasks)
        for task in interrupted:
            if task.task_type != "action":
                log.warning("reminder %s was cut short; delivering it again", task.id[:8])
                await store.call(store.reopen_task, task.id)
                continue
            log.warning("action %s was cut short; it may not have run", task.id[:8])
            await store.call(store.interrupt_task, task.id, self._safe_following(task))
            await self.out.send(
                OutgoingMessage(
                    task.channel,
                    task.reply_target,
                    f"⚠️ Omega stopped while your scheduled action was running, so it may not "
                    f"have run: [{task.id[:8]}] {task.description}\n"
                    f"Say /rerun {task.id[:8]} to run it again.",
                    kind="alert",
                    id=f"task:{task.id}@{to_db_time(task.due_at)}#interrupted",
                )
            )
        return len(interrupted)

    def _safe_following(self, task: Task) -> datetime | None:
        try:
            return following_due(task, datetime.now(UTC))
        except ScheduleError as exc:
            log.error("task %s cannot repeat (%s); it will not fire again", task.id[:8], exc)
            return None

    async def run_due(self, now: datetime | None = None) -> int:
        """Fire every task due now: different senders concurrently, one sender in order."""
        store = self.deps.store
        due = await store.call(store.due_tasks, now or datetime.now(UTC), 1000)
        groups: dict[tuple[str, str], list[Task]] = defaultdict(list)
        for task in due:
            groups[(task.channel, task.sender_id)].append(task)

        async def fire_group(tasks: list[Task]) -> None:
            async with self._limit:
                for task in tasks:
                    await self.fire(task)

        await asyncio.gather(*(fire_group(tasks) for tasks in groups.values()))
        return len(due)

    async def fire(self, task: Task) -> bool:
        """Deliver one task; True when it was delivered."""
        store = self.deps.store
        if not await store.call(store.claim_task, task.id, task.due_at):
            return False  # cancelled, changed, or this occurrence fired by another scheduler
        if await self._creator_refused(task):
            return False
        try:
            if task.task_type == "action":
                await self._run_action(task)
            else:
                await self.out.deliver(
                    OutgoingMessage(
                        task.channel,
                        task.reply_target,
                        f"Reminder: {task.description}",
                        kind="reminder",
                        # The same on a re-delivery after a crash: a receiver drops a repeat.
                        id=f"task:{task.id}@{to_db_time(task.due_at)}",
                    )
                )
        except Exception as exc:
            await self._retry_later(task, exc)
            return False
        await store.call(store.finish_task, task.id, self._safe_following(task))
        log.info("task %s delivered (%s)", task.id[:8], task.task_type)
        return True

    async def _creator_refused(self, task: Task) -> bool:
        """Whether the claimed task's creator may no longer talk to Omega (taken off the
        allow-list, or their grant revoked, since): a stranger's task is neither sent nor run
        (strangers cost nothing); it fails with the reason, audited as denied."""
        message = _creator_message(task)
        store = self.deps.store
        role = role_of(self.deps.config, message, await granted_role(store, message))
        if role != "stranger":
            return False
        reason = "its creator may no longer talk to Omega"
        log.warning(
            "task %s not %s: %s",
            task.id[:8],
            "run" if task.task_type == "action" else "sent",
            reason,
        )
        await store.call(store.retry_task, task.id, reason, datetime.now(UTC), True)
        await record_audit(
            self.deps,
            AuditEntry(
                channel=task.channel,
                sender_id=task.sender_id,
                status="denied",
                event="task_refused",
                detail=f"task {task.id[:8]} ({task.task_type}): {reason}",
            ),
        )
        return True

    async def _run_action(self, task: Task) -> None:
        message = _creator_message(task)
        if task.repeat == "once":
            # One message id across retries, so its markers count once (a self-heal
            # verification retried after a failed send is not a new iteration).
            message.id = f"task:{task.id}"
        turn = await load_turn(self.deps, message)
        # Never more than its creator had when they made it, whoever its channel id is now.
        made_by = creator_role(self.deps.config, task)
        turn = dataclasses.replace(turn, role=lowest(turn.role, made_by))
        await self.respond(
            self.deps, message, turn, _Strict(self.out), cause="action", raise_errors=True
        )

    async def _retry_later(self, task: Task, error: Exception) -> None:
        cfg = self.deps.config.scheduler
        backoff = min(cfg.retry_base_secs * 2**task.retry_count, MAX_BACKOFF_SECS)
        give_up = task.retry_count + 1 > cfg.max_retries
        retry_at = datetime.now(UTC) + timedelta(seconds=backoff)
        log.warning(
            "task %s failed (%s); %s",
            task.id[:8],
            error,
            "giving up" if give_up else f"retrying in {backoff:.0f}s",
        )
        await self.deps.store.call(
            self.deps.store.retry_task, task.id, repr(error)[:500], retry_at, give_up
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver due tasks, then sleep until the next one is due, a task changes, or stop."""
        await self.recover()
        changed = self.deps.state.tasks_changed
        elsewhere = self.deps.store.wake_event(TASKS)  # PostgreSQL: /rerun on any replica
        while not stop.is_set():
            changed.clear()
            if elsewhere is not None:
                elsewhere.clear()
            try:
                await self.run_due()
            except Exception:
                log.exception("scheduler pass failed")
            longest = await self._longest_sleep()
            next_at = await self.deps.store.call(self.deps.store.next_due_at)
            delay = longest if next_at is None else (next_at - datetime.now(UTC)).total_seconds()
            events = (stop, changed) if elsewhere is None else (stop, changed, elsewhere)
            await _wait_any(*events, seconds=min(max(delay, 0.0), longest))

    async def _longest_sleep(self) -> float:
        """`[scheduler] poll_interval_secs`; one lease time while other replicas run, since a
        task they add wakes only their own process (`tasks_changed` is in memory)."""
        config = self.deps.config
        longest = float(config.scheduler.poll_interval_secs)
        store = self.deps.store
        try:
            replicas = await store.call(store.replicas, config.store.lease_seconds)
        except Exception:
            log.exception("reading the replicas failed")
            return longest
        if sum(replica.alive for replica in replicas) > 1:
            return min(longest, config.store.lease_seconds)
        return longest


async def _wait_any(*events: asyncio.Event, seconds: float) -> None:
    """Sleep until one of the events is set or `seconds` pass."""
    waiters = [asyncio.create_task(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
