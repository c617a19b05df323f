"""Self-evolution: limitations, self-healing, introspection, proposals and the gate.

The package's public face is the list of public submodules below (`__all__`): callers outside
`omega.evolution` import one of these modules or names from it, never an internal one. They are
not imported here: each CLI command and loop needs one or two, and importing all of them would
cost every start. Internal: assess, gap, gate, judge, lexicon, normalize, signals, similarity,
validation (the gate and the validation loop are reached through analysis, introspection, lessons
and registration).
- limitations: what Omega knows it cannot do yet, raised once and tracked until resolved
- self_heal: the self-healing lifecycle the gateway runs
- lessons: skill lessons kept in memory.db
- introspection: the loop that reviews an agent's tool calls
- critic: per-tool success rates, typical errors, issues and recommendations (critic_report);
  a tool that keeps failing becomes a limitation and a proposal (review_tools)
- analysis: a limitation becomes a proposal
- gap_analysis: the one way every source's gap is recorded and analysed into a proposal
- digest: the owner's daily digest of gaps seen with other people
- procedural: proposals and their decisions (procedural memory)
- review: what an approval would load, shown before the owner decides
- registration: approving or rejecting a proposal (and promoting its notes to a fragment)
- fragments: listing, showing, deactivating and reactivating prompt fragments
- report: one picture of self-evolution over a period, for the owner
- recommend: the critic's section of the report; a recommendation made a proposal by the owner
- scaffold: tool templates for a human to implement
- integrity: telling the owner about a skill or tool file that was not loaded
- mcp_report: telling the owner about a skill's MCP server that did not start
"""

__all__ = [
    "analysis",
    "critic",
    "digest",
    "fragments",
    "gap_analysis",
    "integrity",
    "introspection",
    "lessons",
    "limitations",
    "mcp_report",
    "procedural",
    "recommend",
    "registration",
    "report",
    "review",
    "scaffold",
    "self_heal",
]
