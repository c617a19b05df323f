"""The one way a gap becomes a proposal, whatever saw it: a person's reply (LIMITATION), the
planner, the heartbeat, the critic, the voice stage, a skill file or MCP server that did not
start. The sighting is recorded first (limitations.raise_limitation); a new gap is then analysed
into a gated proposal (analysis.propose), after the reply is out. Failures are logged, never
raised: learning must not cost anyone a reply."""

from __future__ import annotations

import logging

from omega.evolution.gaps.analysis import propose
from omega.evolution.gaps.gap import Source
from omega.evolution.gaps.limitations import Limitation, LimitationStore, raise_limitation
from omega.evolution.proposals import Filed
from omega.turn import MarkerContext, Outbox, PipelineDeps

log = logging.getLogger(__name__)


def scope_of_gap(limitation: Limitation) -> str:
    """Whose private evidence a proposal from this gap carries: the person's whose words it
    is, or "" (the owner's own, or Omega's checks)."""
    return limitation.reported_by if limitation.from_person else ""


async def analyse_gap(
    deps: PipelineDeps, out: Outbox, limitation_id: int, goal: str = ""
) -> Filed | None:
    """Analyse a recorded limitation into a gated proposal (None when it is gone or the
    analysis gave up or failed; failures are logged). `goal` is what the person asked for."""
    try:
        limitation = await deps.store.call(LimitationStore(deps.store).get, limitation_id)
        if limitation is None:
            return None
        return await propose(
            deps,
            out,
            title=limitation.title,
            description=limitation.description,
            plan=limitation.proposed_plan,
            goal=goal,
            source=limitation.source,
            words=limitation.reported_by,
            scope=scope_of_gap(limitation),
        )
    except Exception:
        log.exception("analysis of limitation #%s failed", limitation_id)
        return None


async def learn_gap(
    deps: PipelineDeps,
    out: Outbox,
    ctx: MarkerContext,
    gap: tuple[str, str, str],
    source: Source,
    goal: str = "",
) -> tuple[Limitation, bool] | None:
    """For a source that is not answering anyone (critic, integrity checks): record the gap
    (title, description, plan) and analyse it when it is new. None when it was not recorded
    (a cap was reached, or it failed: logged)."""
    title, description, plan = gap
    try:
        limitation, created = await raise_limitation(ctx, title, description, plan, source)
    except PermissionError as exc:
        log.warning("limitation %r from %s not recorded: %s", title, source, exc)
        return None
    except Exception:
        log.exception("recording limitation %r from %s failed", title, source)
        return None
    if created:
        await analyse_gap(deps, out, limitation.id, goal)
    return limitation, created
