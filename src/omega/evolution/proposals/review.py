"""What an approval would load, shown in full before the owner decides.

For a skill: the SKILL.md the approval writes. For a tool: the file in $OMEGA_HOME/tools/ the
approval would pin (its whole content and sha256), or a note that there is none, and the command
that approves exactly that content (the approval names its sha256, so a file swapped after the
review is refused). For a lesson: the lesson and the skill it joins. Each file says whether it
already exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from omega.evolution.proposals.procedural import Proposal
from omega.memory.artefacts import MAX_FILE_BYTES, file_digest
from omega.paths import OmegaPaths

# The fewest hex characters of a reviewed sha256 an approval accepts: 64 bits, which no one
# who plants two files in tools/ can make a second one match by trying.
DIGEST_CHARS = 16


@dataclass(frozen=True)
class ReviewFile:
    """One file an approval would write or load; `confirm`: the approval pins it as it is on
    disk, so it must name its sha256 (`approve_command`)."""

    path: Path
    exists: bool
    sha256: str
    content: str
    note: str
    confirm: bool = False


def approve_command(proposal_id: int, digest: str) -> str:
    """How the owner approves a proposal whose review showed `digest` (its first DIGEST_CHARS
    hex characters), in chat and from the shell."""
    short = digest[:DIGEST_CHARS]
    return (
        f"/approve {proposal_id} {short} [notes] in chat, or "
        f"`omega proposals approve {proposal_id} --sha256 {short}`"
    )


def skill_markdown(spec: dict[str, object]) -> str:
    """The SKILL.md of an approved skill proposal: frontmatter plus its instructions."""
    front: dict[str, object] = {"name": spec["name"], "description": spec["description"]}
    raw = spec.get("trigger_phrases", [])
    triggers = [str(t).strip() for t in raw if str(t).strip()] if isinstance(raw, list) else []
    if triggers:
        front["triggers"] = "|".join(triggers)
    body = str(spec.get("content") or f"# {spec['name']}\n\n{spec['description']}\n").strip()
    return (
        "---\n"
        + yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
        + "---\n\n"
        + body
        + "\n"
    )


def review_files(paths: OmegaPaths, proposal: Proposal) -> list[ReviewFile]:
    """The files approving this proposal would write or pin."""
    if proposal.kind == "skill":
        folder = paths.skills / proposal.name
        text = skill_markdown(proposal.spec)
        exists = folder.exists()
        note = (
            "a folder of this name already exists (not written by Omega's review); approval "
            "will be refused until it is removed"
            if exists
            else "approval writes this file and pins it"
        )
        return [ReviewFile(folder / "SKILL.md", exists, file_digest(text.encode()), text, note)]
    if proposal.kind == "tool":
        path = paths.tools / f"{proposal.name}.py"
        try:
            data = path.read_bytes()
        except OSError:
            return [
                ReviewFile(
                    path,
                    False,
                    "",
                    "",
                    "does not exist: approval records the spec only; nothing loads until the "
                    "owner installs a file with `omega tools add`",
                )
            ]
        content = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        note = (
            "EXISTS ALREADY and was not written by the owner through Omega: approving pins "
            "exactly this content (by the sha256 the approval names) and Omega will run it"
        )
        return [ReviewFile(path, True, file_digest(data), content, note, confirm=True)]
    return []


def render_review(paths: OmegaPaths, proposal: Proposal) -> str:
    """The full review text of a proposal: facts, gate verdict, then every file in full."""
    lines = [
        f"#{proposal.id} {proposal.kind} {proposal.name} [{proposal.status}]",
        f"description: {proposal.description}",
        f"goal: {proposal.goal or '-'}",
        f"source: {proposal.source}",
        f"gate: {json.dumps(proposal.validation, ensure_ascii=False)}",
    ]
    if proposal.evidence:
        lines.append("evidence:\n" + "\n".join(f"  - {e}" for e in proposal.evidence))
    if proposal.reviewed_by:
        lines.append(f"review by {proposal.reviewed_by}: {proposal.reviewer_notes}")
    if proposal.kind == "lesson":
        lines.append(
            f"lesson for skill {proposal.spec.get('skill')!r} (for everyone once approved):\n"
            f"  {proposal.spec.get('content', '')}"
        )
    lines.append("spec:\n" + json.dumps(proposal.spec, indent=2, ensure_ascii=False))
    for item in review_files(paths, proposal):
        lines.append(
            f"--- file {item.path} (exists: {'yes' if item.exists else 'no'}; "
            f"sha256: {item.sha256 or '-'})\n    {item.note}"
        )
        if item.content:
            lines.append(item.content.rstrip("\n"))
            lines.append(f"--- end of {item.path.name}")
        if item.confirm and proposal.status == "pending":
            lines.append(
                "To approve exactly this content: " + approve_command(proposal.id, item.sha256)
            )
    return "\n".join(lines)
