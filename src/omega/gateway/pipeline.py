"""handle_message: the ordered stages one message goes through.

auth -> sanitize -> attachments -> welcome -> projects -> commands -> typing -> prompt ->
context -> skill triggers -> provider (with status nudges) -> SILENT -> markers -> store ->
audit -> send -> workspace images -> cleanup. Each stage is a small function below.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Protocol, TypeVar

from omega import i18n
from omega.config import Config
from omega.evolution.integrity import report_refusals
from omega.evolution.lessons import with_lessons
from omega.evolution.limitations import raise_limitation
from omega.evolution.procedural import ProposalStore, scope_of
from omega.gateway import attachments
from omega.gateway.auth import check_auth
from omega.gateway.commands import OWNER_ONLY, CommandContext, parse_command, run_command
from omega.gateway.language import detect_language
from omega.gateway.privileges import (
    Role,
    allowed_tools,
    may_run_command,
    role_of,
    workspace_for,
)
from omega.gateway.prompt import PromptSituation, compose_system_prompt
from omega.gateway.routing import DIRECT, Plan, models_for, parse_plan, planning_prompt
from omega.gateway.sanitize import sanitize
from omega.gateway.state import RuntimeState
from omega.loops.checklist import read_checklist
from omega.markers.handlers import MarkerContext, apply_markers
from omega.markers.registry import parse_markers
from omega.memory.context import ContextRequest, build_context
from omega.memory.store import AuditEntry, Store
from omega.paths import OmegaPaths
from omega.prompts import Prompts
from omega.providers.base import Provider, ProviderError
from omega.schedule import resolve_timezone
from omega.skills import ProjectCatalog, Skill, SkillCatalog, match_triggers
from omega.types import (
    ChatMessage,
    Context,
    IncomingMessage,
    OutgoingKind,
    OutgoingMessage,
    Reply,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_SKILL_CHARS = 2000


class Outbox(Protocol):
    """Where the pipeline sends things: the gateway."""

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver a message on its channel."""
        ...

    async def typing(self, channel: str, target: str) -> None:
        """Show a typing indicator."""
        ...


@dataclass
class PipelineDeps:
    """What the stages need; built once at start-up."""

    config: Config
    prompts: Prompts
    store: Store
    provider: Provider
    provider_timeout: float
    paths: OmegaPaths
    skills: SkillCatalog
    projects: ProjectCatalog
    state: RuntimeState


def friendly_error(error: Exception, language: str = "English") -> str:
    """The message a user sees instead of a raw provider error (the provider's own one-sentence
    hint when it has one, e.g. "run `claude` once to log in")."""
    if isinstance(error, ProviderError) and error.hint:
        return error.hint
    kind = error.kind if isinstance(error, ProviderError) else "error"
    key = {
        "timeout": "error_timeout",
        "unavailable": "error_unavailable",
        "rate_limit": "error_rate_limit",
    }.get(kind, "error_generic")
    return i18n.message(key, language)


async def _db(deps: PipelineDeps, what: str, default: T, fn: Callable[..., T], *args: object) -> T:
    """A store call on the db thread; on failure log it and carry on with `default`."""
    try:
        return await deps.store.call(fn, *args)
    except Exception:
        log.exception("%s failed; carrying on without it", what)
        return default


async def _audit(deps: PipelineDeps, entry: AuditEntry) -> None:
    await _db(deps, "audit", None, deps.store.audit, entry)


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


async def send_stored(
    deps: PipelineDeps,
    message_id: str,
    out: Outbox,
    messages: list[OutgoingMessage],
    images: list[str],
) -> None:
    """Send an answer already stored with its inbox row: its messages, then its workspace
    images as photos (each removed once sent); then mark the message done at once.

    The gateway calls this too, on a restart, for an answer stored but not marked sent."""
    for outgoing in messages:
        await out.send(outgoing)
    target = messages[0] if messages else None
    for name in images:
        path = Path(name)
        try:
            data = await asyncio.to_thread(attachments.read_own_file, path)  # never a link
        except OSError as exc:
            log.warning("could not read workspace image %s: %s", path, exc)
            continue
        if target is not None:
            await out.send(
                OutgoingMessage(target.channel, target.target, path.name, kind="photo", photo=data)
            )
        attachments.cleanup([path])
    await _db(deps, "mark the message answered", None, deps.store.inbox_finish, message_id)


