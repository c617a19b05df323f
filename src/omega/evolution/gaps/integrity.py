"""Telling the owner, once, about a skill or tool file that was not loaded.

The loaders note each refused content in artefact_refusals; here each new one becomes an open
limitation (owner alert and HEARTBEAT.md through the usual path), analysed into a proposal
like every gap (gap_analysis), and is marked reported.
"""

from __future__ import annotations

import logging

from omega.evolution.gaps.gap_analysis import learn_gap
from omega.memory.artefacts import ArtefactStore
from omega.text import quote_untrusted
from omega.turn import MarkerContext, Outbox, PipelineDeps, owner_message

log = logging.getLogger(__name__)


async def report_refusals(deps: PipelineDeps, out: Outbox, ctx: MarkerContext) -> int:
    """Report every refusal not reported yet; returns how many were reported."""
    artefacts = ArtefactStore(ctx.store, ctx.paths.home)
    reported = 0
    for refusal in await ctx.store.call(artefacts.unreported):
        if not await ctx.store.call(artefacts.mark_reported, refusal.id):
            continue
        title = f"{refusal.kind} {refusal.name} is not loaded"
        description = (
            f"{refusal.path} is {refusal.reason} (sha256 {refusal.sha256[:16]}…): nobody "
            f"approved this content, so it does not run. Review it; if you trust it, install "
            f"it with `omega {refusal.kind}s add`."
        )
        learned = await learn_gap(deps, out, ctx, (title, description, ""), "integrity")
        if learned is not None and not learned[1]:  # known title, new content: say so once
            quoted = quote_untrusted(f"{title}: {description}", "integrity check", 600)
            await ctx.notify(owner_message(ctx, quoted, kind="alert", priority="urgent"))
        reported += 1
    return reported
