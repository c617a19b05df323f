"""Procedural memory: proposals with their goal, evidence, gate decision and review; rejected
ones are remembered with their reasons so the same thing is not proposed again (judged by
similarity of name, description and instructions, whatever the new name or kind; a lesson by
its skill and its text), and similar pending ones merge instead of piling up, but only with the
same person's evidence: a gap seen with one person never lends its words to a proposal shown as
another's. A rejection holds back a new proposal only when the owner made it or it came from
the same scope (a person's gate-rejected proposal never suppresses the owner's or anyone
else's), and the owner hears of the first proposal it holds back. Learnings and skill lessons
are scoped to a person."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from omega.evolution.meaning import same_meaning
from omega.memory.audit import AuditEntry
from omega.memory.db import utc_now
from omega.memory.store import Store
from omega.text import literal

Kind = Literal["skill", "tool", "lesson"]
GLOBAL = "*"  # the scope of what everyone's prompts may recall (set only by the owner)
# The runs a prompt fragment may feed; a fragment of run kind ALL_RUNS feeds every one of them.
FRAGMENT_RUN_KINDS = ("introspection_evaluation", "limitation_analysis")
ALL_RUNS = "*"
_MAX_ID = 2**63  # SQLite's integers; a larger id names no row (and cannot be bound)
_FROM_PROPOSAL = re.compile(r"^proposal:(\d+)\b")
GATE = "gate"  # the reviewer name of the gate's own decisions; the owner's start with "owner"


@dataclass(frozen=True)
class Proposal:
    """One stored proposal."""

    id: int
    kind: str
    name: str
    description: str
    category: str
    spec: dict[str, Any]
    goal: str
    source: str
    evidence: list[str]
    status: str
    gate_action: str
    validation: dict[str, Any]
    reviewer_notes: str
    reviewed_by: str
    times_seen: int
    created_at: str
    decided_at: str | None
    scope: str = ""  # whose private evidence it carries: person:<channel>:<id>, "" the owner's


def _proposal(row: Any) -> Proposal:
    data = dict(row)
    for key in ("spec", "validation", "evidence"):
        data[key] = json.loads(data[key])
    return Proposal(**data)


def similarity_key(text: str) -> str:
    """Names that differ only in case, separators or plural 's' are the same proposal."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def similar_specs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two proposals are the same idea: same normalized name, or descriptions or
    instructions that share most of their words (a rename does not make a new proposal)."""
    name_a, name_b = similarity_key(str(a.get("name", ""))), similarity_key(str(b.get("name", "")))
    if name_a and name_a == name_b:
        return True
    return any(
        same_meaning(str(a.get(key) or ""), str(b.get(key) or ""))
        for key in ("description", "content")
    )


def _family(kind: str) -> str:
    return "lesson" if kind == "lesson" else "capability"


def _alike(kind: str, a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two proposals of one family are the same idea. Every lesson of a skill has the
    same name and description (`<skill>-lesson`), so lessons are alike only when they are for
    the same skill and their texts say the same thing."""
    if _family(kind) != "lesson":
        return similar_specs(a, b)
    if str(a.get("skill", "")) != str(b.get("skill", "")):
        return False
    text_a, text_b = str(a.get("content") or ""), str(b.get("content") or "")
    return " ".join(text_a.lower().split()) == " ".join(text_b.lower().split()) or same_meaning(
        text_a, text_b
    )


def owner_decided(proposal: Proposal) -> bool:
    """Whether the owner (any surface: `owner (cli)`, `owner (web)`, `owner (<channel>:<id>)`)
    made the decision on a proposal, rather than the gate."""
    return proposal.reviewed_by == "owner" or proposal.reviewed_by.startswith("owner ")


def rejection_counts(rejected: Proposal, scope: str) -> bool:
    """Whether an earlier rejection holds back a similar new proposal of `scope`: when the
    owner rejected it, or it came from the same scope. A gate rejection of one person's
    proposal says nothing about the owner's or another person's idea."""
    return owner_decided(rejected) or rejected.scope == scope


def scope_of(channel: str, sender_id: str) -> str:
    """The scope key of one person."""
    return f"{channel}:{sender_id}"


@dataclass(frozen=True)
class Fragment:
    """One prompt fragment and where it came from."""

    id: int
    run_kind: str
    text: str
    source: str
    active: bool
    created_at: str
    proposal_id: int | None  # the proposal whose review notes it is, if any
    reviewed_by: str  # who approved that proposal and promoted its notes

    @property
    def feeds(self) -> tuple[str, ...]:
        """The runs whose prompts it is injected into while active."""
        return FRAGMENT_RUN_KINDS if self.run_kind == ALL_RUNS else (self.run_kind,)


def _fragment(row: Any) -> Fragment:
    match = _FROM_PROPOSAL.match(str(row["source"]))
    return Fragment(
        id=int(row["id"]),
        run_kind=str(row["run_kind"]),
        text=str(row["text"]),
        source=str(row["source"]),
        active=bool(row["active"]),
        created_at=str(row["created_at"]),
        proposal_id=int(match.group(1)) if match else None,
        reviewed_by=str(row["reviewed_by"] or ""),
    )


