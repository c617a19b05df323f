"""Chat commands (/help, /tasks, ...): answered by Omega itself, never sent to the provider."""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo

from omega.channels.base import PairingChannel
from omega.channels.health import channel_health_lines
from omega.commands_table import HELP, NAMES
from omega.config import Config
from omega.evolution.limitations import LimitationStore, resolve_by_owner
from omega.evolution.procedural import ProposalStore
from omega.evolution.registration import ReviewError, approve, reject
from omega.evolution.review import render_review
from omega.evolution.self_heal import SelfHealStore, clear_escalation
from omega.memory.audit import AuditEntry
from omega.memory.store import Store
from omega.memory.tasks import TaskLookupError
from omega.ops.selfcheck import CheckContext, run_checks, summary
from omega.paths import OmegaPaths
from omega.prompts import LANGUAGES
from omega.providers import chain_names
from omega.providers.claude.cli import describe_tools
from omega.sandbox import probe
from omega.skills import ProjectCatalog, SkillCatalog
from omega.tools.mcp_health import status_lines as mcp_status_lines
from omega.turn import Role, creator_role, is_owner, may_edit_task
from omega.types import IncomingMessage

KEEP_ON_PURGE = ("welcomed", "preferred_language")
OWNER_ONLY = "Only my owner can do that."
_COMMAND = re.compile(r"^/(?P<name>[A-Za-z_]+)(?:@(?P<bot>[\w.]+))?(?:\s+(?P<args>.*))?$", re.S)


@dataclass(frozen=True)
class Command:
    """A parsed chat command."""

    name: str
    args: str


def parse_command(text: str) -> Command | None:
    """`/name args` or `/name@botname args` for a known command; anything else is None."""
    match = _COMMAND.match(text.strip())
    if not match:
        return None
    name = match.group("name").lower()
    if name not in NAMES:
        return None
    return Command("language" if name == "lang" else name, (match.group("args") or "").strip())


@dataclass
class CommandContext:
    """What commands may read and change."""

    store: Store
    config: Config
    paths: OmegaPaths
    message: IncomingMessage
    provider_name: str
    started_at: float
    skills: SkillCatalog
    projects: ProjectCatalog
    timezone: tzinfo
    # Running channels that pair themselves (gateway state), for /whatsapp.
    pairing: Mapping[str, PairingChannel] = field(default_factory=dict)
    # The sender's own role (turn.privileges.role_of: from their channel id, never a link's).
    role: Role = "stranger"


def _help(ctx: CommandContext, args: str) -> str:
    return "Commands:\n" + "\n".join(f"/{name} - {what}" for name, what in HELP.items())


def _claude_tools(ctx: CommandContext) -> str:
    """The line saying what Claude Code's tools may do, when it is among the providers."""
    if "claude-code" not in chain_names(ctx.provider_name, ctx.config):
        return ""
    status = probe(ctx.config.sandbox.mode)
    return f"Claude Code tools: {describe_tools(ctx.config.provider.claude_code, status)}\n"


def _status(ctx: CommandContext, args: str) -> str:
    uptime = int(time.monotonic() - ctx.started_at)
    hours, rest = divmod(uptime, 3600)
    size = sum(p.stat().st_size for p in ctx.paths.home.glob("memory.db*") if p.is_file())
    counts = ctx.store.counts()
    text = (
        f"Uptime: {hours}h {rest // 60}m {rest % 60}s\n"
        f"Provider: {ctx.provider_name}\n"
        f"Sandbox: {probe(ctx.config.sandbox.mode).describe()}\n"
        f"{_claude_tools(ctx)}"
        f"Database: {size / 1024:.0f} KiB, {counts['messages']} messages, "
        f"{counts['scheduled_tasks']} tasks"
    )
    for channel, state in channel_health_lines(ctx.config, ctx.paths):
        text += f"\n{channel}: {state}"
    for server, state in mcp_status_lines(ctx.paths.home):
        text += f"\n{server}: {state}"
    # the cheap checks only: no network request from a chat command
    checks = run_checks(
        CheckContext(ctx.config, ctx.paths, ctx.store, provider_name=ctx.provider_name)
    )
    text += "\n" + summary(checks)
    waiting = counts.get("owner_alerts_pending", 0)
    if waiting and is_owner(ctx.config, ctx.message):
        kept = ctx.store.pending_owner_alerts(5)
        text += f"\nAlerts kept for you (no channel reached you): {waiting}\n" + "\n".join(
            f"- [{alert.created_at[:16]}] {alert.text[:300]}" for alert in kept
        )
    return text


