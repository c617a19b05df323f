"""What each marker does. Parsing is pure (registry.py); effects happen here, in order."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from omega.checklist import add_item, remove_items
from omega.evolution.gaps import raise_limitation, resolve_limitation
from omega.evolution.heal import self_heal, self_heal_resolved
from omega.evolution.reflection import skill_improve
from omega.markers.notices import REFUSED, unmet_of_raw
from omega.markers.provenance import EXTERNAL_BARRED, refuse_external
from omega.markers.registry import PLACEHOLDER_REASON, MarkerEvent, ParseResult
from omega.memory.state import HEARTBEAT_INTERVAL, SETTINGS
from omega.memory.tasks import Task, TaskLookupError
from omega.prompts import LANGUAGES
from omega.schedule import (
    ScheduleError,
    parse_repeat,
    parse_when,
    plan_task,
    resolve_timezone,
    timezone_name,
)
from omega.skills import SkillError
from omega.turn import (
    MarkerContext,
    MarkerOutcome,
    audit_change,
    creator_role,
    may_edit_task,
    may_use_marker,
    owner_message,
)

__all__ = ["HANDLERS", "apply_markers"]

log = logging.getLogger(__name__)

PAST_GRACE = timedelta(minutes=2)  # "now" said a moment ago is not the past

Handler = Callable[[MarkerEvent, MarkerContext, MarkerOutcome], Awaitable[None]]


async def _schedule(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    description, when = event.fields[0], event.fields[1]
    repeat = parse_repeat(event.fields[2] if len(event.fields) > 2 else "once")
    now = datetime.now(UTC)
    due, anchor = plan_task(parse_when(when), repeat, ctx.timezone, now)
    task_type = "action" if event.name == "SCHEDULE_ACTION" else "reminder"
    limits = ctx.config.limits
    if task_type == "action":
        _check_action_due(ctx, due, now, when)
    pending = await ctx.store.call(ctx.store.pending_tasks, ctx.message.sender_id)
    if len(pending) >= limits.max_tasks_per_person:
        raise ValueError(f"{len(pending)} tasks are pending; {limits.max_tasks_per_person} at most")
    task_id, created = await ctx.store.call(
        ctx.store.create_task,
        channel=ctx.message.channel,
        sender_id=ctx.message.sender_id,
        reply_target=ctx.message.target,
        description=description,
        due_at=due,
        repeat=repeat,
        task_type=task_type,
        timezone=timezone_name(ctx.timezone),
        anchor_local=anchor,
        origin_id=ctx.message.origin_id,
        creator_role=ctx.role,
        thread=ctx.message.thread,
        is_group=ctx.message.is_group,
    )
    ctx.state.tasks_changed.set()
    out.applied.append(f"{event.name} {task_id[:8]} {'created' if created else 'exists'}")


def _check_action_due(ctx: MarkerContext, due: datetime, now: datetime, when: str) -> None:
    """An action in the past would run at once, and an action that schedules (or moves)
    another for right now loops: actions are for later, and one an action sets waits a while
    (`[limits] min_action_interval_secs`). ValueError when `due` breaks either."""
    if due < now - PAST_GRACE:
        raise ValueError(f"an action cannot be scheduled in the past ({when})")
    wait = timedelta(seconds=ctx.config.limits.min_action_interval_secs)
    if ctx.cause == "action" and due < now + wait:
        raise ValueError(f"an action task may only schedule another one {wait} ahead")


async def _editable_task(event: MarkerEvent, ctx: MarkerContext, prefix: str) -> Task:
    """The pending task `prefix` names, when this reply's role may change it: at least the role
    its creator had (a linked identity shares the tasks, never the rights). Else refused and
    audited."""
    task = await ctx.store.call(ctx.store.find_pending_task, ctx.message.sender_id, prefix)
    if not may_edit_task(ctx.config, ctx.role, task):
        made_by = creator_role(ctx.config, task)
        reason = (
            f"{event.name}: task {task.id[:8]} was made by {made_by}, not allowed for {ctx.role}"
        )
        await audit_change(
            ctx, "marker_refused", ctx.message.text[:500], f"role: {ctx.role}\n{reason}", "denied"
        )
        raise PermissionError(reason)
    return task


async def _cancel(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    found = await _editable_task(event, ctx, event.value)
    task = await ctx.store.call(ctx.store.cancel_task, ctx.message.sender_id, found.id)
    out.applied.append(f"CANCEL_TASK {task.id[:8]}")


async def _update(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    fields = event.fields + ("",) * (4 - len(event.fields))
    sender = ctx.message.sender_id
    due: datetime | None = None
    anchor: datetime | None = None
    zone_name = ""
    repeat = parse_repeat(fields[3]) if fields[3] else ""
    current = await _editable_task(event, ctx, fields[0])
    if fields[2] or repeat:  # a new time or repeat: the anchor and next due time follow
        if fields[2]:
            when, zone = parse_when(fields[2]), ctx.timezone
        else:
            zone = resolve_timezone(current.timezone)
            when = current.anchor_local or current.due_at.astimezone(zone).replace(tzinfo=None)
        now = datetime.now(UTC)
        due, anchor = plan_task(when, repeat or current.repeat, zone, now)
        zone_name = timezone_name(zone)
        if current.task_type == "action":  # moved: as if scheduled now
            _check_action_due(ctx, due, now, fields[2] or repeat)
    task = await ctx.store.call(
        ctx.store.update_task,
        sender,
        current.id,
        description=fields[1],
        due_at=due,
        repeat=repeat,
        anchor_local=anchor,
        timezone=zone_name,
    )
    ctx.state.tasks_changed.set()
    out.applied.append(f"UPDATE_TASK {task.id[:8]}")


async def _project_off(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    sender = ctx.message.sender_id
    if await ctx.store.call(ctx.store.delete_fact, sender, "active_project"):
        await ctx.store.call(
            ctx.store.close_active_conversation,
            ctx.message.channel,
            sender,
            ctx.message.conversation,
        )
        out.project_changed = True
    out.applied.append("PROJECT_DEACTIVATE")


async def _project_on(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    project = ctx.projects.get(event.value)
    if project is None:
        raise LookupError(f"no project named {event.value!r}")
    sender = ctx.message.sender_id
    current = await ctx.store.call(ctx.store.get_fact, sender, "active_project")
    if current != project.name:
        await ctx.store.call(ctx.store.set_fact, sender, "active_project", project.name)
        await ctx.store.call(
            ctx.store.close_active_conversation,
            ctx.message.channel,
            sender,
            ctx.message.conversation,
        )
        out.project_changed = True
    out.applied.append(f"PROJECT_ACTIVATE {project.name}")


async def _whatsapp_qr(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    if not ctx.config.channel.whatsapp.enabled:
        await ctx.notify(
            ctx.message.answer(
                "WhatsApp pairing is not available: the WhatsApp channel is not enabled in "
                "config.toml ([channel.whatsapp] enabled = true).",
                "status",
            )
        )
        raise LookupError("whatsapp channel not enabled")
    channel = ctx.state.pairing.get("whatsapp")
    if channel is None:
        await ctx.notify(
            ctx.message.answer(
                "WhatsApp pairing is not available: the WhatsApp channel is not running in "
                "this Omega (it runs with `omega start`).",
                "status",
            )
        )
        raise LookupError("whatsapp channel not running")
    text = await channel.request_pairing(ctx.message.channel, ctx.message.target)
    await ctx.notify(ctx.message.answer(text, "status"))
    out.applied.append("WHATSAPP_QR")


async def _lang(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    known = {name.casefold(): name for name in LANGUAGES}
    language = known.get(event.value.casefold(), event.value.strip().title())
    await ctx.store.call(ctx.store.set_fact, ctx.message.sender_id, "preferred_language", language)
    out.applied.append(f"LANG_SWITCH {language}")


async def _heartbeat_add(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    diff = await ctx.store.call(add_item, ctx.paths.heartbeat, event.value)
    if diff:
        await audit_change(ctx, f"marker:{event.name}", event.raw, diff)
    out.applied.append(f"HEARTBEAT_ADD {'added' if diff else 'already there'}")


async def _heartbeat_remove(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    diff = await ctx.store.call(remove_items, ctx.paths.heartbeat, event.value)
    if diff:
        await audit_change(ctx, f"marker:{event.name}", event.raw, diff)
    out.applied.append(f"HEARTBEAT_REMOVE {'removed' if diff else 'no match'}")


async def _heartbeat_interval(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    minutes = int(event.value)
    previous, ctx.state.heartbeat_interval = ctx.state.heartbeat_interval, minutes
    ctx.state.heartbeat_changed.set()
    try:  # kept in the store: the replica running the heartbeat (and the next start) use it
        await ctx.store.call(ctx.store.state_put, SETTINGS, HEARTBEAT_INTERVAL, minutes)
    except Exception:
        log.exception("could not keep the heartbeat interval in the store")
    await audit_change(
        ctx,
        f"marker:{event.name}",
        event.raw,
        f"heartbeat interval {previous} -> {minutes} minutes",
    )
    text = f"Heartbeat interval set to {minutes} minutes."
    await ctx.notify(owner_message(ctx, text, kind="status", priority="low"))
    out.applied.append(f"HEARTBEAT_INTERVAL {minutes}")


async def _skill_improve(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    # Never an edit of the SKILL.md: a lesson in memory.db (owner) or a proposal (anyone else).
    out.applied.append(f"SKILL_IMPROVE {await skill_improve(ctx, *event.fields[:2])}")


async def _limitation(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    title, description, plan = event.fields
    limitation, created = await raise_limitation(ctx, title, description, plan, "marker")
    if created:
        out.new_limitations.append(limitation.id)
    out.applied.append(f"LIMITATION {limitation.id} {'new' if created else 'known'}")


async def _limitation_resolved(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    if ctx.cause != "heartbeat":  # the model resolves limitations only while self-auditing
        raise PermissionError("LIMITATION_RESOLVED is only accepted in heartbeat replies")
    how = event.fields[1] if len(event.fields) > 1 else ""
    resolved = await resolve_limitation(ctx, event.fields[0], how, by="model (heartbeat)")
    if resolved is None:
        raise LookupError(f"no open limitation {event.fields[0]!r}")
    out.applied.append(f"LIMITATION_RESOLVED {resolved.id}")


async def _self_heal(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    out.applied.append(f"SELF_HEAL {await self_heal(ctx, event.fields[0], event.fields[1])}")


async def _self_heal_resolved(event: MarkerEvent, ctx: MarkerContext, out: MarkerOutcome) -> None:
    out.applied.append(f"SELF_HEAL_RESOLVED {await self_heal_resolved(ctx)}")


HANDLERS: dict[str, Handler] = {
    "SCHEDULE": _schedule,
    "SCHEDULE_ACTION": _schedule,
    "CANCEL_TASK": _cancel,
    "UPDATE_TASK": _update,
    "PROJECT_DEACTIVATE": _project_off,
    "PROJECT_ACTIVATE": _project_on,
    "WHATSAPP_QR": _whatsapp_qr,
    "LANG_SWITCH": _lang,
    "HEARTBEAT_ADD": _heartbeat_add,
    "HEARTBEAT_REMOVE": _heartbeat_remove,
    "HEARTBEAT_INTERVAL": _heartbeat_interval,
    "SKILL_IMPROVE": _skill_improve,
    "LIMITATION": _limitation,
    "LIMITATION_RESOLVED": _limitation_resolved,
    "SELF_HEAL": _self_heal,
    "SELF_HEAL_RESOLVED": _self_heal_resolved,
}
# Read by their callers rather than applied here.
CALLER_HANDLED = frozenset({"SILENT", "HEARTBEAT_OK"})


async def apply_markers(result: ParseResult, ctx: MarkerContext) -> MarkerOutcome:
    """Apply every valid marker in order; one failing marker never stops the others."""
    outcome = MarkerOutcome()
    for raw, reason in result.rejected:
        log.warning("invalid marker stripped (%s): %.200s", reason, raw)
        outcome.failed.append(f"invalid: {reason}")
        if reason != PLACEHOLDER_REASON:  # syntax explained in prose promised nothing
            outcome.unmet.append(unmet_of_raw(raw))
    refused: list[str] = []
    barred: list[MarkerEvent] = []
    for event in _permitted(result.events, ctx, refused):
        handler = HANDLERS.get(event.name)
        if handler is None:
            if event.name not in CALLER_HANDLED:
                log.warning("marker %s has no handler in this version; stripped", event.name)
            continue
        if ctx.external and event.name in EXTERNAL_BARRED:
            barred.append(event)
            outcome.failed.append(f"{event.name}: written after reading {ctx.external}")
            outcome.unmet.append((f"{REFUSED}{event.name}", event.value))
            continue
        try:
            await handler(event, ctx, outcome)
        except (
            ScheduleError,
            TaskLookupError,
            LookupError,
            SkillError,
            ValueError,
            PermissionError,
        ) as exc:
            log.warning("marker %s not applied: %s", event.name, exc)
            outcome.failed.append(f"{event.name}: {exc}")
            outcome.unmet.append((event.name, event.value))
        except Exception:
            log.exception("marker %s failed", event.name)
            outcome.failed.append(f"{event.name}: internal error")
            outcome.unmet.append((event.name, event.value))
    if refused:
        outcome.failed.extend(refused)
        await _audit_refused(ctx, refused)
    if barred:
        await refuse_external(ctx, barred)
    if outcome.applied:
        log.info("markers applied: %s", "; ".join(outcome.applied))
    return outcome


def _echoed(event: MarkerEvent, said: str) -> bool:
    """Whether the marker is the person's own words repeated back (they may not write markers
    for the model)."""
    raw = " ".join(event.raw.split()).casefold()
    return bool(raw) and raw in said


def _permitted(
    events: tuple[MarkerEvent, ...], ctx: MarkerContext, refused: list[str]
) -> list[MarkerEvent]:
    """The markers this reply may act on: allowed for the person's role, not echoed from their
    message, and within the per-reply limit of their kind; the rest go to `refused`."""
    caps = ctx.config.limits.markers_per_reply
    said = " ".join(ctx.message.text.split()).casefold()
    used: dict[str, int] = {}
    allowed: list[MarkerEvent] = []
    for event in events:
        if not may_use_marker(ctx.role, event.name):
            refused.append(f"{event.name}: not allowed for {ctx.role}")
        elif event.name not in CALLER_HANDLED and _echoed(event, said):
            refused.append(f"{event.name}: echoed from the message")
        elif used.get(event.name, 0) >= caps.get(event.name, caps.get("*", 5)):
            refused.append(f"{event.name}: over the limit per reply")
        else:
            used[event.name] = used.get(event.name, 0) + 1
            allowed.append(event)
    return allowed


async def _audit_refused(ctx: MarkerContext, refused: list[str]) -> None:
    log.warning(
        "markers ignored for %s/%s: %s",
        ctx.message.channel,
        ctx.message.sender_id,
        "; ".join(dict.fromkeys(refused)),
    )
    detail = f"role: {ctx.role}\n" + "\n".join(refused)[:4000]
    await audit_change(ctx, "marker_refused", ctx.message.text[:500], detail, status="denied")
