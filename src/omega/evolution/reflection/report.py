"""One picture of self-evolution for the owner over a period (`omega evolution report`, the web
page /evolution): what was learned, gaps opened and closed, proposals by state, what it cost,
the gate's decisions with their reasons, and the critic's view of the tools with its issues and
recommendations (evolution.recommend).

`evolution_report` only reads the database and returns a dataclass; the CLI renders it with
rich, as JSON (`as_json`, whose keys are stable: see REPORT_KEYS and docs/evolution.md) and the web
page with a template. Call it on the store's database thread.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from omega.evolution.proposals import ProposalStore
from omega.evolution.reflection.recommend import CriticSection, critic_section
from omega.memory.db import to_db_time
from omega.memory.store import Store

# The cost of self-evolution and of other background work, read from audit_log by `event`.
# An entry matches an event by its exact name, or, ending in ':', by prefix. `audit_as` names of
# new background calls (turn/ask.py::ask_provider) go here; an event in neither group is a reply
# to a person and not counted. Each provider call has its own row (memory.audit.CALL_KINDS):
# `analysis` per analysis call, `gate_judge` per model judgement; `proposal:` rows carry none.
SELF_EVOLUTION_EVENTS: tuple[str, ...] = tuple(
    "introspection analysis limitation_analysis critic gate_judge gate_judgement gate_judgment "
    "introspection: analysis: critic: gate: evolution: proposal:".split()
)
BACKGROUND_EVENTS: tuple[str, ...] = tuple(
    "summary facts plan_summary heartbeat digest background:".split()
)
# The top-level keys of `EvolutionReport.as_json()`; tests hold the report to them.
REPORT_KEYS = tuple("version period learned gaps proposals cost gate critic".split())
VERSION = 2  # 2: critic became {tools, issues, recommendations, satisfaction}


def cost_group(event: str) -> str | None:
    """'self_evolution', 'background' or None (not a background call) for an audit event."""
    for group, names in (
        ("self_evolution", SELF_EVOLUTION_EVENTS),
        ("background", BACKGROUND_EVENTS),
    ):
        if any(event == n or (n.endswith(":") and event.startswith(n)) for n in names):
            return group
    return None


@dataclass(frozen=True)
class Learned:
    """Something learned in the period: an introspection learning, a skill lesson or a
    promoted prompt fragment."""

    kind: str  # learning, lesson, fragment
    text: str
    scope: str  # whose conversations it is for ('*': everyone)
    source: str
    at: str
    active: bool = True


@dataclass(frozen=True)
class Gap:
    """A limitation opened or closed in the period."""

    id: int
    title: str
    source: str
    reported_by: str
    status: str
    created_at: str
    resolved_at: str | None
    resolved_by: str
    resolution: str


@dataclass(frozen=True)
class Cost:
    """The audited provider calls of one event in the period."""

    event: str
    group: str
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    unpriced: int  # calls whose price was unknown (cost_usd NULL)


@dataclass(frozen=True)
class GateVerdict:
    """The gate's decision on a proposal filed in the period, and what became of it."""

    proposal_id: int
    kind: str
    name: str
    source: str
    action: str
    errors: list[str]
    warnings: list[str]
    risk: str
    status: str
    reviewed_by: str
    reviewer_notes: str
    created_at: str


@dataclass(frozen=True)
class Decision:
    """An audited `proposal:*` event: filed, merged, approved, rejected, and by whom."""

    at: str
    event: str
    by: str
    status: str
    subject: str
    detail: str


