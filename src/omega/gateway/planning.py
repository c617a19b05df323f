"""Classify and route: the planner's call for one message (direct, steps, or a new skill)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from omega.gateway.routing import DIRECT, Plan, obviously_direct, parse_plan, planning_prompt
from omega.gateway.turn_context import visible_skills
from omega.memory.audit import AuditEntry
from omega.providers.base import ProviderError
from omega.skills import Skill
from omega.turn import PipelineDeps, Turn, ask_provider, record_audit, usage_fields
from omega.types import (
    ChatMessage,
    Context,
    IncomingMessage,
)

log = logging.getLogger(__name__)


def routing_enabled(deps: PipelineDeps) -> bool:
    """Whether messages are planned first (not for the small local model)."""
    return deps.config.provider.classify and deps.provider.name != "local"


def sender_tools(deps: PipelineDeps, context: Context) -> list[str]:
    """The tools the person being answered may use: the provider's own for their role (none
    for a provider without tools) and the MCP servers of the skills matched for this call."""
    names = getattr(deps.provider, "tool_names", None)  # optional: the local model has none
    own = list(names(context)) if callable(names) else []
    return list(dict.fromkeys([*own, *(server.name for server in context.mcp_servers)]))


async def plan_message(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    context: Context,
    fast: str | None,
    listed: Sequence[Skill] | None = None,
) -> Plan:
    """The planner's validated decision; any failure means a direct answer. `listed` is the
    skill catalog as listed for this message (listed now when not given)."""
    catalog = deps.skills.skills() if listed is None else listed
    # Only the skills this turn may know of: another person's is not even named to the
    # planner, whose plan the person reads.
    skills = [s.name for s in visible_skills(catalog, message)]
    tools = sender_tools(deps, context)
    names = [*skills, *tools]
    if obviously_direct(message.text, attachments=len(message.attachments), names=names):
        return DIRECT  # a greeting or a plain question: the answer is the only call
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
        reply = await ask_provider(deps, planning, purpose="classify")
    except ProviderError as exc:
        log.warning("planning call failed (%s); answering directly", exc)
        await record_audit(
            deps,
            AuditEntry(
                channel=message.channel,
                sender_id=message.sender_id,
                status="denied" if exc.kind == "spending_cap" else "error",
                event="classify",
                input_text=message.text[:500],
                **usage_fields(exc, provider=deps.provider.name),
                detail=str(exc)[:2000],
            ),
        )
        return DIRECT
    plan = parse_plan(reply.text, names)
    for note in plan.notes:
        if plan.kind == "requires_new_skill":
            log.warning("plan stopped at a missing capability: %s", note)
        else:
            log.warning("plan rejected, answering directly: %s", note)
    await record_audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            status="ok",
            event="classify",
            input_text=message.text[:500],
            output_text=reply.text[:1000],
            **usage_fields(reply),
            detail=plan.kind,
        ),
    )
    return plan
