"""Proposals: procedural memory and the owner's decision on each.

This module is the package's public face: callers outside `omega.evolution.proposals` import
from here. Inside, modules import each other directly.
- procedural: proposals, their decisions, fragments and learnings (ProposalStore)
- review: what an approval would load, shown before the owner decides
- registration: approving or rejecting a proposal (and promoting its notes to a fragment)
- fragments: listing, showing, deactivating and reactivating prompt fragments
- scaffold: tool templates for a human to implement (the gate reads them too)
- validation: the loop that asks a model for JSON within a budget (analysis, the judge,
  introspection)

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.evolution.proposals.fragments import (
        FragmentError,
        change_fragment,
        describe_fragment,
        fragment_history,
        fragment_line,
    )
    from omega.evolution.proposals.procedural import GLOBAL, Filed, ProposalStore, scope_of
    from omega.evolution.proposals.registration import ReviewError, approve, reject, write_scaffold
    from omega.evolution.proposals.review import render_review, review_files
    from omega.evolution.proposals.scaffold import TOOL_NAME, scaffold_text
    from omega.evolution.proposals.validation import LoopResult, validated_json

__all__ = [
    "GLOBAL",
    "TOOL_NAME",
    "Filed",
    "FragmentError",
    "LoopResult",
    "ProposalStore",
    "ReviewError",
    "approve",
    "change_fragment",
    "describe_fragment",
    "fragment_history",
    "fragment_line",
    "reject",
    "render_review",
    "review_files",
    "scaffold_text",
    "scope_of",
    "validated_json",
    "write_scaffold",
]

__getattr__ = loader(
    __name__,
    {
        "Filed": "procedural",
        "FragmentError": "fragments",
        "GLOBAL": "procedural",
        "LoopResult": "validation",
        "ProposalStore": "procedural",
        "ReviewError": "registration",
        "TOOL_NAME": "scaffold",
        "approve": "registration",
        "change_fragment": "fragments",
        "describe_fragment": "fragments",
        "fragment_history": "fragments",
        "fragment_line": "fragments",
        "reject": "registration",
        "render_review": "review",
        "review_files": "review",
        "scaffold_text": "scaffold",
        "scope_of": "procedural",
        "validated_json": "validation",
        "write_scaffold": "registration",
    },
)
