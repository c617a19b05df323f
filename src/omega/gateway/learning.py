"""What a reply teaches: files refused and MCP servers in trouble reach the owner,
introspection every N tool calls, a new limitation (anyone's) becomes a gated proposal, and the
honest answer when the planner finds no tool or skill can do it. None of it may stop the reply."""

from __future__ import annotations

import logging

from omega.evolution.gaps import raise_limitation, report_refusals, report_server_failures
from omega.gateway.delivery import conclude
from omega.gateway.routing import Plan
from omega.turn import (
    Outbox,
    PipelineDeps,
    Turn,
    external_reads,
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
        ctx = marker_context(deps, message, turn, out, cause="integrity")
        await report_refusals(deps, out, ctx)
    except Exception:
        log.exception("reporting refused files failed")


async def report_failed_servers(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox
) -> None:
    """Skills' MCP servers that did not start, or exited or hung in use, reach the owner once,
    as limitations."""
    try:
        ctx = marker_context(deps, message, turn, out, cause="integrity")
        await report_server_failures(deps, out, ctx)
    except Exception:
        log.exception("reporting MCP servers in trouble failed")


async def introspect(deps: PipelineDeps, out: Outbox, agent: str) -> None:
    """Every N recorded tool calls, the agent reviews its own actions (failures are logged)."""
    from omega.evolution.reflection import maybe_introspect

    try:
        await maybe_introspect(deps, out, agent)
    except Exception:
        log.exception("introspection for %s failed", agent)


async def propose_from_gap(deps: PipelineDeps, out: Outbox, limitation_id: int, goal: str) -> None:
    """A new limitation becomes a gated proposal, through the analysis every source uses
    (failures are logged, not raised)."""
    from omega.evolution.gaps import analyse_gap

    await analyse_gap(deps, out, limitation_id, goal)


async def cannot_yet(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    plan: Plan,
    out: Outbox,
    started: float,
    earlier: str = "",
) -> str:
    """An honest answer when the planner found that no tool or skill can do this; the gap
    becomes a limitation, whoever asked (the owner's is alerted at once, anyone else's is
    rate-limited per person and told in the daily digest), then a proposal. `earlier`: what
    the conversation's earlier turns read, which the planner's prompt carried (the gap is then
    not the owner's words)."""
    log.warning("requires a new skill: %s (%s)", plan.missing_capability, plan.reason)
    new_id = None
    try:
        limitation, created = await raise_limitation(
            marker_context(
                deps,
                message,
                turn,
                out,
                cause="planner",
                external=external_reads((), message, earlier),
            ),
            plan.missing_capability,
            plan.reason,
            "",
            "planner",
        )
        new_id = limitation.id if created else None
    except PermissionError as exc:  # a cap reached: the person still gets the answer
        log.warning("the planner's limitation was not recorded: %s", exc)
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
    if new_id is not None:
        await propose_from_gap(deps, out, new_id, message.text)
    return text