async def _deliver(
    deps: PipelineDeps,
    message: IncomingMessage,
    out: Outbox,
    messages: list[OutgoingMessage],
    images: list[Path] | None = None,
) -> None:
    """Store the answer with the message's inbox row, then send it (`send_stored`)."""
    names = [str(path) for path in images or []]
    await _db(
        deps, "store the reply", False, deps.store.inbox_store_reply, message.id, messages, names
    )
    await send_stored(deps, message.id, out, messages, names)


async def _conclude(
    deps: PipelineDeps,
    message: IncomingMessage,
    out: Outbox,
    text: str,
    *,
    started: float,
    reply: Reply | None = None,
    event: str = "exchange",
    detail: str = "",
    kind: OutgoingKind = "reply",
    images_before: dict[Path, int] | None = None,
    folder: Path | None = None,
) -> None:
    """The last stages of every answer: keep it with the inbox row, store the exchange, audit
    it, send it with the workspace images the turn made, mark the message done.

    Exactly-once: provider, tools and markers have all run when the answer is kept, so a
    restart after this point re-sends the kept answer and runs none of them again. What is
    left: a stop while the provider or the markers are still at work (before the answer is
    kept) runs the turn again; a stop between sending and marking done (one database write)
    sends the answer twice; a stop after keeping it and before the exchange is stored leaves
    the exchange out of the history."""
    images: list[Path] = []
    if images_before is not None:
        # The person's own folder, compared with its snapshot from the start of the turn.
        after = await asyncio.to_thread(attachments.snapshot_images, folder or deps.paths.workspace)
        images = attachments.new_images(images_before, after)
    answer = [OutgoingMessage(message.channel, message.target, text, kind=kind)]
    names = [str(path) for path in images]
    await _db(
        deps, "store the reply", False, deps.store.inbox_store_reply, message.id, answer, names
    )
    await _db(
        deps,
        "store exchange",
        "",
        deps.store.store_exchange,
        message.channel,
        message.sender_id,
        message.text,
        text,
    )
    usage = reply.usage if reply else None
    await _audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            input_text=message.text,
            output_text=text,
            provider=reply.provider if reply else deps.provider.name,
            model=reply.model if reply else "",
            status="ok",
            event=event,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            cost_usd=usage.cost_usd if usage else None,
            processing_ms=_ms(started),
            detail=detail[:2000],
        ),
    )
    await send_stored(deps, message.id, out, answer, names)


# ---- stages ---------------------------------------------------------------------------------


async def _deny(deps: PipelineDeps, message: IncomingMessage, reason: str, out: Outbox) -> None:
    log.warning("denied %s/%s: %s", message.channel, message.sender_id, reason)
    await _audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            input_text=message.text,
            status="denied",
            detail=reason,
            event="denied",
        ),
    )
    await out.send(
        OutgoingMessage(
            message.channel, message.target, deps.config.auth.deny_message, kind="denied"
        )
    )


def _sanitized(message: IncomingMessage) -> IncomingMessage:
    result = sanitize(message.text)
    if not result.modified:
        return message
    log.warning("sanitized input from %s: %s", message.sender_id, "; ".join(result.warnings))
    return dataclasses.replace(message, text=result.text)


def _with_attachment_notes(message: IncomingMessage, saved: list[str]) -> IncomingMessage:
    if not saved:
        return message
    notes = "\n".join(f"[Attached file: {path}]" for path in saved)
    return dataclasses.replace(message, text=f"{notes}\n{message.text}".strip())


async def _welcome(
    deps: PipelineDeps, message: IncomingMessage, facts: dict[str, str], out: Outbox
) -> dict[str, str]:
    """First contact: greet in the detected language and remember that we did."""
    if "welcomed" in facts:
        return facts
    language = facts.get("preferred_language") or detect_language(message.text)
    text = deps.prompts.welcome.get(language) or deps.prompts.welcome.get("English", "")
    if text:
        await out.send(OutgoingMessage(message.channel, message.target, text, kind="welcome"))
    await _db(
        deps, "remember welcome", None, deps.store.set_fact, message.sender_id, "welcomed", "true"
    )
    if "preferred_language" not in facts:
        await _db(
            deps,
            "remember language",
            None,
            deps.store.set_fact,
            message.sender_id,
            "preferred_language",
            language,
        )
    log.info("welcomed %s/%s in %s", message.channel, message.sender_id, language)
    return {**facts, "welcomed": "true", "preferred_language": language}


