"""Commands about the person asking: help, their memory, facts, tasks, language, personality,
skills and projects. Each answers for the sender only."""

from __future__ import annotations

import re
from collections.abc import Callable

from omega.commands_table import HELP
from omega.gateway.commands.context import CommandContext
from omega.gateway.notify import quiet_setting
from omega.gateway.turn_context import visible_skills
from omega.hours import QUIET_FACT
from omega.memory.audit import AuditEntry
from omega.memory.tasks import TaskLookupError
from omega.prompts import LANGUAGES
from omega.turn import creator_role, may_edit_task
from omega.types import IncomingMessage

KEEP_ON_PURGE = ("welcomed", "preferred_language", QUIET_FACT)


def _help(ctx: CommandContext, args: str) -> str:
    return "Commands:\n" + "\n".join(f"/{name} - {what}" for name, what in HELP.items())


def _memory(ctx: CommandContext, args: str) -> str:
    c = ctx.store.sender_counts(ctx.message.sender_id)
    return (
        f"I remember {c['conversations']} conversations, {c['messages']} messages and "
        f"{c['facts']} facts about you ({c['summaries']} summaries)."
    )


def _in_room(message: IncomingMessage) -> tuple[str, str] | None:
    """Where a command asked in a group room looks: that room's conversations only (what was
    said in private is not shown to a room); None in a direct chat."""
    return (message.channel, message.conversation) if message.is_group else None


def _history(ctx: CommandContext, args: str) -> str:
    summaries = ctx.store.recent_summaries(ctx.message.sender_id, 5, _in_room(ctx.message))
    if not summaries:
        return "No earlier conversations yet."
    return "Our last conversations:\n" + "\n".join(f"- {s}" for s in summaries)


def _facts(ctx: CommandContext, args: str) -> str:
    facts = ctx.store.facts(ctx.message.sender_id)
    shown = {k: v for k, v in facts.items() if k != "welcomed"}
    if not shown:
        return "I don't know any facts about you yet."
    return "What I know about you:\n" + "\n".join(f"- {k}: {v}" for k, v in shown.items())


def _forget(ctx: CommandContext, args: str) -> str:
    message = ctx.message
    closed = ctx.store.close_active_conversation(
        message.channel, message.sender_id, message.conversation
    )
    return (
        "Done: this conversation is closed; we start fresh."
        if closed
        else "There was no open conversation; we start fresh."
    )


def _tasks(ctx: CommandContext, args: str) -> str:
    message = ctx.message
    tasks = ctx.store.pending_tasks(message.sender_id)
    if message.is_group:  # in a room, the tasks made there
        tasks = [t for t in tasks if t.answers_at(message.channel, message.target)]
    if not tasks:
        return "You have no pending tasks."
    lines = []
    for task in tasks:
        badge = " [action]" if task.task_type == "action" else ""
        when = task.due_at.astimezone(ctx.timezone).strftime("%Y-%m-%d %H:%M %Z")
        lines.append(f"[{task.id[:8]}] {when} ({task.repeat}){badge} {task.description}")
    return "Your pending tasks:\n" + "\n".join(lines)


def _cancel(ctx: CommandContext, args: str) -> str:
    if not args:
        return "Usage: /cancel <task id> (see /tasks)"
    sender = ctx.message.sender_id
    try:
        found = ctx.store.find_pending_task(sender, args.split()[0])
        if not may_edit_task(ctx.config, ctx.role, found):
            made_by = creator_role(ctx.config, found)
            _audit_refused(ctx, f"/cancel {found.id[:8]}: made by {made_by}, not {ctx.role}")
            return f"Nothing cancelled: [{found.id[:8]}] was set by someone with more rights."
        task = ctx.store.cancel_task(sender, found.id)
    except TaskLookupError as exc:
        return f"Nothing cancelled: {exc}."
    return f"Cancelled [{task.id[:8]}] {task.description}"


def _rerun(ctx: CommandContext, args: str) -> str:
    """Run one of your action tasks again now (one Omega stopped in the middle of)."""
    if not args:
        return "Usage: /rerun <task id> (see /tasks)"
    sender = ctx.message.sender_id
    prefix = args.split()[0]
    try:
        found = ctx.store.rerun_candidate(sender, prefix)
        if not may_edit_task(ctx.config, ctx.role, found):
            made_by = creator_role(ctx.config, found)
            _audit_refused(ctx, f"/rerun {found.id[:8]}: made by {made_by}, not {ctx.role}")
            return f"Not run: [{found.id[:8]}] was set by someone with more rights."
        task = ctx.store.rerun_task(sender, prefix)
    except TaskLookupError as exc:
        return f"Nothing to run again: {exc}."
    if ctx.tasks_changed is not None:
        ctx.tasks_changed.set()  # the scheduler runs it now, not at its next look
    return f"Running [{task.id[:8]}] {task.description} again now."