def _memory(ctx: CommandContext, args: str) -> str:
    c = ctx.store.sender_counts(ctx.message.sender_id)
    return (
        f"I remember {c['conversations']} conversations, {c['messages']} messages and "
        f"{c['facts']} facts about you ({c['summaries']} summaries)."
    )


def _history(ctx: CommandContext, args: str) -> str:
    summaries = ctx.store.recent_summaries(ctx.message.sender_id, 5)
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
    closed = ctx.store.close_active_conversation(ctx.message.channel, ctx.message.sender_id)
    return (
        "Done: this conversation is closed; we start fresh."
        if closed
        else "There was no open conversation; we start fresh."
    )


def _tasks(ctx: CommandContext, args: str) -> str:
    tasks = ctx.store.pending_tasks(ctx.message.sender_id)
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


def _purge(ctx: CommandContext, args: str) -> str:
    removed = ctx.store.delete_facts(ctx.message.sender_id, keep=KEEP_ON_PURGE)
    return f"Forgot {removed} facts about you."


def _skills(ctx: CommandContext, args: str) -> str:
    skills = ctx.skills.skills()
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
        ctx.store.close_active_conversation(channel, sender)
        return f"Project {active} deactivated."
    project = ctx.projects.get(args)
    if project is None:
        return f"No project named '{args}'. See /projects."
    if project.name != active:
        ctx.store.set_fact(sender, "active_project", project.name)
        ctx.store.close_active_conversation(channel, sender)
    return f"Project {project.name} is active."


def _limitations(ctx: CommandContext, args: str) -> str:
    items = LimitationStore(ctx.store).list()
    if not items:
        return "No limitations recorded."
    lines = [
        f"[{item.id}] {'open' if item.status == 'open' else 'resolved'}: {item.title}"
        + (f" — {item.description}" if item.description else "")
        for item in items
    ]
    return "Limitations:\n" + "\n".join(lines)


def _resolve(ctx: CommandContext, args: str) -> str:
    if not is_owner(ctx.config, ctx.message):
        return OWNER_ONLY
    if not args:
        return "Usage: /resolve <limitation id> [how it was resolved]"
    key, _, how = args.partition(" ")
    who = f"owner ({ctx.message.channel}:{ctx.message.sender_id})"
    resolved = resolve_by_owner(
        ctx.store,
        ctx.paths.heartbeat,
        key,
        how,
        by=who,
        channel=ctx.message.channel,
        sender_id=ctx.message.sender_id,
        request=f"/resolve {args}",
    )
    if resolved is None:
        return f"No open limitation {key}."
    return f"Resolved [{resolved.id}] {resolved.title}."


def _proposals(ctx: CommandContext, args: str) -> str:
    if args.strip().isdigit():
        proposal = ProposalStore(ctx.store).get(int(args.strip()))
        if proposal is None:
            return f"No proposal #{args.strip()}."
        return render_review(ctx.paths, proposal)
    items = ProposalStore(ctx.store).find()
    if not items:
        return "No proposals."
    lines = [
        f"[{p.id}] {p.status}: {p.kind} {p.name} — {p.description}"
        + (f" (gate: {p.gate_action})" if p.status == "pending" else "")
        for p in items[-15:]
    ]
    return "Proposals:\n" + "\n".join(lines)