@contextlib.asynccontextmanager
async def _showing_activity(
    deps: PipelineDeps, message: IncomingMessage, language: str, out: Outbox
) -> AsyncIterator[None]:
    """Typing indicator every few seconds, and localized nudges if the answer is slow."""
    cfg = deps.config.omega

    async def typing() -> None:
        while True:
            await out.typing(message.channel, message.target)
            await asyncio.sleep(cfg.typing_interval_secs)

    async def nudges() -> None:
        await asyncio.sleep(cfg.status_first_secs)
        await out.send(
            OutgoingMessage(
                message.channel,
                message.target,
                i18n.message("status_first", language),
                kind="status",
            )
        )
        while True:
            await asyncio.sleep(cfg.status_repeat_secs)
            await out.send(
                OutgoingMessage(
                    message.channel,
                    message.target,
                    i18n.message("status_repeat", language),
                    kind="status",
                )
            )

    tasks = [asyncio.create_task(typing()), asyncio.create_task(nudges())]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def person_workspace(deps: PipelineDeps, message: IncomingMessage, role: Role) -> Path:
    """The folder this person's tools and images live in (the owner's is the workspace)."""
    return workspace_for(deps.paths.workspace, role, message.channel, message.sender_id)


def _situation(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    matched: list[Skill],
) -> PromptSituation:
    facts, zone = turn.facts, turn.zone
    project = (
        deps.projects.get(facts.get("active_project", "")) if facts.get("active_project") else None
    )
    return PromptSituation(
        channel=message.channel,
        is_group=message.is_group,
        project_name=project.name if project else "",
        project_instructions=project.instructions if project else "",
        personality=facts.get("personality", ""),
        # The heartbeat checklist is the owner's business, never in anyone else's prompt.
        checklist=read_checklist(deps.paths.heartbeat) if turn.role == "owner" else "",
        sandbox_mode=deps.config.sandbox.mode,
        workspace=str(person_workspace(deps, message, turn.role)),
        skill_instructions=tuple((s.name, s.body[:MAX_SKILL_CHARS]) for s in matched),
        timezone=zone,
    )


async def _context(deps: PipelineDeps, message: IncomingMessage, turn: Turn) -> Context:
    matched = [s for s in match_triggers(deps.skills.skills(), message.text) if s.available]
    scope = scope_of(message.channel, message.sender_id)
    matched = await _db(deps, "load lessons", matched, with_lessons, deps.store, matched, scope)
    system_prompt = compose_system_prompt(deps.prompts, _situation(deps, message, turn, matched))
    no_learnings: list[str] = []
    learnings = await _db(
        deps, "load learnings", no_learnings, ProposalStore(deps.store).recent_learnings, scope, 5
    )
    request = ContextRequest(
        message=message,
        system_prompt=system_prompt,
        facts=turn.facts,
        language=turn.language,
        max_history=deps.config.memory.max_context_messages,
        max_history_chars=deps.config.limits.max_history_chars,
        timezone=turn.zone,
        learnings=tuple(learnings),
    )
    try:
        context = await deps.store.call(build_context, deps.store, request)
    except Exception:  # memory failing must not stop the reply
        log.exception("context build failed; answering without memory")
        context = build_context(None, request)
    # Skills whose triggers match bring their MCP servers to this call only (to people other
    # than the owner only when `[auth]` gives them "mcp").
    tools = allowed_tools(deps.config, turn.role)
    if tools is None or "mcp" in tools:
        context.mcp_servers = tuple(server for skill in matched for server in skill.mcp_servers)
    context.allowed_tools = tools
    # Providers with tools of their own (the claude CLI) get the same line: read, or all.
    writes = tools is None or bool({"run_shell", "write_file"} & tools)
    context.tool_access = "full" if writes else "read_only"
    context.workspace = str(person_workspace(deps, message, turn.role))
    return context


async def ask_provider(deps: PipelineDeps, context: Context) -> Reply:
    """One provider call bounded by the configured timeout; every failure is a ProviderError.

    Every tool call the provider reports, whatever the call was for, goes into `tool_calls`."""
    try:
        async with deps.state.provider_slots(deps.config.limits.max_concurrent_provider_calls):
            reply = await asyncio.wait_for(deps.provider.complete(context), deps.provider_timeout)
    except TimeoutError:
        raise ProviderError(
            f"{deps.provider.name} gave no answer within {deps.provider_timeout:g}s", kind="timeout"
        ) from None
    except ProviderError:
        raise
    except Exception as exc:  # a provider bug is still only a friendly message for the user
        raise ProviderError(f"{deps.provider.name} crashed: {exc!r}") from exc
    await _record_tool_calls(deps, context, reply)
    return reply


