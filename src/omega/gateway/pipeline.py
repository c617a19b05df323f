"""handle_message: the ordered stages one message goes through.

auth -> sanitize -> identity -> voice -> attachments -> welcome -> projects -> commands ->
typing -> prompt -> context -> skill triggers -> provider (with status nudges) -> SILENT ->
markers -> store -> audit -> send -> workspace images -> cleanup. Each stage is a small
function below (voice notes in voice.py, the one deny in ingress.py); what they share is in
omega.turn, the reply's context in turn_context.py, what a reply teaches (refusals, failing
servers, introspection, gaps into proposals) in learning.py, the planner in planning.py, plans
in steps.py, and the last stages (keep, store, audit, send) in delivery.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

from omega import i18n
from omega.gateway import attachments, ingress, learning, voice
from omega.gateway.commands import OWNER_ONLY, CommandContext, parse_command, run_command
from omega.gateway.delivery import conclude, deliver_answer
from omega.gateway.language import detect_language
from omega.gateway.persons import NOT_FOR_GUESTS, as_person, command_refusal
from omega.gateway.planning import plan_message, routing_enabled
from omega.gateway.routing import DIRECT
from omega.gateway.sanitize import sanitize
from omega.gateway.steps import execute_steps
from omega.gateway.turn_context import turn_context
from omega.markers.confirm import confirm_refused
from omega.markers.handlers import apply_markers
from omega.markers.notices import unmet_notice
from omega.markers.registry import parse_markers
from omega.memory.access import GrantRole
from omega.providers.base import ProviderError, friendly_error
from omega.turn import (
    ATTACHMENT_NOTE,
    OWNER_COMMANDS,
    Outbox,
    PipelineDeps,
    Turn,
    ask_provider,
    audit_message,
    db_call,
    earlier_reads,
    elapsed_ms,
    external_reads,
    load_granted_turn,
    make_turn,
    marker_context,
    models_for,
    person_workspace,
    sender_role,
    usage_fields,
)
from omega.types import (
    IncomingMessage,
    OutgoingKind,
)

__all__ = ["handle_message", "respond"]

log = logging.getLogger(__name__)

# ---- stages ---------------------------------------------------------------------------------


def _sanitized(message: IncomingMessage) -> IncomingMessage:
    result = sanitize(message.text)
    if not result.modified:
        return message
    log.warning("sanitized input from %s: %s", message.sender_id, "; ".join(result.warnings))
    return dataclasses.replace(message, text=result.text)


def _with_attachment_notes(message: IncomingMessage, saved: list[str]) -> IncomingMessage:
    if not saved:
        return message
    notes = "\n".join(f"{ATTACHMENT_NOTE}{path}]" for path in saved)
    return dataclasses.replace(message, text=f"{notes}\n{message.text}".strip())


def _own_words(text: str) -> str:
    """The person's words: the text without the notes naming where attachments were saved (a
    path and a random file name are no language)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(ATTACHMENT_NOTE))


