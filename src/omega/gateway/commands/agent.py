"""Commands about Omega itself: status, limitations, proposals and their review, prompt
fragments, self-healing, quant, WhatsApp pairing. Most are the owner's alone."""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable

from omega.channels.health import channel_health_lines
from omega.evolution.gaps import LimitationStore, merge_limitations, resolve_by_owner
from omega.evolution.heal import SelfHealStore, clear_escalation
from omega.evolution.proposals import (
    FragmentError,
    ProposalStore,
    ReviewError,
    approve,
    change_fragment,
    describe_fragment,
    fragment_history,
    fragment_line,
    reject,
    render_review,
)
from omega.gateway.commands.context import OWNER_ONLY, CommandContext
from omega.memory.audit import AuditEntry
from omega.ops.selfcheck import CheckContext, run_checks, summary
from omega.providers import chain_names
from omega.providers.claude.cli import describe_tools
from omega.sandbox import probe
from omega.text import row_id
from omega.tools.mcp_status import status_lines as mcp_status_lines
from omega.turn import is_owner


def _owner(ctx: CommandContext) -> bool:
    """The owner by the config, or by the role this turn runs with (memory.db's grants)."""
    return ctx.role == "owner" or is_owner(ctx.config, ctx.message)


def _running_for(ctx: CommandContext) -> str:
    """How long this Omega has run, as `<h>h <m>m <s>s`."""
    hours, rest = divmod(int(time.monotonic() - ctx.started_at), 3600)
    return f"{hours}h {rest // 60}m {rest % 60}s"


def _uptime(ctx: CommandContext, args: str) -> str:
    """Spec 003's example command: answered here, never sent to the model."""
    return f"Uptime: {_running_for(ctx)}"


