"""Review and registration: what approving or rejecting a proposal does.

Approving a skill writes its SKILL.md (Markdown instructions only) and pins the folder by
content hash. Approving a tool records its spec; an existing file in $OMEGA_HOME/tools/ is
pinned only by the owner's approval (the review showed its content and hash), never by the
gate's. In assisted mode a tool's scaffold is written for a human when its proposal is filed
(evolution.analysis.submit), for the review; with `auto_generate_scaffolds` at approval. It is
never imported or run, and never overwritten once there. Approving a lesson makes it a lesson
for everyone. Nothing here is reachable from model output: only the owner's commands and the
gate (autonomous mode, no manual approval required, low risk) call these functions.
"""

from __future__ import annotations

import difflib
import logging
from pathlib import Path

from omega.config import Config
from omega.errors import OmegaError
from omega.evolution.proposals.procedural import (
    ALL_RUNS,
    FRAGMENT_RUN_KINDS,
    GLOBAL,
    Proposal,
    ProposalStore,
)
from omega.evolution.proposals.review import skill_markdown
from omega.evolution.proposals.scaffold import scaffold_text
from omega.memory.artefacts import ArtefactStore
from omega.memory.audit import AuditEntry
from omega.memory.store import Store
from omega.paths import OmegaPaths, write_private

log = logging.getLogger(__name__)
GATE = "gate"

__all__ = ["ReviewError", "approve", "reject"]


class ReviewError(OmegaError, ValueError):
    """A review that cannot be carried out (unknown id, not pending, name taken)."""


def review_audit(store: Store, event: str, what: str, by: str, detail: str) -> None:
    """The audit row of an owner's review decision (approval, rejection, fragment change)."""
    store.audit(
        AuditEntry(
            channel="review",
            sender_id=by,
            status="ok",
            event=event,
            input_text=what[:2000],
            detail=f"cause: {by}\n{detail}"[:8000],
        )
    )


def approve(
    store: Store,
    paths: OmegaPaths,
    config: Config,
    proposal_id: int,
    notes: str,
    by: str,
    promote_notes: bool = False,
) -> str:
    """Approve a pending proposal and register what it describes; return a summary line."""
    repo = ProposalStore(store)
    proposal = repo.get(proposal_id)
    if proposal is None or proposal.status != "pending":
        raise ReviewError(f"no pending proposal #{proposal_id}")
    if proposal.kind == "skill" and (paths.skills / proposal.name).exists():
        raise ReviewError(
            f"a folder skills/{proposal.name} already exists and was not written by this "
            "review; remove it (or install it yourself with `omega skills add`)"
        )
    if proposal.kind == "lesson" and by == GATE:
        raise ReviewError("lessons are approved by the owner only")
    decided = repo.decide(proposal_id, "approved", notes, by)
    assert decided is not None
    done = _register(decided, store, paths, config, by)
    review_audit(
        store, "proposal:approved", f"#{proposal_id} {proposal.kind} {proposal.name}", by, done
    )
    if config.logging.log_registrations:
        log.info("proposal #%d approved by %s: %s", proposal_id, by, done.splitlines()[0])
    if promote_notes and notes.strip():
        # One fragment for every run it feeds; its source names the proposal, whose reviewer
        # and decision time say who promoted it and when (`omega fragments show`).
        fragment_id = repo.add_fragment(ALL_RUNS, notes, f"proposal:{proposal_id} review notes")
        review_audit(
            store,
            "fragment:promoted",
            f"fragment #{fragment_id}: {notes.strip()}",
            by,
            f"from proposal #{proposal_id}; feeds {', '.join(FRAGMENT_RUN_KINDS)}",
        )
    return f"Approved #{proposal_id} ({proposal.kind} {proposal.name}). {done.splitlines()[0]}"


def _register(proposal: Proposal, store: Store, paths: OmegaPaths, config: Config, by: str) -> str:
    artefacts = ArtefactStore(store, paths.home)
    if proposal.kind == "lesson":
        skill = str(proposal.spec.get("skill", ""))
        text = str(proposal.spec.get("content", ""))
        ProposalStore(store).add_lesson(skill, text, GLOBAL, f"proposal:{proposal.id}")
        return f"Lesson added to skill {skill} for everyone: {text}"
    if proposal.kind == "skill":
        folder = paths.skills / proposal.name
        folder.mkdir(parents=True)
        target = folder / "SKILL.md"
        text = skill_markdown(proposal.spec)
        write_private(target, text)
        pin = artefacts.pin(
            "skill", proposal.name, folder, origin="approved", by=by, proposal_id=proposal.id
        )
        diff = "".join(
            difflib.unified_diff(
                [], text.splitlines(keepends=True), fromfile="/dev/null", tofile=f"b/{target.name}"
            )
        )
        return f"Skill written to {target} (sha256 {pin.sha256[:16]}).\n{diff}"
    done = "Tool spec recorded."
    code = paths.tools / f"{proposal.name}.py"
    if code.is_file() and by != GATE:
        pin = artefacts.pin(
            "tool", proposal.name, code, origin="approved", by=by, proposal_id=proposal.id
        )
        done += f" Pinned {code.name} as shown in the review (sha256 {pin.sha256})."
    elif code.is_file():
        done += f" {code.name} exists but the gate pins no code: it will not load."
    else:
        done += " Install an implementation with `omega tools add` to use it."
    if config.evolution.autonomy_mode == "assisted" or config.evolution.auto_generate_scaffolds:
        done += f" Scaffold for a human at {write_scaffold(paths, proposal)}."
    return done


def write_scaffold(paths: OmegaPaths, proposal: Proposal) -> Path:
    """The tool's scaffold for a human under scaffolds/ (written when missing: one a human
    has started implementing is never overwritten); its path. In assisted mode it is written
    when the proposal is filed, for the review (spec 004 §3.6), and again only if removed."""
    scaffold = paths.scaffolds / f"{proposal.name}.py"
    if not scaffold.exists():
        paths.scaffolds.mkdir(parents=True, exist_ok=True)
        write_private(scaffold, scaffold_text(proposal.name, proposal.id, proposal.spec))
    return scaffold


def reject(store: Store, proposal_id: int, reason: str, by: str) -> str:
    """Reject a pending proposal; the reason is remembered so it is not proposed again."""
    if not reason.strip():
        raise ReviewError("a rejection needs a reason")
    decided = ProposalStore(store).decide(proposal_id, "rejected", reason, by)
    if decided is None:
        raise ReviewError(f"no pending proposal #{proposal_id}")
    review_audit(store, "proposal:rejected", f"#{proposal_id} {decided.name}", by, reason)
    return f"Rejected #{proposal_id} ({decided.name}): {reason.strip()}"