async def _record_tool_calls(deps: PipelineDeps, context: Context, reply: Reply) -> None:
    """Every tool call the provider made goes into the tool_calls table."""
    if not reply.tool_calls:
        return
    if not context.use_tools:
        log.warning("%s called tools in a call that had none to offer", reply.provider)
    conversation = None
    if context.sender_id:
        conversation = await _db(
            deps,
            "find conversation",
            None,
            deps.store.active_conversation_id,
            context.channel,
            context.sender_id,
        )
    record = functools.partial(
        deps.store.record_tool_calls,
        agent=reply.provider,
        channel=context.channel,
        sender_id=context.sender_id,
        conversation_id=conversation or "",
    )
    await _db(deps, "record tool calls", 0, record, reply.tool_calls)


def marker_context(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox, cause: str
) -> MarkerContext:
    return MarkerContext(
        store=deps.store,
        paths=deps.paths,
        config=deps.config,
        message=message,
        timezone=turn.zone,
        skills=deps.skills,
        projects=deps.projects,
        state=deps.state,
        notify=out.send,
        cause=cause,
        role=turn.role,
    )


async def _report_refusals(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox
) -> None:
    """Files that were not loaded (unknown or changed) reach the owner once, as limitations."""
    try:
        await report_refusals(marker_context(deps, message, turn, out, cause="integrity"))
    except Exception:
        log.exception("reporting refused files failed")


async def _introspect(deps: PipelineDeps, out: Outbox, agent: str) -> None:
    """Every N recorded tool calls, the agent reviews its own actions (failures are logged)."""
    from omega.evolution.introspection import maybe_introspect

    try:
        await maybe_introspect(deps, out, agent)
    except Exception:
        log.exception("introspection for %s failed", agent)


async def _propose(
    deps: PipelineDeps, out: Outbox, title: str, description: str, plan: str, goal: str, source: str
) -> None:
    """A new limitation becomes a gated proposal (analysis failures are logged, not raised)."""
    from omega.evolution.analysis import propose

    try:
        await propose(
            deps, out, title=title, description=description, plan=plan, goal=goal, source=source
        )
    except Exception:
        log.exception("limitation analysis for %r failed", title)


# ---- classify and route ---------------------------------------------------------------------


def _routing_enabled(deps: PipelineDeps) -> bool:
    return deps.config.provider.classify and deps.provider.name != "local"


def _tool_names(deps: PipelineDeps) -> list[str]:
    names = getattr(deps.provider, "tool_names", None)
    return list(names()) if callable(names) else []


async def _plan(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, context: Context, fast: str | None
) -> Plan:
    """The planner's validated decision; any failure means a direct answer."""
    skills = [s.name for s in deps.skills.skills()]
    tools = _tool_names(deps)
    prompt = planning_prompt(
        message.text,
        active_project=turn.facts.get("active_project", ""),
        recent=context.messages[:-1],
        skills=skills,
        tools=tools,
    )
    planning = Context(
        system_prompt="",
        messages=[ChatMessage("user", prompt)],
        model=fast,
        max_tokens=400,
        sender_id=message.sender_id,
        channel=message.channel,
        use_tools=False,
    )
    try:
        reply = await ask_provider(deps, planning)
    except ProviderError as exc:
        log.warning("planning call failed (%s); answering directly", exc)
        return DIRECT
    plan = parse_plan(reply.text, [*skills, *tools])
    for note in plan.notes:
        log.warning("plan rejected, answering directly: %s", note)
    await _audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            status="ok",
            event="classify",
            input_text=message.text[:500],
            output_text=reply.text[:1000],
            provider=reply.provider,
            model=reply.model,
            input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens,
            cost_usd=reply.usage.cost_usd,
            detail=plan.kind,
        ),
    )
    return plan


