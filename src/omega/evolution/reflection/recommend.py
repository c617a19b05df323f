"""The critic's voice in the report (spec 004 §3.7): each tool's figures, the issues and the
recommendations of `critic.critic_report`, shown by `omega evolution report` (text and
`--json`) and the web page's Evolution view; and one action of the owner's that turns a
recommendation into a proposal (`omega evolution propose <id>`, the page's "Propose" button).

A recommendation's id is a digest of its text (`r` + 8 hex digits): the same advice about the
same tool keeps its id from one report to the next, while the counts in its issue change. A
proposal made from one goes the normal way: the limitation analysis writes it, the gate judges
it, procedural memory files it, the owner is told (evolution.analysis.propose); the request is
audited as the owner's (`recommendation:proposed`)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from omega.evolution.proposals import ProposalStore
from omega.evolution.reflection.critic import CriticReport, critic_report
from omega.memory.audit import AuditEntry
from omega.memory.store import Store
from omega.turn import Outbox, PipelineDeps


@dataclass(frozen=True)
class ToolReport:
    """The critic's view of one tool (recent calls, not only the period)."""

    tool: str
    calls: int
    failures: int
    success_rate: float
    typical_errors: list[tuple[str, int]]


@dataclass(frozen=True)
class Recommendation:
    """What the critic advises, with the issue it answers and the tool it is about ("" when
    it is about no one tool, e.g. low self-rated satisfaction)."""

    id: str
    text: str
    issue: str
    tool: str


@dataclass(frozen=True)
class CriticSection:
    """The report's critic section."""

    tools: list[ToolReport] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    recommendations: list[Recommendation] = field(default_factory=list)
    satisfaction: float | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON-ready, with the keys docs/evolution.md documents."""
        return {
            "tools": [
                {**asdict(t), "typical_errors": [list(e) for e in t.typical_errors]}
                for t in self.tools
            ],
            "issues": list(self.issues),
            "recommendations": [asdict(r) for r in self.recommendations],
            "satisfaction": self.satisfaction,
        }


def recommendation_id(text: str) -> str:
    """The stable id of a recommendation: a digest of its text."""
    return "r" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def recommendations_of(report: CriticReport) -> list[Recommendation]:
    """The report's recommendations with their ids, issues and tools. The critic gives one
    recommendation per issue, in the same order; a tool's starts with `<tool>: `."""
    paired = len(report.issues) == len(report.recommendations)
    names = sorted((t.tool for t in report.tools), key=len, reverse=True)
    found = []
    for index, text in enumerate(report.recommendations):
        tool = next((name for name in names if text.startswith(f"{name}: ")), "")
        issue = report.issues[index] if paired else ""
        found.append(Recommendation(recommendation_id(text), text, issue, tool))
    return found


def critic_section(store: Store) -> CriticSection:
    """The critic's section of the report (on the store's thread): the tools, worst first."""
    report = critic_report(store)
    tools = [
        ToolReport(s.tool, s.calls, s.failures, round(s.success_rate, 3), list(s.recurring_errors))
        for s in sorted(report.tools, key=lambda s: (s.success_rate, s.tool))
    ]
    return CriticSection(
        tools, list(report.issues), recommendations_of(report), report.satisfaction
    )


def find_recommendation(store: Store, key: str) -> Recommendation | None:
    """The current recommendation whose id is `key` (or starts with it, when only one does)."""
    key = key.strip().lower()
    if not key:
        return None
    current = recommendations_of(critic_report(store))
    exact = [r for r in current if r.id == key]
    if exact:
        return exact[0]
    prefixed = [r for r in current if r.id.startswith(key)]
    return prefixed[0] if len(prefixed) == 1 else None


async def propose_recommendation(deps: PipelineDeps, out: Outbox, key: str, by: str) -> str:
    """Turn the critic's recommendation `key` into a proposal through the normal path (the
    analysis, the gate, procedural memory, the owner's alert); what happened, in one line."""
    from omega.evolution.gaps import propose  # it imports the gate: only when needed

    store = deps.store
    found = await store.call(find_recommendation, store, key)
    if found is None:
        return f"No current recommendation {key!r} (see `omega evolution report`)."
    await store.call(
        store.audit,
        AuditEntry(
            channel="evolution",
            sender_id="owner",
            status="ok",
            event="recommendation:proposed",
            input_text=f"{found.id} {found.text}"[:2000],
            detail=f"cause: {by}\nissue: {found.issue}"[:8000],
        ),
    )
    advice = found.text.removeprefix(f"{found.tool}: ") if found.tool else found.text
    subject = f"the tool {found.tool}" if found.tool else "Omega's own work"
    filed = await propose(
        deps,
        out,
        title=f"Critic recommendation for {subject}",
        description=found.issue or found.text,
        plan=advice[0].upper() + advice[1:],
        goal=f"use the tool {found.tool} without failing" if found.tool else found.text,
        source="critic",
        words="tool critic",  # derived from tool errors: quoted, never the owner's words
        evidence=(f"critic recommendation {found.id}, proposed by {by}",),
    )
    if filed is None:
        return f"The analysis of {found.id} gave no valid proposal; nothing was filed."
    proposal = await store.call(ProposalStore(store).get, filed.proposal.id) or filed.proposal
    state = {"new": "filed", "previously_rejected": "was rejected before"}.get(
        filed.outcome, filed.outcome
    )
    return (
        f"Proposal #{proposal.id} ({proposal.kind} {proposal.name}) {state} from {found.id}; "
        f"gate: {proposal.gate_action}, status: {proposal.status}."
    )