@dataclass(frozen=True)
class EvolutionReport:
    """Everything the report shows, for one period."""

    since: str
    until: str
    learned: list[Learned]
    gaps_opened: list[Gap]
    gaps_closed: list[Gap]
    gaps_open_now: int
    proposals_filed: dict[str, int]  # filed in the period, by current state
    proposals_now: dict[str, int]  # every proposal, by state
    decided: dict[str, int]  # decided in the period, by decision
    cost: list[Cost]
    gate: list[GateVerdict]
    decisions: list[Decision]
    critic: CriticSection = field(default_factory=CriticSection)

    @property
    def gaps(self) -> list[Gap]:
        """Every gap opened or closed in the period, once each, by id."""
        return sorted(
            {g.id: g for g in self.gaps_opened + self.gaps_closed}.values(), key=lambda g: g.id
        )

    def totals(self, group: str) -> dict[str, float]:
        """Calls, tokens and cost summed over one cost group."""
        lines = [c for c in self.cost if c.group == group]
        return {
            "calls": sum(c.calls for c in lines),
            "input_tokens": sum(c.input_tokens for c in lines),
            "output_tokens": sum(c.output_tokens for c in lines),
            "cost_usd": round(sum(c.cost_usd for c in lines), 6),
        }

    def as_json(self) -> dict[str, Any]:
        """The report as JSON-ready data with stable keys (REPORT_KEYS at the top)."""
        return {
            "version": VERSION,
            "period": {"since": self.since, "until": self.until},
            "learned": {
                kind: [asdict(item) for item in self.learned if item.kind == kind]
                for kind in ("learning", "lesson", "fragment")
            },
            "gaps": {
                "opened": [asdict(g) for g in self.gaps_opened],
                "closed": [asdict(g) for g in self.gaps_closed],
                "open_now": self.gaps_open_now,
            },
            "proposals": {
                "filed": self.proposals_filed,
                "decided": self.decided,
                "now": self.proposals_now,
            },
            "cost": {
                "events": [asdict(c) for c in self.cost],
                "self_evolution": self.totals("self_evolution"),
                "background": self.totals("background"),
            },
            "gate": {
                "verdicts": [asdict(v) for v in self.gate],
                "decisions": [asdict(d) for d in self.decisions],
            },
            "critic": self.critic.as_json(),
        }


def since_days(days: int, now: datetime | None = None) -> datetime:
    """The start of a report over the last `days` days."""
    return (now or datetime.now(UTC)) - timedelta(days=days)


def evolution_report(
    store: Store, since: datetime, until: datetime | None = None
) -> EvolutionReport:
    """The report of self-evolution between `since` and `until` (default: now)."""
    start, end = to_db_time(since), to_db_time(until or datetime.now(UTC))
    window = (start, end)
    return EvolutionReport(
        since=start,
        until=end,
        learned=_learned(store, window),
        gaps_opened=_gaps(store, "created_at", window),
        gaps_closed=_gaps(store, "resolved_at", window),
        gaps_open_now=_count(store, "SELECT COUNT(*) AS n FROM limitations WHERE status = 'open'"),
        proposals_filed=_by_state(
            store,
            "SELECT status AS k, COUNT(*) AS n FROM proposals "
            "WHERE created_at >= ? AND created_at < ? GROUP BY status",
            window,
        ),
        proposals_now=_by_state(
            store, "SELECT status AS k, COUNT(*) AS n FROM proposals GROUP BY status", ()
        ),
        decided=_by_state(
            store,
            "SELECT status AS k, COUNT(*) AS n FROM proposals "
            "WHERE decided_at >= ? AND decided_at < ? GROUP BY status",
            window,
        ),
        cost=_cost(store, window),
        gate=_verdicts(store, window),
        decisions=_decisions(store, window),
        critic=critic_section(store),
    )


def _count(store: Store, sql: str) -> int:
    return int(store.query(sql)[0]["n"])


def _by_state(store: Store, sql: str, params: tuple[str, ...]) -> dict[str, int]:
    found = {str(row["k"]): int(row["n"]) for row in store.query(sql, params)}
    return {state: found.get(state, 0) for state in ("pending", "approved", "rejected")}


def _learned(store: Store, window: tuple[str, str]) -> list[Learned]:
    items = [
        Learned("learning", row["text"], row["scope"], f"introspection ({row['agent']})", row["at"])
        for row in store.query(
            "SELECT text, scope, agent, created_at AS at FROM learnings "
            "WHERE created_at >= ? AND created_at < ? ORDER BY id",
            window,
        )
    ]
    items += [
        Learned("lesson", f"{row['skill']}: {row['text']}", row["scope"], row["source"], row["at"])
        for row in store.query(
            "SELECT skill, text, scope, source, created_at AS at FROM skill_lessons "
            "WHERE created_at >= ? AND created_at < ? ORDER BY id",
            window,
        )
    ]
    items += [
        Learned("fragment", f.text, "*", f"#{f.id} {f.source}", f.created_at, f.active)
        for f in ProposalStore(store).list_fragments(include_inactive=True)
        if window[0] <= f.created_at < window[1]
    ]
    return items


