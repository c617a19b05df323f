"""Review and registration: what approving or rejecting a proposal does.

Approving a skill writes its SKILL.md (Markdown instructions only). Approving a tool records its
spec and, in assisted mode, writes a Python scaffold for a human to implement; the scaffold is
never imported or run. A human-implemented tool in $OMEGA_HOME/tools/ is loaded only when an
approved proposal names it. Nothing here is reachable from model output: only the owner's
commands and the gate (autonomous mode, low risk) call these functions.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import logging
from collections.abc import Callable
from typing import Any

import yaml

from omega.config import Config
from omega.evolution.procedural import Proposal, ProposalStore
from omega.memory.store import AuditEntry, Store
from omega.paths import OmegaPaths, write_private

log = logging.getLogger(__name__)
FRAGMENT_RUN_KINDS = ("introspection_evaluation", "limitation_analysis")


class ReviewError(ValueError):
    """A review that cannot be carried out (unknown id, not pending, name taken)."""


def skill_markdown(spec: dict[str, Any]) -> str:
    """The SKILL.md of an approved skill proposal: frontmatter plus its instructions."""
    front: dict[str, Any] = {"name": spec["name"], "description": spec["description"]}
    triggers = [str(t).strip() for t in spec.get("trigger_phrases", []) if str(t).strip()]
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


SCAFFOLD = '''"""Scaffold for the tool `{name}` proposed by Omega (proposal #{id}).

A template for a human to implement. Omega never imports or runs this file; copy it to
$OMEGA_HOME/tools/{name}.py when it is implemented and reviewed, and Omega will load it
because proposal #{id} is approved.

Description: {description}
Side effects: {side_effects}
Risk level: {risk}
"""

from __future__ import annotations

# Inputs (JSON Schema):
{schema}


def {name}(**kwargs: object) -> str:
    """{description}"""
    raise NotImplementedError("implement {name} and review it before use")
'''


def _audit(store: Store, event: str, what: str, by: str, detail: str) -> None:
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
    if proposal.kind == "skill":
        target = paths.skills / proposal.name / "SKILL.md"
        if target.exists():
            raise ReviewError(f"a skill named {proposal.name!r} already exists")
    decided = repo.decide(proposal_id, "approved", notes, by)
    assert decided is not None
    done = _register(decided, paths, config)
    _audit(store, "proposal:approved", f"#{proposal_id} {proposal.kind} {proposal.name}", by, done)
    if promote_notes and notes.strip():
        for run_kind in FRAGMENT_RUN_KINDS:
            repo.add_fragment(run_kind, notes, f"proposal:{proposal_id} review notes")
        _audit(store, "fragment:promoted", notes, by, f"from proposal #{proposal_id}")
    return f"Approved #{proposal_id} ({proposal.kind} {proposal.name}). {done.splitlines()[0]}"


def _register(proposal: Proposal, paths: OmegaPaths, config: Config) -> str:
    if proposal.kind == "skill":
        target = paths.skills / proposal.name / "SKILL.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        text = skill_markdown(proposal.spec)
        write_private(target, text)
        diff = "".join(
            difflib.unified_diff(
                [], text.splitlines(keepends=True), fromfile="/dev/null", tofile=f"b/{target.name}"
            )
        )
        return f"Skill written to {target}.\n{diff}"
    if config.evolution.autonomy_mode == "assisted":
        scaffold = paths.scaffolds / f"{proposal.name}.py"
        paths.scaffolds.mkdir(parents=True, exist_ok=True)
        spec = proposal.spec
        write_private(
            scaffold,
            SCAFFOLD.format(
                name=proposal.name,
                id=proposal.id,
                description=proposal.description,
                side_effects=", ".join(map(str, spec.get("side_effects", []))) or "none declared",
                risk=spec.get("risk_level", "medium"),
                schema="\n".join(
                    "# " + line
                    for line in json.dumps(spec.get("inputs", {}), indent=2).splitlines()
                ),
            ),
        )
        return f"Tool spec recorded; scaffold for a human at {scaffold}."
    return "Tool spec recorded; implement it in $OMEGA_HOME/tools/ to use it."


def reject(store: Store, proposal_id: int, reason: str, by: str) -> str:
    """Reject a pending proposal; the reason is remembered so it is not proposed again."""
    if not reason.strip():
        raise ReviewError("a rejection needs a reason")
    decided = ProposalStore(store).decide(proposal_id, "rejected", reason, by)
    if decided is None:
        raise ReviewError(f"no pending proposal #{proposal_id}")
    _audit(store, "proposal:rejected", f"#{proposal_id} {decided.name}", by, reason)
    return f"Rejected #{proposal_id} ({decided.name}): {reason.strip()}"


def approved_human_tools(store: Store, paths: OmegaPaths) -> dict[str, Callable[..., Any]]:
    """Human-implemented tools in $OMEGA_HOME/tools/ whose proposals are approved.

    A file without an approved proposal is ignored (and logged); so is one that fails to load.
    """
    approved = set(ProposalStore(store).approved_names("tool"))
    found: dict[str, Callable[..., Any]] = {}
    for path in sorted(paths.tools.glob("*.py")):
        name = path.stem
        if name not in approved:
            log.warning("tool file %s ignored: no approved proposal names it", path.name)
            continue
        spec = importlib.util.spec_from_file_location(f"omega_user_tools.{name}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)  # a human wrote and a human approved this file
        except Exception:
            log.exception("tool %s failed to load", name)
            continue
        function = getattr(module, name, None)
        if callable(function):
            found[name] = function
        else:
            log.warning("tool file %s has no function %s()", path.name, name)
    return found