# A fragment's row with the reviewer of the proposal it came from (source `proposal:<id> ...`).
_FRAGMENT_SELECT = (
    "SELECT f.*, p.reviewed_by FROM prompt_fragments f LEFT JOIN proposals p "
    "ON f.source = 'proposal:' || p.id OR f.source LIKE 'proposal:' || p.id || ' %'"
)


@dataclass(frozen=True)
class Filed:
    """What happened to a proposal handed to procedural memory."""

    proposal: Proposal
    outcome: Literal["new", "merged", "previously_rejected"]


class ProposalStore:
    """The proposals, prompt_fragments and learnings tables; call on the db thread."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def file(
        self,
        kind: Kind,
        spec: dict[str, Any],
        *,
        goal: str,
        source: str,
        evidence: list[str],
        gate: dict[str, Any],
        scope: str = "",
    ) -> Filed:
        """Store a new proposal, or merge it into a similar pending one of the same `scope`
        (whose private evidence it carries), or refuse it when a similar one was rejected
        before by the owner or from the same scope (the earlier rejection is returned, counted
        as seen again, and the owner is told the first time it holds one back)."""
        alike = [
            p
            for p in self.find()
            if _family(p.kind) == _family(kind) and _alike(kind, p.spec, spec)
        ]
        for existing in alike:
            if existing.status == "rejected" and rejection_counts(existing, scope):
                return Filed(self._held_back(existing, kind, spec, scope), "previously_rejected")
        for existing in alike:
            # Evidence is merged only within one person's scope: across people it would show
            # one person's words in a proposal filed as another's.
            if existing.status == "pending" and existing.kind == kind and existing.scope == scope:
                with self.store.transaction() as conn:
                    conn.execute(
                        "UPDATE proposals SET times_seen = times_seen + 1, evidence = ? "
                        "WHERE id = ?",
                        (json.dumps((existing.evidence + evidence)[-20:]), existing.id),
                    )
                merged = self.get(existing.id)
                assert merged is not None
                return Filed(merged, "merged")
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO proposals (kind, name, description, category, spec, goal, source, "
                "evidence, gate_action, validation, created_at, scope) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    kind,
                    str(spec.get("name", "")),
                    str(spec.get("description", "")),
                    str(spec.get("category", "other")),
                    json.dumps(spec),
                    goal,
                    source,
                    json.dumps(evidence[-20:]),
                    gate.get("action", ""),
                    json.dumps(gate),
                    utc_now(),
                    scope,
                ),
            )
            new_id = int(cursor.lastrowid or 0)
        stored = self.get(new_id)
        assert stored is not None
        return Filed(stored, "new")

    def _held_back(
        self, rejected: Proposal, kind: str, spec: dict[str, Any], scope: str
    ) -> Proposal:
        """Count a proposal held back by an earlier rejection on that rejection and audit it;
        the first time a rejection holds one back, keep an alert for the owner naming it
        (later ones are counted and audited only: a person repeating a rejected idea cannot
        flood the owner). The rejection as it is now."""
        name = literal(str(spec.get("name", "")))
        who = "you" if owner_decided(rejected) else f"the {rejected.reviewed_by or GATE}"
        whose = f"a gap seen with {literal(scope)}" if scope else "your or Omega's own gap"
        subject = f"#{rejected.id} {rejected.name}"
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE proposals SET times_seen = times_seen + 1 WHERE id = ?", (rejected.id,)
            )
            told = conn.execute(
                "SELECT 1 FROM audit_log WHERE event = 'proposal:held_back' AND input_text = ? "
                "LIMIT 1",
                (subject,),
            ).fetchone()
            self.store.audit(
                AuditEntry(
                    channel="evolution",
                    sender_id=scope or "owner",
                    status="denied",
                    event="proposal:held_back",
                    input_text=subject,
                    detail=f"new {kind} proposal {name} from {scope or 'the owner'}; "
                    f"rejected by {rejected.reviewed_by}: {rejected.reviewer_notes}",
                )
            )
            if told is None:
                self.store.keep_owner_alert(
                    f"🧩 A {kind} proposal {name} (from {whose}) was not filed: it is like "
                    f"#{rejected.id} {literal(rejected.name)}, which {who} rejected: "
                    f"{literal(rejected.reviewer_notes, 300)}. See it with /proposals "
                    f"{rejected.id}; later ones like it are only counted there."
                )
        return self.get(rejected.id) or rejected

    def get(self, proposal_id: int) -> Proposal | None:
        """One proposal by id."""
        rows = self.store.query("SELECT * FROM proposals WHERE id = ?", (proposal_id,))
        return _proposal(rows[0]) if rows else None

    def find(self, status: str | None = None) -> list[Proposal]:
        """Proposals, oldest first, optionally of one status."""
        if status is None:
            rows = self.store.query("SELECT * FROM proposals ORDER BY id")
        else:
            rows = self.store.query(
                "SELECT * FROM proposals WHERE status = ? ORDER BY id", (status,)
            )
        return [_proposal(row) for row in rows]

    def decide(
        self, proposal_id: int, status: Literal["approved", "rejected"], notes: str, by: str
    ) -> Proposal | None:
        """Record the review of a pending proposal; None if it is not pending."""
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "UPDATE proposals SET status = ?, reviewer_notes = ?, reviewed_by = ?, "
                "decided_at = ? WHERE id = ? AND status = 'pending'",
                (status, notes.strip()[:2000], by, utc_now(), proposal_id),
            )
            if cursor.rowcount != 1:
                return None
        return self.get(proposal_id)

    def approved_names(self, kind: Kind) -> list[str]:
        """Names of approved proposals of a kind."""
        rows = self.store.query(
            "SELECT name FROM proposals WHERE kind = ? AND status = 'approved'", (kind,)
        )
        return [row["name"] for row in rows]

    # ---- prompt fragments and learnings -----------------------------------------------------

    def add_fragment(self, run_kind: str, text: str, source: str) -> int:
        """Promote guidance (e.g. review notes) into later prompts of this kind of run
        (`ALL_RUNS`: every run in FRAGMENT_RUN_KINDS)."""
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO prompt_fragments (run_kind, text, source, created_at) "
                "VALUES (?, ?, ?, ?)",
                (run_kind, text.strip()[:1000], source, utc_now()),
            )
            return int(cursor.lastrowid or 0)

    def fragments(self, run_kind: str) -> list[str]:
        """Active fragments for a kind of run (its own and those for all runs), oldest first."""
        rows = self.store.query(
            "SELECT text FROM prompt_fragments WHERE run_kind IN (?, ?) AND active = 1 ORDER BY id",
            (run_kind, ALL_RUNS),
        )
        return [row["text"] for row in rows]

    def list_fragments(self, include_inactive: bool = False) -> list[Fragment]:
        """Prompt fragments with their provenance, oldest first; active ones only by default."""
        where = "" if include_inactive else " WHERE f.active = 1"
        rows = self.store.query(f"{_FRAGMENT_SELECT}{where} ORDER BY f.id")
        return [_fragment(row) for row in rows]

    def fragment(self, fragment_id: int) -> Fragment | None:
        """One fragment by id, with its provenance (None for an id no row can have)."""
        if not 0 < fragment_id < _MAX_ID:
            return None
        rows = self.store.query(f"{_FRAGMENT_SELECT} WHERE f.id = ?", (fragment_id,))
        return _fragment(rows[0]) if rows else None

    def set_fragment_active(self, fragment_id: int, active: bool) -> bool:
        """Switch a fragment on or off; False when it does not exist or is already so."""
        if not 0 < fragment_id < _MAX_ID:
            return False
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "UPDATE prompt_fragments SET active = ? WHERE id = ? AND active != ?",
                (int(active), fragment_id, int(active)),
            )
            return cursor.rowcount == 1

    def add_learnings(self, agent: str, learnings: list[str], scope: str) -> None:
        """Keep what an introspection cycle learned, for the person it came from (`scope`)."""
        now = utc_now()
        with self.store.transaction() as conn:
            conn.executemany(
                "INSERT INTO learnings (agent, text, created_at, scope) VALUES (?, ?, ?, ?)",
                [(agent, text.strip()[:500], now, scope) for text in learnings if text.strip()],
            )

    def recent_learnings(self, scope: str, limit: int = 5) -> list[str]:
        """The latest learnings of this person or global ones, newest first."""
        rows = self.store.query(
            "SELECT text FROM learnings WHERE scope IN (?, ?) ORDER BY id DESC LIMIT ?",
            (scope, GLOBAL, limit),
        )
        return [row["text"] for row in rows]

    # ---- skill lessons -----------------------------------------------------------------------

    def add_lesson(self, skill: str, text: str, scope: str, source: str) -> bool:
        """Keep a lesson for a skill (never written into its SKILL.md); False if known."""
        text = " ".join(text.split())[:500]
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO skill_lessons (skill, text, scope, source, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (skill, text, scope, source, utc_now()),
            )
            return cursor.rowcount == 1

    def lessons(self, skill: str, scope: str, limit: int = 10) -> list[str]:
        """A skill's lessons for this person: global ones and their own, oldest first."""
        return [text for text, _ in self.lessons_with_source(skill, scope, limit)]

    def lessons_with_source(self, skill: str, scope: str, limit: int = 10) -> list[tuple[str, str]]:
        """(text, source) of a skill's lessons for this person, oldest first: `owner` (a
        turn answering the owner), `proposal:<id>` (the owner approved it) or another."""
        rows = self.store.query(
            "SELECT text, source FROM skill_lessons WHERE skill = ? AND scope IN (?, ?) "
            "ORDER BY id LIMIT ?",
            (skill, scope, GLOBAL, limit),
        )
        return [(str(row["text"]), str(row["source"] or "")) for row in rows]