def _audit_refused(ctx: CommandContext, detail: str) -> None:
    """A command refused for the sender's role, in the audit log."""
    ctx.store.audit(
        AuditEntry(
            channel=ctx.message.channel,
            sender_id=ctx.message.sender_id,
            sender_name=ctx.message.sender_name,
            status="denied",
            event="command_refused",
            input_text=ctx.message.text[:500],
            detail=detail,
        )
    )


def _language(ctx: CommandContext, args: str) -> str:
    sender = ctx.message.sender_id
    if not args:
        current = ctx.store.get_fact(sender, "preferred_language") or "English"
        return f"I speak {current} with you. Change it with /language <name>."
    wanted = args.strip()
    known = {name.casefold(): name for name in LANGUAGES}
    language = known.get(wanted.casefold())
    if language is None:
        if not re.fullmatch(r"[^\W\d_]{2,30}", wanted):
            return f"'{wanted}' is not a language name."
        language = wanted.capitalize()
    ctx.store.set_fact(sender, "preferred_language", language)
    return f"From now on I'll speak {language} with you."


def _personality(ctx: CommandContext, args: str) -> str:
    sender = ctx.message.sender_id
    if not args:
        current = ctx.store.get_fact(sender, "personality")
        return (
            f"Your personality setting: {current}"
            if current
            else "No personality set. Use /personality <how I should talk to you>."
        )
    if args.lower() == "reset":
        ctx.store.delete_fact(sender, "personality")
        return "Personality reset to my default."
    ctx.store.set_fact(sender, "personality", args[:500])
    return "Got it, I'll talk to you like that from now on."


def _quiet(ctx: CommandContext, args: str) -> str:
    """Your quiet hours, in your time zone (gateway.notify)."""
    return quiet_setting(ctx.store, ctx.message.sender_id, args, ctx.config.omega.timezone)


def _purge(ctx: CommandContext, args: str) -> str:
    removed = ctx.store.delete_facts(ctx.message.sender_id, keep=KEEP_ON_PURGE)
    return f"Forgot {removed} facts about you."


def _skills(ctx: CommandContext, args: str) -> str:
    skills = ctx.skills.skills()
    # A skill born of one person's gap is theirs, its name and description too: only the
    # owner in their own chat sees the whole catalog (a room reads the owner's answer there).
    if ctx.role != "owner" or ctx.message.is_group:
        skills = visible_skills(skills, ctx.message)
    if not skills:
        return "No skills installed."
    lines = []
    for skill in skills:
        state = (
            "[installed]"
            if skill.available
            else f"[not installed: needs {', '.join(skill.missing)}]"
        )
        lines.append(f"- {skill.name} {state}: {skill.description}")
    return "Skills:\n" + "\n".join(lines)


def _projects(ctx: CommandContext, args: str) -> str:
    projects = ctx.projects.projects()
    if not projects:
        return f"No projects yet. Create {ctx.paths.projects}/<name>/ROLE.md to add one."
    active = ctx.store.get_fact(ctx.message.sender_id, "active_project") or ""
    lines = [f"- {name}{' (active)' if name == active else ''}" for name in sorted(projects)]
    return "Projects:\n" + "\n".join(lines)


def _project(ctx: CommandContext, args: str) -> str:
    sender, channel = ctx.message.sender_id, ctx.message.channel
    active = ctx.store.get_fact(sender, "active_project")
    if not args:
        return f"Active project: {active}" if active else "No active project."
    if args.lower() in ("off", "none", "deactivate"):
        if not active:
            return "No project was active."
        ctx.store.delete_fact(sender, "active_project")
        ctx.store.close_active_conversation(channel, sender, ctx.message.conversation)
        return f"Project {active} deactivated."
    project = ctx.projects.get(args)
    if project is None:
        return f"No project named '{args}'. See /projects."
    if project.name != active:
        ctx.store.set_fact(sender, "active_project", project.name)
        ctx.store.close_active_conversation(channel, sender, ctx.message.conversation)
    return f"Project {project.name} is active."


PERSON_HANDLERS: dict[str, Callable[[CommandContext, str], str]] = {
    "help": _help,
    "memory": _memory,
    "history": _history,
    "facts": _facts,
    "forget": _forget,
    "tasks": _tasks,
    "cancel": _cancel,
    "rerun": _rerun,
    "language": _language,
    "personality": _personality,
    "quiet": _quiet,
    "purge": _purge,
    "skills": _skills,
    "projects": _projects,
    "project": _project,
}