def _status(ctx: CommandContext, args: str) -> str:
    size = sum(p.stat().st_size for p in ctx.paths.home.glob("memory.db*") if p.is_file())
    counts = ctx.store.counts()
    text = (
        f"Uptime: {_running_for(ctx)}\n"
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
    if waiting and _owner(ctx):
        kept = ctx.store.pending_owner_alerts(5)
        text += f"\nAlerts kept for you (no channel reached you): {waiting}\n" + "\n".join(
            f"- [{alert.created_at[:16]}] {alert.text[:300]}" for alert in kept
        )
    return text


def _claude_tools(ctx: CommandContext) -> str:
    """The line saying what Claude Code's tools may do, when it is among the providers."""
    if "claude-code" not in chain_names(ctx.provider_name, ctx.config):
        return ""
    status = probe(ctx.config.sandbox.mode)
    return f"Claude Code tools: {describe_tools(ctx.config.provider.claude_code, status)}\n"


def _limitations(ctx: CommandContext, args: str) -> str:
    repo = LimitationStore(ctx.store)
    items = repo.list()
    if not items:
        return "No limitations recorded."
    people = repo.people_seen()
    # Anyone else's words only quoted (Limitation.quoted): this reply is in the owner's history.
    lines = [
        f"[{item.id}] {'open' if item.status == 'open' else 'resolved'}: {item.quoted}"
        + (f" (seen with {people[item.id]} other people)" if people.get(item.id) else "")
        for item in items
    ]
    return "Limitations:\n" + "\n".join(lines)


def _resolve(ctx: CommandContext, args: str) -> str:
    if not _owner(ctx):
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
    return f"Resolved [{resolved.id}] {resolved.quoted}."


def _merge(ctx: CommandContext, args: str) -> str:
    if not _owner(ctx):
        return OWNER_ONLY
    ids = [row_id(i) for i in args.split()]
    if len(ids) != 2 or ids[0] is None or ids[1] is None:
        return "Usage: /merge <limitation id> <id of the one it repeats>"
    try:
        kept = merge_limitations(
            ctx.store,
            ctx.paths.heartbeat,
            ids[0],
            ids[1],
            channel=ctx.message.channel,
            sender_id=ctx.message.sender_id,
            request=f"/merge {args}",
        )
    except ValueError as exc:
        return f"Not merged: {exc}."
    return f"Merged [{ids[0]}] into [{kept.id}] {kept.quoted}."


def _proposals(ctx: CommandContext, args: str) -> str:
    if args.strip().isdecimal():
        found = row_id(args)
        proposal = ProposalStore(ctx.store).get(found) if found is not None else None
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


# The sha256 the review showed, as the word after the id of /approve (at least 16 hex digits).
_SHA256 = re.compile(r"[0-9a-fA-F]{16,64}")


def _review(ctx: CommandContext, args: str, approving: bool) -> str:
    if not _owner(ctx):
        return OWNER_ONLY
    key, _, notes = args.partition(" ")
    number = row_id(key)
    if number is None:
        if approving:
            return "Usage: /approve <id> [sha256 from /proposals <id>] [notes]"
        return "Usage: /reject <id> <reason>"
    who = f"owner ({ctx.message.channel}:{ctx.message.sender_id})"
    try:
        if approving:
            first, _, rest = notes.strip().partition(" ")
            digest = first if _SHA256.fullmatch(first) else ""
            return approve(
                ctx.store,
                ctx.paths,
                ctx.config,
                number,
                rest if digest else notes,
                who,
                sha256=digest,
            )
        return reject(ctx.store, number, notes, who)
    except ReviewError as exc:
        return f"Not done: {exc}."


FRAGMENTS_USAGE = "Usage: /fragments [id | deactivate <id> | reactivate <id>]"
_FRAGMENT_ID = re.compile(r"[0-9]{1,9}")  # ASCII digits, small enough for SQLite


def _fragments(ctx: CommandContext, args: str) -> str:
    """List prompt fragments, show one, or switch one off or on (audited as the owner's)."""
    if not _owner(ctx):  # an owner granted in memory.db too
        return OWNER_ONLY
    repo = ProposalStore(ctx.store)
    words = args.split()
    if not words:
        items = repo.list_fragments(include_inactive=True)
        if not items:
            return "No prompt fragments. Approve a proposal with promoted notes to add one."
        return "Prompt fragments:\n" + "\n".join(fragment_line(f) for f in items)
    if len(words) == 1 and _FRAGMENT_ID.fullmatch(words[0]):
        found = repo.fragment(int(words[0]))
        if found is None:
            return f"No prompt fragment #{int(words[0])}."
        return describe_fragment(found, fragment_history(ctx.store, found.id))
    if (
        len(words) != 2
        or words[0].lower() not in ("deactivate", "reactivate")
        or not _FRAGMENT_ID.fullmatch(words[1])
    ):
        return FRAGMENTS_USAGE
    who = f"owner ({ctx.message.channel}:{ctx.message.sender_id})"
    try:
        changed = change_fragment(ctx.store, int(words[1]), words[0].lower() == "reactivate", who)
    except FragmentError as exc:
        return f"Not done: {exc}."
    done = "Reactivated" if changed.active else "Deactivated"
    return f"{done} prompt fragment #{changed.id}: {changed.text[:200]}"


def _selfheal(ctx: CommandContext, args: str) -> str:
    state = SelfHealStore(ctx.store).current()
    if args.strip().lower() != "clear":
        if state is None:
            return "No self-healing in progress."
        return (
            f"Self-healing {state.status}: {state.anomaly} "
            f"(iteration {state.iteration}/{state.max_iterations})"
        )
    if not _owner(ctx):
        return OWNER_ONLY
    cleared, cancelled = clear_escalation(ctx.store, ctx.paths.self_healing)
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
            detail=f"cause: {who}\nwas {cleared.status} at iteration {cleared.iteration}"
            + "".join(f"\ncancelled task {task_id}" for task_id in cancelled),
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


AGENT_HANDLERS: dict[str, Callable[[CommandContext, str], str]] = {
    "status": _status,
    "uptime": _uptime,
    "limitations": _limitations,
    "resolve": _resolve,
    "merge": _merge,
    "proposals": _proposals,
    "approve": _approve,
    "reject": _reject,
    "fragments": _fragments,
    "selfheal": _selfheal,
    "quant": _quant,
}

# Commands that wait on something running (a channel), not only on the database.
ASYNC_HANDLERS: dict[str, Callable[[CommandContext, str], Awaitable[str]]] = {
    "whatsapp": _whatsapp,
}
