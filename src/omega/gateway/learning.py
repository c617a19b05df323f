"""What a reply teaches: files refused and MCP servers that did not start reach the owner,
introspection every N tool calls, a new limitation becomes a gated proposal, and the honest
answer when the planner finds no tool or skill can do it. None of it may stop the reply."""

from __future__ import annotations

import logging

from omega.evolution.integrity import report_refusals
from omega.evolution.limitations import raise_limitation
from omega.evolution.mcp_report import report_server_failures
from omega.gateway.delivery import conclude
from omega.gateway.routing import Plan
from omega.turn import (
    Outbox,
    PipelineDeps,
    Turn,
    marker_context,
)
from omega.types import (
    IncomingMessage,
)

log = logging.getLogger(__name__)


async def report_refused_files(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox
) -> None:
    """Files that were not loaded (unknown or changed) reach the owner once, as limitations."""
    try:
        await report_refusals(marker_context(deps, message, turn, out, cause="integrity"))
    except Exception:
        log.exception("reporting refused files failed")


async def report_failed_servers(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox
) -> None:
    """Skills' MCP servers that did not start reach the owner once, as limitations."""
    try:
        await report_server_failures(marker_context(deps, message, turn, out, cause="integrity"))
    except Exception:
        log.exception("reporting MCP servers that did not start failed")


async def introspect(deps: PipelineDeps, out: Outbox, agent: str) -> None:
    """Every N recorded tool calls, the agent reviews its own actions (failures are logged)."""
    from omega.evolution.introspection import maybe_introspect

    try:
        await maybe_introspect(deps, out, agent)
    except Exception:
        log.exception("introspection for %s failed", agent)


async def propose_from_gap(
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


async def cannot_yet(
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
    await conclude(
        deps,
        message,
        out,
        text,
        started=started,
        event="requires_new_skill",
        detail=f"missing: {plan.missing_capability}\nreason: {plan.reason}",
    )
    if created:
        await propose_from_gap(
            deps, out, plan.missing_capability, plan.reason, "", message.text, "planner"
        )
    return text