async def _cannot_yet(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    plan: Plan,
    out: Outbox,
    started: float,
) -> str:
    """An honest answer when the planner found that no tool or skill can do this; the gap
    becomes a limitation (the owner is alerted the first time)."""
    log.warning("requires a new skill: %s (%s)", plan.missing_capability, plan.reason)
    created = False
    try:
        # Limitations are the owner's global state (privileges.py): others only get the answer.
        if turn.role == "owner":
            _, created = await raise_limitation(
                marker_context(deps, message, turn, out, cause="planner"),
                plan.missing_capability,
                plan.reason,
                "",
                "planner",
            )
    except Exception:
        log.exception("recording the planner's limitation failed")
    text = f"I can't do that yet: {plan.missing_capability}."
    if plan.reason:
        text += f" {plan.reason}"
    await _conclude(
        deps,
        message,
        out,
        text,
        started=started,
        event="requires_new_skill",
        detail=f"missing: {plan.missing_capability}\nreason: {plan.reason}",
    )
    if created:
        await _propose(deps, out, plan.missing_capability, plan.reason, "", message.text, "planner")
    return text


STEP_ATTEMPTS = 3


async def _execute_steps(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    context: Context,
    plan: Plan,
    out: Outbox,
    started: float,
    images_before: dict[Path, int] | None = None,
) -> str:
    """Carry out a plan step by step: fresh call per step with what earlier steps found,
    up to three attempts each, markers applied per step, progress after each, then a summary."""
    total = len(plan.steps)
    listing = "\n".join(f"{i}. {step.do}" for i, step in enumerate(plan.steps, 1))
    held_note = _held_back_note(plan)
    await out.send(
        OutgoingMessage(
            message.channel,
            message.target,
            f"Plan:\n{listing}" + (f"\n\n{held_note}" if held_note else ""),
            kind="status",
        )
    )
    results: list[str] = []
    for index, step in enumerate(plan.steps, 1):
        done = "\n".join(results) or "(nothing yet)"
        uses = f" Use: {', '.join(step.uses)}." if step.uses else ""
        prompt = (
            f"You are carrying out step {index} of {total} of this request: "
            f"{message.text}\nResults so far:\n{done}\n\nNow do step {index}: "
            f"{step.do}.{uses} Report this step's result briefly."
        )
        step_context = dataclasses.replace(
            context, messages=[*context.messages[:-1], ChatMessage("user", prompt)]
        )
        reply: Reply | None = None
        error: ProviderError | None = None
        for attempt in range(1, STEP_ATTEMPTS + 1):
            try:
                reply = await ask_provider(deps, step_context)
                break
            except ProviderError as exc:
                error = exc
                log.warning("step %d/%d attempt %d failed: %s", index, total, attempt, exc)
        if reply is None:
            results.append(f"Step {index} ({step.do}): failed")
            await _audit(
                deps,
                AuditEntry(
                    channel=message.channel,
                    sender_id=message.sender_id,
                    status="error",
                    event="step",
                    input_text=step.do,
                    provider=deps.provider.name,
                    detail=str(error)[:2000],
                ),
            )
            await out.send(
                OutgoingMessage(
                    message.channel,
                    message.target,
                    f"✗ Step {index}/{total} failed: {step.do}",
                    kind="status",
                )
            )
            continue
        parsed = parse_markers(reply.text)
        await apply_markers(
            parsed,
            marker_context(deps, message, turn, out, cause="step"),
        )
        results.append(f"Step {index} ({step.do}): {parsed.text[:1500]}")
        await _audit(
            deps,
            AuditEntry(
                channel=message.channel,
                sender_id=message.sender_id,
                status="ok",
                event="step",
                input_text=step.do,
                output_text=parsed.text[:2000],
                provider=reply.provider,
                model=reply.model,
                input_tokens=reply.usage.input_tokens,
                output_tokens=reply.usage.output_tokens,
                cost_usd=reply.usage.cost_usd,
            ),
        )
        await out.send(
            OutgoingMessage(
                message.channel, message.target, f"✓ Step {index}/{total}: {step.do}", kind="status"
            )
        )
    summary_prompt = (
        "Tell the person, briefly and in their language, what was done for their "
        f"request '{message.text}' and the outcome:\n" + "\n".join(results)
    )
    summary_context = dataclasses.replace(
        context, messages=[ChatMessage("user", summary_prompt)], use_tools=False
    )
    try:
        summary_reply = await ask_provider(deps, summary_context)
        text = parse_markers(summary_reply.text).text or "\n".join(results)
    except ProviderError as exc:
        log.warning("plan summary failed: %s", exc)
        text = "\n".join(results)
    if held_note:
        text = f"{text}\n\n{held_note}"
    detail = f"plan of {total} steps" + (f", {len(plan.held_back)} held back" if held_note else "")
    await _conclude(
        deps,
        message,
        out,
        text,
        started=started,
        detail=detail,
        images_before=images_before,
        folder=person_workspace(deps, message, turn.role),
    )
    return text


