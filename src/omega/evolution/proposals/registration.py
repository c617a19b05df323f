"""Review and registration: what approving or rejecting a proposal does.

Approving a skill writes its SKILL.md (Markdown instructions only) and pins the folder by
content hash. Approving a tool records its spec; an existing file in $OMEGA_HOME/tools/ is
pinned only by the owner's approval, never by the gate's, and only as the review showed it: the
owner gives the sha256 the review showed (at least its first DIGEST_CHARS hex characters), the
file is read once, and those bytes are pinned only when they hash to it; a file swapped since
the review is refused, audited, and nothing is approved. In assisted mode a tool's scaffold is
written for a human when its proposal is filed (evolution.analysis.submit), for the review;
with `auto_generate_scaffolds` at approval. It is never imported or run, and never overwritten
once there. Approving a lesson makes it a lesson for everyone. The decision and the
registration are one transaction: a registration that fails leaves the proposal pending with
nothing registered. Nothing here is reachable from model output: only the owner's commands and
the gate (autonomous mode, no manual approval required, low risk) call these functions.
"""

from __future__ import annotations

import difflib
import logging
import re
import shutil
from pathlib import Path
from typing import NoReturn

from omega.config import Config
from omega.errors import OmegaError
from omega.evolution.proposals.procedural import (
    ALL_RUNS,
    FRAGMENT_RUN_KINDS,
    GATE,
    GLOBAL,
    Proposal,
    ProposalStore,
)
from omega.evolution.proposals.review import DIGEST_CHARS, approve_command, skill_markdown
from omega.evolution.proposals.scaffold import scaffold_text
from omega.memory.artefacts import (
    ArtefactStore,
    file_digest,
    files_digest,
    pinned_form,
)
from omega.memory.audit import AuditEntry, AuditStatus
from omega.memory.store import Store
from omega.paths import OmegaPaths, write_private

log = logging.getLogger(__name__)
_DIGEST = re.compile(rf"[0-9a-f]{{{DIGEST_CHARS},64}}")

__all__ = ["ReviewError", "approve", "reject"]


class ReviewError(OmegaError, ValueError):
    """A review that cannot be carried out (unknown id, not pending, name taken, a file
    changed since the review, a registration that failed)."""


