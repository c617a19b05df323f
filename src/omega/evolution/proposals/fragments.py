"""Managing prompt fragments (guidance promoted from review notes): list, show, deactivate,
reactivate. The CLI (`omega fragments`), the owner's chat command (/fragments) and the web page
all call these functions, so none adds rules of its own; every change is audited with who made
it. A deactivated fragment is no longer injected into any prompt (ProposalStore.fragments)."""

from __future__ import annotations

from dataclasses import dataclass

from omega.errors import OmegaError
from omega.evolution.proposals.procedural import Fragment, ProposalStore
from omega.evolution.proposals.registration import review_audit
from omega.memory.store import Store

__all__ = [
    "FragmentError",
    "FragmentEvent",
    "change_fragment",
    "describe_fragment",
    "fragment_history",
    "fragment_line",
]


class FragmentError(OmegaError, ValueError):
    """A fragment change that cannot be made (unknown id, already in that state)."""


@dataclass(frozen=True)
class FragmentEvent:
    """One audited change of a fragment: promoted, deactivated or reactivated."""

    at: str
    event: str
    by: str
    detail: str


def audit_key(fragment_id: int) -> str:
    """How a fragment's audit rows start their input text (`fragment #3: ...`)."""
    return f"fragment #{fragment_id}:"


def change_fragment(store: Store, fragment_id: int, active: bool, by: str) -> Fragment:
    """Deactivate or reactivate a fragment and audit it; FragmentError when it is unknown or
    already in that state."""
    repo = ProposalStore(store)
    found = repo.fragment(fragment_id)
    if found is None:
        raise FragmentError(f"no prompt fragment #{fragment_id}")
    if not repo.set_fragment_active(fragment_id, active):
        state = "active" if active else "inactive"
        raise FragmentError(f"prompt fragment #{fragment_id} is already {state}")
    event = "fragment:reactivated" if active else "fragment:deactivated"
    review_audit(
        store,
        event,
        f"{audit_key(fragment_id)} {found.text}",
        by,
        f"feeds {', '.join(found.feeds)}",
    )
    changed = repo.fragment(fragment_id)
    assert changed is not None
    return changed


def fragment_history(store: Store, fragment_id: int) -> list[FragmentEvent]:
    """The audited changes of one fragment, oldest first."""
    rows = store.query(
        "SELECT created_at, event, sender_id, detail FROM audit_log "
        "WHERE event LIKE 'fragment:%' AND input_text LIKE ? ORDER BY id",
        (audit_key(fragment_id) + "%",),
    )
    return [
        FragmentEvent(row["created_at"], row["event"], row["sender_id"], row["detail"])
        for row in rows
    ]


def provenance(fragment: Fragment) -> str:
    """Where a fragment came from, in words."""
    if fragment.proposal_id is None:
        return f"source: {fragment.source or 'unknown'}"
    who = fragment.reviewed_by or "unknown reviewer"
    return f"review notes of proposal #{fragment.proposal_id}, promoted by {who}"


def fragment_line(fragment: Fragment) -> str:
    """One line of a listing: id, state, provenance, the runs it feeds, its text."""
    state = "active" if fragment.active else "inactive"
    text = " ".join(fragment.text.split())
    return (
        f"[{fragment.id}] {state}: {text[:160]} ({provenance(fragment)}, "
        f"{fragment.created_at[:16]}; feeds {', '.join(fragment.feeds)})"
    )


def describe_fragment(fragment: Fragment, history: list[FragmentEvent]) -> str:
    """Everything about one fragment: its text, provenance, the runs it feeds, its changes."""
    lines = [
        f"Prompt fragment #{fragment.id} ({'active' if fragment.active else 'inactive'})",
        f"Text: {fragment.text}",
        f"From: {provenance(fragment)}",
        f"Promoted: {fragment.created_at[:19]}",
        f"Feeds: {', '.join(fragment.feeds)}" + ("" if fragment.active else " (not now)"),
    ]
    if history:
        lines.append("History:")
        lines += [f"- {e.at[:19]} {e.event.split(':', 1)[1]} by {e.by}" for e in history]
    return "\n".join(lines)