async def _welcome(
    deps: PipelineDeps, message: IncomingMessage, facts: dict[str, str], out: Outbox
) -> dict[str, str]:
    """First contact: greet in the detected language and remember that we did."""
    if "welcomed" in facts:
        return facts
    language = facts.get("preferred_language") or detect_language(_own_words(message.text))
    text = deps.prompts.welcome.get(language) or deps.prompts.welcome.get("English", "")
    if text:
        await out.send(message.answer(text, "welcome", tag="welcome"))
    await db_call(
        deps, "remember welcome", None, deps.store.set_fact, message.sender_id, "welcomed", "true"
    )
    if "preferred_language" not in facts:
        await db_call(
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


def nudge_delays(first: float, repeat: float, deps: PipelineDeps) -> tuple[float, float]:
    """When the "Taking a moment..." and "Still working..." nudges come: the first after
    `first` seconds, then every `repeat`, each at most a third of the time the answer may take
    (the provider chain's timeout), so they appear before it runs out: with the default 120 s,
    at 15 s, 55 s and 95 s."""
    third = max(deps.provider_timeout / 3, 0.5)
    return min(first, third), min(repeat, third)


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

    first, every = nudge_delays(cfg.status_first_secs, cfg.status_repeat_secs, deps)

    async def nudges() -> None:
        await asyncio.sleep(first)
        key, number = "status_first", 0
        while True:
            number += 1
            await out.send(
                message.answer(i18n.message(key, language), "status", tag=f"status-{number}")
            )
            key = "status_repeat"
            await asyncio.sleep(every)

    tasks = [asyncio.create_task(typing()), asyncio.create_task(nudges())]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def handle_message(deps: PipelineDeps, message: IncomingMessage, out: Outbox) -> None:
    """Answer one message through every stage, in order."""
    started = time.perf_counter()
    denial, granted = await ingress.admission(deps, message)  # read now: a revocation holds
    if denial:
        await ingress.deny(deps, message, denial, out)
        return
    message = await as_person(deps, _sanitized(message))
    if voice.has_voice(message):
        heard = await voice.transcribe_voice(
            deps, message, await load_granted_turn(deps, message, granted), out, started
        )
        if heard is None:  # answered: no transcription, or it failed
            return
        message = heard
    saved = (
        await asyncio.to_thread(attachments.save_attachments, deps.paths.inbox, message.attachments)
        if message.attachments
        else []
    )
    try:
        noted = _with_attachment_notes(message, [str(p) for p in saved])
        await _answer(deps, noted, out, started, granted)
    finally:
        attachments.cleanup(saved, deps.paths.workspace)


async def _answer(
    deps: PipelineDeps,
    message: IncomingMessage,
    out: Outbox,
    started: float,
    granted: GrantRole | None,
) -> None:
    turn = await load_granted_turn(deps, message, granted)
    turn = make_turn(deps, await _welcome(deps, message, turn.facts, out), turn.role)

    command = parse_command(message.text)
    if command is not None:
        # The sender's own words, never the model's: their rights, the owner's in a room too.
        rights = sender_role(deps.config, message, granted)
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
            pairing=deps.state.pairing,
            role=rights,
            tasks_changed=deps.state.tasks_changed,
        )
        closing = None
        if command.name == "forget":
            closing = await db_call(
                deps,
                "find conversation",
                None,
                deps.store.active_conversation_id,
                message.channel,
                message.sender_id,
                message.conversation,
            )
        try:
            refusal = await command_refusal(deps, message, rights, command.name)
            if refusal is None and command.name == "confirm":  # acts as a reply's markers do
                text = await confirm_refused(deps, message, rights, out, command.args)
            elif refusal is None:
                text = await run_command(command, ctx)
            else:
                text = OWNER_ONLY if command.name in OWNER_COMMANDS else NOT_FOR_GUESTS
                await audit_message(
                    deps,
                    message,
                    input_text=message.text[:500],
                    status="denied",
                    event="command_refused",
                    detail=refusal,
                )
        except Exception:
            log.exception("command /%s failed", command.name)
            text = i18n.message("error_generic", turn.language)
        await deliver_answer(
            deps,
            message,
            out,
            [message.answer(text, "command")],
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
            listed = deps.skills.skills()  # once per message: the context and the planner
            context = await turn_context(deps, message, turn, listed)
            # What earlier turns read, and the earlier conversations memory recalled: the
            # prompt carries it too (issue 37).
            earlier = await earlier_reads(deps, message, context.recalled_from)
            if cause == "reply" and routing_enabled(deps):
                plan = await plan_message(deps, message, turn, context, fast, listed)
            if plan.kind == "direct":
                # Scheduled actions are autonomous work: the complex model, as plan steps get.
                context.model = complex_model if cause == "action" else fast
                reply = await ask_provider(deps, context)
        if plan.kind == "steps":
            context.model = complex_model
            async with _showing_activity(deps, message, turn.language, out):
                text = await execute_steps(
                    deps, message, turn, context, plan, out, started, images_before, earlier
                )
            return text
        if plan.kind == "requires_new_skill":
            return await learning.cannot_yet(deps, message, turn, plan, out, started, earlier)
    except ProviderError as exc:
        log.error(
            "provider error for %s/%s (%s): %s", message.channel, message.sender_id, cause, exc
        )
        text = friendly_error(exc, turn.language)
        await audit_message(
            deps,
            message,
            output_text=text,
            **usage_fields(exc, provider=deps.provider.name),  # what it was billed for
            status="denied" if exc.kind == "spending_cap" else "error",
            detail=str(exc)[:2000],
            processing_ms=elapsed_ms(started),
            event="exchange" if cause == "reply" else cause,
        )
        if raise_errors:
            raise
        await deliver_answer(
            deps,
            message,
            out,
            [message.answer(text, "error")],
        )
        return None

    parsed = parse_markers(reply.text)
    # SILENT is for groups only; in a one-to-one chat the marker goes and the rest is sent.
    if message.is_group and parsed.has("SILENT") and not parsed.text:
        log.info("SILENT reply to %s/%s suppressed", message.channel, message.sender_id)
        # Nothing said, but the call was paid for: audited like any answer, so the daily cap
        # (summed from the audit log) counts it.
        await audit_message(
            deps,
            message,
            status="ok",
            input_text=message.text[:500],
            output_text="",
            **usage_fields(reply),
            processing_ms=elapsed_ms(started),
            event="exchange" if cause == "reply" else cause,
            detail="SILENT: nothing sent",
        )
        return None
    # What the reply's prompt carried decides whose words its lessons and gaps are (issue 37).
    read = external_reads(reply.tool_calls, message, earlier)
    outcome = await apply_markers(
        parsed,
        marker_context(deps, message, turn, out, cause=cause, external=read),
    )
    text = parsed.text or (i18n.message("done", turn.language) if outcome.applied else "…")
    unmet = unmet_notice(outcome.unmet, turn.language)
    if unmet:  # a promise in the reply with nothing behind it is corrected at once
        text = unmet if text == "…" else f"{text}\n\n{unmet}"
    if context.images and not attachments.sees_images(deps.provider):
        # said by the code, whatever the model claims to have seen
        text = f"{text}\n\n{i18n.message('images_unseen', turn.language)}"

    await conclude(
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
    for limitation_id in outcome.new_limitations:
        await learning.propose_from_gap(deps, out, limitation_id, message.text)
    await learning.report_refused_files(deps, message, turn, out)
    await learning.report_failed_servers(deps, message, turn, out)
    if reply.tool_calls:
        await learning.introspect(deps, out, reply.provider)
    return text