def _gaps(store: Store, column: str, window: tuple[str, str]) -> list[Gap]:
    rows = store.query(
        "SELECT id, title, source, reported_by, status, created_at, resolved_at, resolved_by, "
        f"resolution FROM limitations WHERE {column} >= ? AND {column} < ? ORDER BY id",
        window,
    )
    return [Gap(**dict(row)) for row in rows]


def _cost(store: Store, window: tuple[str, str]) -> list[Cost]:
    # A row of a prefixed event (`proposal:new`) records something else and counts as a call
    # only when it carries a call's usage; a row of a plain event is one call.
    rows = store.query(
        "SELECT event, COUNT(*) AS calls, "
        "SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END) AS errors, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, "
        "SUM(COALESCE(cost_usd, 0)) AS cost_usd, "
        "SUM(CASE WHEN cost_usd IS NULL AND (input_tokens > 0 OR output_tokens > 0) "
        "THEN 1 ELSE 0 END) AS unpriced "
        "FROM audit_log WHERE created_at >= ? AND created_at < ? AND (instr(event, ':') = 0 "
        "OR input_tokens > 0 OR output_tokens > 0 OR cost_usd IS NOT NULL) "
        "GROUP BY event ORDER BY event",
        window,
    )
    lines = []
    for row in rows:
        group = cost_group(str(row["event"]))
        if group is None:
            continue
        lines.append(
            Cost(
                event=str(row["event"]),
                group=group,
                calls=int(row["calls"]),
                errors=int(row["errors"] or 0),
                input_tokens=int(row["input_tokens"] or 0),
                output_tokens=int(row["output_tokens"] or 0),
                cost_usd=round(float(row["cost_usd"] or 0.0), 6),
                unpriced=int(row["unpriced"] or 0),
            )
        )
    return lines


def _verdicts(store: Store, window: tuple[str, str]) -> list[GateVerdict]:
    rows = store.query(
        "SELECT id, kind, name, source, gate_action, validation, spec, status, reviewed_by, "
        "reviewer_notes, created_at FROM proposals "
        "WHERE created_at >= ? AND created_at < ? ORDER BY id",
        window,
    )
    verdicts = []
    for row in rows:
        gate = _json_object(row["validation"])
        spec = _json_object(row["spec"])
        verdicts.append(
            GateVerdict(
                proposal_id=int(row["id"]),
                kind=str(row["kind"]),
                name=str(row["name"]),
                source=str(row["source"]),
                action=str(row["gate_action"]),
                errors=[str(e) for e in gate.get("errors", []) or []],
                warnings=[str(w) for w in gate.get("warnings", []) or []],
                risk=str(gate.get("risk") or spec.get("risk_level") or ""),
                status=str(row["status"]),
                reviewed_by=str(row["reviewed_by"]),
                reviewer_notes=str(row["reviewer_notes"]),
                created_at=str(row["created_at"]),
            )
        )
    return verdicts


def _decisions(store: Store, window: tuple[str, str]) -> list[Decision]:
    rows = store.query(
        "SELECT created_at, event, sender_id, status, input_text, detail FROM audit_log "
        "WHERE event LIKE 'proposal:%' AND created_at >= ? AND created_at < ? ORDER BY id",
        window,
    )
    return [
        Decision(
            at=str(row["created_at"]),
            event=str(row["event"]),
            by=str(row["sender_id"]),
            status=str(row["status"]),
            subject=str(row["input_text"])[:300],
            # the first line: the gate's verdict, a reason, or what an approval registered
            detail=_first_line(str(row["detail"]).removeprefix(f"cause: {row['sender_id']}\n")),
        )
        for row in rows
    ]


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