def _held_back_note(plan: Plan) -> str:
    """What a plan longer than MAX_STEPS leaves for later, said plainly ('' when nothing)."""
    if not plan.held_back:
        return ""
    first = len(plan.steps) + 1
    last = first + len(plan.held_back) - 1
    listing = "\n".join(f"{i}. {step.do}" for i, step in enumerate(plan.held_back, first))
    return (
        f"This needs {last} steps; I carry out at most {len(plan.steps)} at a time, so steps "
        f"{first}-{last} are not done yet. Ask me to continue and I will do them:\n{listing}"
    )


# ---- the pipeline ---------------------------------------------------------------------------


async def handle_message(deps: PipelineDeps, message: IncomingMessage, out: Outbox) -> None:
    """Answer one message through every stage, in order."""
    started = time.perf_counter()
    denial = check_auth(deps.config, message)
    if denial:
        await _deny(deps, message, denial, out)
        return
    message = await as_person(deps, _sanitized(message))
    saved = await asyncio.to_thread(
        attachments.save_attachments, deps.paths.inbox, message.attachments
    )
    try:
        await _answer(deps, _with_attachment_notes(message, [str(p) for p in saved]), out, started)
    finally:
        attachments.cleanup(saved)


async def as_person(deps: PipelineDeps, message: IncomingMessage) -> IncomingMessage:
    """The message keyed by its sender's person (memory, tasks, folder), its channel id kept
    for rights and its replies still going to the channel id (identities, store.person_of)."""
    if message.origin_id:
        return message
    person = await _db(
        deps,
        "resolve identity",
        message.sender_id,
        deps.store.person_of,
        message.channel,
        message.sender_id,
    )
    if person == message.sender_id:
        return message
    return dataclasses.replace(
        message, sender_id=person, origin_id=message.sender_id, reply_target=message.target
    )


@dataclass(frozen=True)
class Turn:
    """Who is being answered, in which language and timezone, and what is known of them."""

    facts: dict[str, str]
    language: str
    zone: tzinfo
    role: Role = "stranger"  # the rights the turn runs with (gateway.privileges)


async def load_turn(deps: PipelineDeps, message: IncomingMessage) -> Turn:
    """The sender's facts, language and timezone (memory failing means empty facts)."""
    no_facts: dict[str, str] = {}
    facts = await _db(deps, "load facts", no_facts, deps.store.facts, message.sender_id)
    return _turn(deps, facts, role_of(deps.config, message))


def _turn(deps: PipelineDeps, facts: dict[str, str], role: Role) -> Turn:
    return Turn(
        facts=facts,
        language=facts.get("preferred_language", "English"),
        zone=resolve_timezone(facts.get("timezone", ""), deps.config.omega.timezone),
        role=role,
    )


async def _answer(
    deps: PipelineDeps, message: IncomingMessage, out: Outbox, started: float
) -> None:
    turn = await load_turn(deps, message)
    turn = _turn(deps, await _welcome(deps, message, turn.facts, out), turn.role)

    command = parse_command(message.text)
    if command is not None:
        ctx = CommandContext(
            store=deps.store,
            config=deps.config,
            paths=deps.paths,
            message=message,
            provider_name=deps.provider.name,
            started_at=deps.state.started_at,
            skills=deps.skills,
            projects=deps.projects,
            timezone=turn.zone,
        )
        closing = None
        if command.name == "forget":
            closing = await _db(
                deps,
                "find conversation",
                None,
                deps.store.active_conversation_id,
                message.channel,
                message.sender_id,
            )
        try:
            if may_run_command(turn.role, command.name):
                text = await run_command(command, ctx)
            else:
                text = OWNER_ONLY
                await _audit(
                    deps,
                    AuditEntry(
                        channel=message.channel,
                        sender_id=message.sender_id,
                        sender_name=message.sender_name,
                        input_text=message.text[:500],
                        status="denied",
                        event="command_refused",
                        detail=f"/{command.name} is the owner's; role: {turn.role}",
                    ),
                )
        except Exception:
            log.exception("command /%s failed", command.name)
            text = i18n.message("error_generic", turn.language)
        await _deliver(
            deps,
            message,
            out,
            [OutgoingMessage(message.channel, message.target, text, kind="command")],
        )
        if closing:  # a forgotten conversation is still summarized, like an idle one
            from omega.loops.summarizer import summarize_conversation

            try:
                await summarize_conversation(deps, closing)
            except Exception:
                log.exception("summarizing the forgotten conversation failed")
        return
    await respond(deps, message, turn, out, started=started)


