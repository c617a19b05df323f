"""Carrying out a plan step by step, with progress, and saying plainly what was held back."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from omega import i18n
from omega.gateway.delivery import conclude
from omega.gateway.routing import Plan
from omega.markers.handlers import apply_markers
from omega.markers.registry import parse_markers
from omega.memory.audit import AuditEntry
from omega.providers.base import ProviderError
from omega.turn import (
    Outbox,
    PipelineDeps,
    Turn,
    ask_provider,
    external_reads,
    marker_context,
    person_workspace,
    record_audit,
    usage_fields,
)
from omega.types import (
    ChatMessage,
    Context,
    IncomingMessage,
    Reply,
    ToolCall,
)

log = logging.getLogger(__name__)

STEP_ATTEMPTS = 3


async def execute_steps(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    context: Context,
    plan: Plan,
    out: Outbox,
    started: float,
    images_before: dict[Path, int] | None = None,
    earlier: str = "",
) -> str:
    """Carry out a plan step by step: fresh call per step with what earlier steps found,
    up to three attempts each, markers applied per step, progress after each, then a summary.
    `earlier`: what the conversation's earlier turns read (turn.earlier_reads)."""
    total = len(plan.steps)
    listing = "\n".join(f"{i}. {step.do}" for i, step in enumerate(plan.steps, 1))
    language = turn.language
    held_note = held_back_note(plan, language)
    await out.send(
        message.answer(
            f"{i18n.message('plan_header', language)}\n{listing}"
            + (f"\n\n{held_note}" if held_note else ""),
            "status",
            tag="plan",
        )
    )
    results: list[str] = []
    calls: list[ToolCall] = []  # every step's calls: later steps read earlier results
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
        for attempt in range(1, STEP_ATTEMPTS + 1):
            try:
                reply = await ask_provider(deps, step_context)
                break
            except ProviderError as exc:
                log.warning("step %d/%d attempt %d failed: %s", index, total, attempt, exc)
                # The last failure is the step's row; an earlier one only when it was billed.
                if attempt == STEP_ATTEMPTS or exc.spent is not None:
                    await _audit_failed(deps, message, step.do, exc)
        if reply is None:
            results.append(f"Step {index} ({step.do}): failed")
            await out.send(
                message.answer(
                    i18n.message(
                        "plan_step_failed", language, index=index, total=total, step=step.do
                    ),
                    "status",
                    tag=f"step-{index}",
                )
            )
            continue
        parsed = parse_markers(reply.text)
        calls.extend(reply.tool_calls)
        read = external_reads(calls, message, earlier)
        await apply_markers(
            parsed,
            marker_context(deps, message, turn, out, cause="step", external=read),
        )
        results.append(f"Step {index} ({step.do}): {parsed.text[:1500]}")
        await record_audit(
            deps,
            AuditEntry(
                channel=message.channel,
                sender_id=message.sender_id,
                status="ok",
                event="step",
                input_text=step.do,
                output_text=parsed.text[:2000],
                **usage_fields(reply),
            ),
        )
        await out.send(
            message.answer(
                i18n.message("plan_step_done", language, index=index, total=total, step=step.do),
                "status",
                tag=f"step-{index}",
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
        summary_reply = await ask_provider(deps, summary_context, audit_as="plan_summary")
        text = parse_markers(summary_reply.text).text or "\n".join(results)
    except ProviderError as exc:
        log.warning("plan summary failed: %s", exc)
        text = "\n".join(results)
    if held_note:
        text = f"{text}\n\n{held_note}"
    detail = f"plan of {total} steps" + (f", {len(plan.held_back)} held back" if held_note else "")
    await conclude(
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


def held_back_note(plan: Plan, language: str = "English") -> str:
    """What a plan longer than MAX_STEPS leaves for later, said plainly in the person's
    language ('' when nothing)."""
    if not plan.held_back:
        return ""
    first = len(plan.steps) + 1
    last = first + len(plan.held_back) - 1
    listing = "\n".join(f"{i}. {step.do}" for i, step in enumerate(plan.held_back, first))
    intro = i18n.message("plan_held_back", language, first=first, last=last, limit=len(plan.steps))
    return f"{intro}\n{listing}"


async def _audit_failed(
    deps: PipelineDeps, message: IncomingMessage, step: str, error: ProviderError
) -> None:
    """The audit row of a failed attempt at a step, with what it was billed for."""
    await record_audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            status="error",
            event="step",
            input_text=step,
            **usage_fields(error, provider=deps.provider.name),
            detail=str(error)[:2000],
        ),
    )
