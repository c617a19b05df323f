"""Gaps: what Omega cannot do yet, from a sighting to a proposal.

This module is the package's public face: callers outside `omega.evolution.gaps` import from
here. Inside, modules import each other directly.
- gap: a gap as one source saw it (whose words, with whom, the same one or not)
- limitations: a gap recorded once whoever saw it, tracked until resolved
- digest: the owner's daily digest of gaps seen with other people
- analysis: a gap becomes a proposal (validated, gated, filed)
- gap_analysis: the one way every source's gap is recorded and analysed
- integrity: a skill or tool file that was not loaded, told to the owner as a gap
- mcp_report: a skill's MCP server that did not start or stopped, told to the owner as a gap

Names are loaded on first use: a command that lists limitations does not import the gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.evolution.gaps.analysis import propose, submit
    from omega.evolution.gaps.digest import digest_loop
    from omega.evolution.gaps.gap import own_words
    from omega.evolution.gaps.gap_analysis import analyse_gap
    from omega.evolution.gaps.integrity import report_refusals
    from omega.evolution.gaps.limitations import (
        LimitationStore,
        raise_limitation,
        resolve_by_owner,
        resolve_limitation,
    )
    from omega.evolution.gaps.mcp_report import report_server_failures
    from omega.evolution.gaps.merging import merge_limitations

__all__ = [
    "LimitationStore",
    "analyse_gap",
    "digest_loop",
    "merge_limitations",
    "own_words",
    "propose",
    "raise_limitation",
    "report_refusals",
    "report_server_failures",
    "resolve_by_owner",
    "resolve_limitation",
    "submit",
]

__getattr__ = loader(
    __name__,
    {
        "LimitationStore": "limitations",
        "analyse_gap": "gap_analysis",
        "digest_loop": "digest",
        "merge_limitations": "merging",
        "own_words": "gap",
        "propose": "analysis",
        "raise_limitation": "limitations",
        "report_refusals": "integrity",
        "report_server_failures": "mcp_report",
        "resolve_by_owner": "limitations",
        "resolve_limitation": "limitations",
        "submit": "analysis",
    },
)