async def respond(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    out: Outbox,
    *,
    started: float | None = None,
    cause: str = "reply",
    raise_errors: bool = False,
    kind: OutgoingKind = "reply",
) -> str | None:
    """Provider -> SILENT -> markers -> store -> audit -> send -> workspace images.

    Returns the text sent (None when nothing was). With `raise_errors`, a provider failure
    raises ProviderError instead of sending the friendly message (the scheduler retries).
    """
    started = time.perf_counter() if started is None else started
    folder = person_workspace(deps, message, turn.role)
    # One turn at a time per folder: the images sent are exactly those this turn made.
    async with deps.state.workspace_lock(str(folder)):
        return await _respond(deps, message, turn, out, folder, started, cause, raise_errors, kind)


async def _respond(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    out: Outbox,
    folder: Path,
    started: float,
    cause: str,
    raise_errors: bool,
    kind: OutgoingKind,
) -> str | None:
    images_before = await asyncio.to_thread(attachments.snapshot_images, folder)
    fast, complex_model = models_for(deps.provider.name, deps.config)
    plan = DIRECT
    try:
        async with _showing_activity(deps, message, turn.language, out):
            context = await _context(deps, message, turn)
            if cause == "reply" and _routing_enabled(deps):
                plan = await _plan(deps, message, turn, context, fast)
            if plan.kind == "direct":
                # Scheduled actions are autonomous work: the complex model, as plan steps get.
                context.model = complex_model if cause == "action" else fast
                reply = await ask_provider(deps, context)
        if plan.kind == "steps":
            context.model = complex_model
            async with _showing_activity(deps, message, turn.language, out):
                text = await _execute_steps(
                    deps, message, turn, context, plan, out, started, images_before
                )
            return text
        if plan.kind == "requires_new_skill":
            return await _cannot_yet(deps, message, turn, plan, out, started)
    except ProviderError as exc:
        log.error(
            "provider error for %s/%s (%s): %s", message.channel, message.sender_id, cause, exc
        )
        text = friendly_error(exc, turn.language)
        await _audit(
            deps,
            AuditEntry(
                channel=message.channel,
                sender_id=message.sender_id,
                sender_name=message.sender_name,
                input_text=message.text,
                output_text=text,
                provider=deps.provider.name,
                status="error",
                detail=str(exc)[:2000],
                processing_ms=_ms(started),
                event="exchange" if cause == "reply" else cause,
            ),
        )
        if raise_errors:
            raise
        await _deliver(
            deps,
            message,
            out,
            [OutgoingMessage(message.channel, message.target, text, kind="error")],
        )
        return None

    parsed = parse_markers(reply.text)
    # SILENT is for groups only; in a one-to-one chat the marker goes and the rest is sent.
    if message.is_group and parsed.has("SILENT") and not parsed.text:
        log.info("SILENT reply to %s/%s suppressed", message.channel, message.sender_id)
        return None
    outcome = await apply_markers(
        parsed,
        marker_context(deps, message, turn, out, cause=cause),
    )
    text = parsed.text or (i18n.message("done", turn.language) if outcome.applied else "…")

    await _conclude(
        deps,
        message,
        out,
        text,
        started=started,
        reply=reply,
        kind=kind,
        event="exchange" if cause == "reply" else cause,
        detail="; ".join(outcome.applied + outcome.failed),
        images_before=images_before,
        folder=folder,
    )
    for title, description, proposed in outcome.new_limitations:
        await _propose(deps, out, title, description, proposed, message.text, "limitation")
    await _report_refusals(deps, message, turn, out)
    if reply.tool_calls:
        await _introspect(deps, out, reply.provider)
    return text


SendFn = Callable[[OutgoingMessage], Awaitable[None]]