def _review(ctx: CommandContext, args: str, approving: bool) -> str:
    if not is_owner(ctx.config, ctx.message):
        return OWNER_ONLY
    key, _, notes = args.partition(" ")
    if not key.isdigit():
        return "Usage: /approve <id> [notes]" if approving else "Usage: /reject <id> <reason>"
    who = f"owner ({ctx.message.channel}:{ctx.message.sender_id})"
    try:
        if approving:
            return approve(ctx.store, ctx.paths, ctx.config, int(key), notes, who)
        return reject(ctx.store, int(key), notes, who)
    except ReviewError as exc:
        return f"Not done: {exc}."


def _selfheal(ctx: CommandContext, args: str) -> str:
    state = SelfHealStore(ctx.store).current()
    if args.strip().lower() != "clear":
        if state is None:
            return "No self-healing in progress."
        return (
            f"Self-healing {state.status}: {state.anomaly} "
            f"(iteration {state.iteration}/{state.max_iterations})"
        )
    if not is_owner(ctx.config, ctx.message):
        return OWNER_ONLY
    cleared = clear_escalation(ctx.store, ctx.paths.self_healing)
    if cleared is None:
        return "No self-healing in progress."
    who = f"owner ({ctx.message.channel}:{ctx.message.sender_id})"
    ctx.store.audit(
        AuditEntry(
            channel=ctx.message.channel,
            sender_id=ctx.message.sender_id,
            status="ok",
            event="self_heal:cleared",
            input_text=cleared.anomaly[:2000],
            detail=f"cause: {who}\nwas {cleared.status} at iteration {cleared.iteration}",
        )
    )
    return f"Cleared self-healing of: {cleared.anomaly}."


def _approve(ctx: CommandContext, args: str) -> str:
    return _review(ctx, args, approving=True)


def _reject(ctx: CommandContext, args: str) -> str:
    return _review(ctx, args, approving=False)


def _quant(ctx: CommandContext, args: str) -> str:
    from omega.quant.commands import quant_command

    return quant_command(ctx.store, args, ctx.message.channel, ctx.config.quant)


async def _whatsapp(ctx: CommandContext, args: str) -> str:
    """Start WhatsApp pairing on the running channel; the QR codes come to whoever asked."""
    if not ctx.config.channel.whatsapp.enabled:
        return (
            "WhatsApp is not enabled. Set [channel.whatsapp] enabled = true in config.toml "
            "and restart Omega; it then pairs by QR code."
        )
    channel = ctx.pairing.get("whatsapp")
    if channel is None:
        return (
            "The WhatsApp channel is not running in this Omega: it runs with `omega start` "
            "(its log says why when it cannot start)."
        )
    return await channel.request_pairing(ctx.message.channel, ctx.message.target, phone=args)


HANDLERS: dict[str, Callable[[CommandContext, str], str]] = {
    "help": _help,
    "status": _status,
    "memory": _memory,
    "history": _history,
    "facts": _facts,
    "forget": _forget,
    "tasks": _tasks,
    "cancel": _cancel,
    "language": _language,
    "personality": _personality,
    "purge": _purge,
    "skills": _skills,
    "projects": _projects,
    "project": _project,
    "limitations": _limitations,
    "resolve": _resolve,
    "proposals": _proposals,
    "approve": _approve,
    "reject": _reject,
    "selfheal": _selfheal,
    "quant": _quant,
}
# Commands that wait on something running (a channel), not only on the database.
ASYNC_HANDLERS: dict[str, Callable[[CommandContext, str], Awaitable[str]]] = {
    "whatsapp": _whatsapp,
}


async def run_command(command: Command, ctx: CommandContext) -> str:
    """Run a command on the database thread and return the text to send."""
    if command.name in ASYNC_HANDLERS:
        return await ASYNC_HANDLERS[command.name](ctx, command.args)
    handler = HANDLERS[command.name]
    return await ctx.store.call(handler, ctx, command.args)