def review_audit(
    store: Store, event: str, what: str, by: str, detail: str, status: AuditStatus = "ok"
) -> None:
    """The audit row of an owner's review decision (approval, rejection, fragment change), or
    of an approval refused (`denied`) or failed (`error`)."""
    store.audit(
        AuditEntry(
            channel="review",
            sender_id=by,
            status=status,
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
    sha256: str = "",
) -> str:
    """Approve a pending proposal and register what it describes; return a summary line.

    A tool proposal whose file already exists in tools/ is approved by the owner only with
    `sha256`, the digest the review showed (or at least its first DIGEST_CHARS hex
    characters): the file is read once and those bytes are pinned only when they hash to it;
    otherwise ReviewError, audited, and nothing changes. The decision and the registration are
    one transaction: when registering fails, ReviewError says so and the proposal stays
    pending with nothing registered."""
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
    reviewed = _reviewed_code(store, paths, proposal, sha256.strip().lower(), by)
    what = f"#{proposal_id} {proposal.kind} {proposal.name}"
    created: list[Path] = []
    try:
        with store.transaction():
            decided = repo.decide(proposal_id, "approved", notes, by)
            if decided is None:
                raise ReviewError(f"no pending proposal #{proposal_id}")
            done = _register(decided, store, paths, config, by, reviewed, created)
            review_audit(store, "proposal:approved", what, by, done)
            if promote_notes and notes.strip():
                # One fragment for every run it feeds; its source names the proposal, whose
                # reviewer and decision time say who promoted it and when (`omega fragments
                # show`).
                fragment_id = repo.add_fragment(
                    ALL_RUNS, notes, f"proposal:{proposal_id} review notes"
                )
                review_audit(
                    store,
                    "fragment:promoted",
                    f"fragment #{fragment_id}: {notes.strip()}",
                    by,
                    f"from proposal #{proposal_id}; feeds {', '.join(FRAGMENT_RUN_KINDS)}",
                )
    except ReviewError:
        _remove(created)
        raise
    except Exception as exc:
        # The transaction rolled back the decision and every row registered with it; what
        # was written to disk for it goes too, so approving again starts from the same place.
        _remove(created)
        failure = f"{type(exc).__name__}: {exc}"
        debug = log.isEnabledFor(logging.DEBUG)  # the traceback only when asked for
        log.warning("approving proposal #%d failed: %s", proposal_id, failure, exc_info=debug)
        review_audit(store, "proposal:approval_failed", what, by, failure, status="error")
        raise ReviewError(
            f"approving #{proposal_id} failed ({failure}); nothing was registered and it is "
            "still pending"
        ) from exc
    if config.logging.log_registrations:
        log.info("proposal #%d approved by %s: %s", proposal_id, by, done.splitlines()[0])
    return f"Approved #{proposal_id} ({proposal.kind} {proposal.name}). {done.splitlines()[0]}"


def _reviewed_code(store: Store, paths: OmegaPaths, proposal: Proposal, given: str, by: str) -> str:
    """The digest of the tool file an approval pins ('' when it pins none), from one read of
    the file, checked against the sha256 the owner gives (`given`, from the review): refused,
    and audited, when the owner gives none for a file that exists, or it does not match what
    is there now. A sha256 given for a skill must match the SKILL.md the review showed."""
    if given and not _DIGEST.fullmatch(given):
        raise ReviewError(
            f"the sha256 must be at least its first {DIGEST_CHARS} hex characters, as the "
            "review shows them"
        )
    again = (
        f"review it again (/proposals {proposal.id}, `omega proposals show {proposal.id}` or "
        "its web page)"
    )
    if proposal.kind == "skill":
        digest = file_digest(skill_markdown(proposal.spec).encode())
        if given and not digest.startswith(given):
            _refuse(
                store,
                proposal,
                by,
                f"SKILL.md is not what the review showed; {again}",
                given,
                digest,
            )
        return ""
    if proposal.kind != "tool" or by == GATE:
        return ""  # the gate pins no code; a lesson has no file
    code = paths.tools / f"{proposal.name}.py"
    try:
        data: bytes | None = code.read_bytes()  # the one read: these bytes are checked, pinned
    except FileNotFoundError:
        data = None
    except OSError as exc:
        _refuse(store, proposal, by, f"tools/{code.name} cannot be read ({exc})", given, "")
    if data is None and not given:
        return ""  # no file: the spec is recorded, nothing is pinned
    digest = file_digest(data) if data is not None else ""
    if not given:
        _refuse(
            store,
            proposal,
            by,
            f"tools/{code.name} exists and approving pins exactly the content the review "
            f"showed: {again}, then approve with the sha256 shown there "
            f"({approve_command(proposal.id, '<sha256>')})",
            given,
            digest,
        )
    if not digest.startswith(given):
        gone = "" if data is not None else ": it is gone"
        _refuse(
            store,
            proposal,
            by,
            f"tools/{code.name} changed since the review (which showed sha256 {given}){gone}; "
            f"nothing was approved or pinned: {again}",
            given,
            digest,
        )
    return digest


def _refuse(
    store: Store, proposal: Proposal, by: str, reason: str, given: str, digest: str
) -> NoReturn:
    """Audit an approval refused because of what is on disk, and raise ReviewError."""
    review_audit(
        store,
        "proposal:approval_refused",
        f"#{proposal.id} {proposal.kind} {proposal.name}",
        by,
        f"{reason}\nsha256 given: {given or '-'}\nsha256 now: {digest or '-'}",
        status="denied",
    )
    raise ReviewError(reason)


def _remove(created: list[Path]) -> None:
    """Take away what a failed approval wrote (a skill folder it created)."""
    for path in created:
        shutil.rmtree(path, ignore_errors=True)


def _register(
    proposal: Proposal,
    store: Store,
    paths: OmegaPaths,
    config: Config,
    by: str,
    reviewed: str,
    created: list[Path],
) -> str:
    """Register an approved proposal inside the caller's transaction; a folder it creates is
    added to `created` (removed by the caller if the approval fails)."""
    artefacts = ArtefactStore(store, paths.home)
    if proposal.kind == "lesson":
        skill = str(proposal.spec.get("skill", ""))
        text = str(proposal.spec.get("content", ""))
        ProposalStore(store).add_lesson(skill, text, GLOBAL, f"proposal:{proposal.id}")
        return f"Lesson added to skill {skill} for everyone: {text}"
    if proposal.kind == "skill":
        folder = paths.skills / proposal.name
        folder.mkdir(parents=True)
        created.append(folder)
        target = folder / "SKILL.md"
        text = skill_markdown(proposal.spec)
        write_private(target, text)
        pin = artefacts.pin(
            "skill",
            proposal.name,
            folder,
            origin="approved",
            by=by,
            proposal_id=proposal.id,
            # What this approval wrote, not what the folder holds by the time it is hashed.
            digest=files_digest({target.name: pinned_form(text.encode())}),
        )
        diff = "".join(
            difflib.unified_diff(
                [], text.splitlines(keepends=True), fromfile="/dev/null", tofile=f"b/{target.name}"
            )
        )
        return f"Skill written to {target} (sha256 {pin.sha256[:16]}).\n{diff}"
    done = "Tool spec recorded."
    code = paths.tools / f"{proposal.name}.py"
    if reviewed:
        pin = artefacts.pin(
            "tool",
            proposal.name,
            code,
            origin="approved",
            by=by,
            proposal_id=proposal.id,
            digest=reviewed,
        )
        done += f" Pinned {code.name} as shown in the review (sha256 {pin.sha256})."
    elif code.is_file() and by == GATE:
        done += f" {code.name} exists but the gate pins no code: it will not load."
    else:
        done += " Install an implementation with `omega tools add` to use it."
    if config.evolution.autonomy_mode == "assisted" or config.evolution.auto_generate_scaffolds:
        try:
            done += f" Scaffold for a human at {write_scaffold(paths, proposal)}."
        except (OSError, ValueError) as exc:  # for a human only: the approval stands
            log.warning("no scaffold for proposal #%d: %s", proposal.id, exc)
            done += f" No scaffold was written ({exc})."
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
