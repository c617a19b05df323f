"""`omega proposals`, `omega skills` and `omega tools`: the owner's side of self-evolution.

Review shows everything an approval would load (content and sha256). `skills add` and
`tools add` are how the owner installs something by hand: the files are copied under
$OMEGA_HOME and pinned by content hash, the only way besides approval that anything loads.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from omega.cli.support import fail, load_runtime, open_store
from omega.text import MAX_ROW_ID

proposals_app = typer.Typer(
    help="Proposed skills, tools and lessons, and their review.", no_args_is_help=True
)
skills_app = typer.Typer(help="Skills: what is loaded, and installing your own.")
tools_app = typer.Typer(help="Human-implemented tools: installing your own.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the sub-commands to the main `omega` app."""
    app.add_typer(proposals_app, name="proposals")
    app.add_typer(skills_app, name="skills")
    app.add_typer(tools_app, name="tools")


@proposals_app.command("list")
def proposals_list(
    status: Annotated[str, typer.Option(help="pending, approved, rejected or all")] = "all",
) -> None:
    """List proposals with their gate decision and status."""
    from omega.evolution.proposals import ProposalStore

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        items = ProposalStore(store).find(None if status == "all" else status)
    finally:
        store.close()
    if not items:
        typer.echo("No proposals.")
    for p in items:
        typer.echo(
            f"[{p.id}] {p.status:<8} {p.kind:<6} {p.name} — {p.description} "
            f"(gate: {p.gate_action}, seen {p.times_seen}x)"
        )


@proposals_app.command("show")
def proposals_show(
    proposal_id: Annotated[int, typer.Argument(min=1, max=MAX_ROW_ID, help="The proposal's id.")],
) -> None:
    """Everything about one proposal, with the full content and sha256 of every file
    approving it would write or load, and whether that file already exists."""
    from omega.evolution.proposals import ProposalStore, render_review

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        proposal = ProposalStore(store).get(proposal_id)
    finally:
        store.close()
    if proposal is None:
        fail(f"no proposal #{proposal_id}", code=1)
    typer.echo(render_review(runtime.paths, proposal))


@proposals_app.command("approve")
def proposals_approve(
    proposal_id: Annotated[int, typer.Argument(min=1, max=MAX_ROW_ID, help="The proposal's id.")],
    note: Annotated[str, typer.Option("--note", help="Review notes.")] = "",
    promote: Annotated[
        bool,
        typer.Option(
            "--promote", help="Also make the notes a prompt fragment for later evaluations."
        ),
    ] = False,
    sha256: Annotated[
        str,
        typer.Option(
            "--sha256",
            help="The sha256 `omega proposals show` gave for the tool file this approval pins "
            "(its first 16 hex characters are enough); needed when that file exists.",
        ),
    ] = "",
) -> None:
    """Approve a proposal: a skill's SKILL.md is written and pinned; a tool's spec is recorded.
    A tool file that already exists is pinned only as `omega proposals show` showed it: give
    its sha256 with --sha256; if the file changed since, nothing is approved."""
    from omega.evolution.proposals import ReviewError, approve

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        typer.echo(
            approve(
                store,
                runtime.paths,
                runtime.config,
                proposal_id,
                note,
                "owner (cli)",
                promote_notes=promote,
                sha256=sha256,
            )
        )
    except ReviewError as exc:
        fail(str(exc), code=1)
    finally:
        store.close()


@proposals_app.command("reject")
def proposals_reject(
    proposal_id: Annotated[int, typer.Argument(min=1, max=MAX_ROW_ID, help="The proposal's id.")],
    reason: Annotated[str, typer.Argument(help="Why (remembered, so it is not proposed again).")],
) -> None:
    """Reject a proposal, with the reason."""
    from omega.evolution.proposals import ReviewError, reject

    runtime = load_runtime()
    store = open_store(runtime)
    try:
        typer.echo(reject(store, proposal_id, reason, "owner (cli)"))
    except ReviewError as exc:
        fail(str(exc), code=1)
    finally:
        store.close()


def _copy_folder(source: Path, target: Path) -> None:
    """Copy regular files only (no symlinks), replacing what was at `target`."""
    if target.exists():
        shutil.rmtree(target)
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)


@skills_app.command("add")
def skills_add(
    source: Annotated[Path, typer.Argument(help="A skill folder (with SKILL.md) or SKILL.md.")],
) -> None:
    """Install a skill you trust: copied to $OMEGA_HOME/skills/<name>/ and pinned by hash.
    Given a folder already there, pins it as it is now."""
    from omega.memory.artefacts import ArtefactStore
    from omega.skills import SKILL_FILE, SkillError, bundled_skill_names, parse_skill

    folder = source.parent if source.name == SKILL_FILE else source
    try:
        skill = parse_skill((folder / SKILL_FILE).read_text(encoding="utf-8"), folder / SKILL_FILE)
    except (OSError, UnicodeDecodeError, SkillError) as exc:
        fail(f"not a skill: {exc}", code=1)
    if skill.name in bundled_skill_names():
        fail(f"{skill.name!r} is a bundled skill; choose another name", code=1)
    runtime = load_runtime()
    target = runtime.paths.skills / skill.name
    if folder.resolve() != target.resolve():
        _copy_folder(folder, target)
    store = open_store(runtime)
    try:
        pin = ArtefactStore(store, runtime.paths.home).pin(
            "skill", skill.name, target, origin="owner", by="owner (cli)"
        )
    finally:
        store.close()
    typer.echo(f"Installed skill {skill.name} at {target} (sha256 {pin.sha256}).")


@skills_app.command("list")
def skills_list() -> None:
    """Every skill folder and whether it loads: bundled, pinned, or refused (and why)."""
    from omega.memory.artefacts import ArtefactStore, artefact_digest
    from omega.skills import bundled_skill_names, load_skills
    from omega.skills.guarded import bundled_dir

    runtime = load_runtime()
    store = open_store(runtime)
    bundled = set(bundled_skill_names())
    missing = {skill.name: skill.missing for skill in load_skills(bundled_dir())}
    try:
        artefacts = ArtefactStore(store, runtime.paths.home)
        for name in sorted(bundled):
            needs = missing.get(name, ())
            state = f"not installed: needs {', '.join(needs)}" if needs else "installed"
            typer.echo(f"{name:<24} bundled (read-only, from the package), {state}")
        for folder in sorted(p for p in runtime.paths.skills.iterdir() if p.is_dir()):
            if folder.name in bundled or folder.name.startswith("."):
                continue
            digest = artefact_digest(folder)
            verdict = artefacts.verdict("skill", folder.name, folder, digest)
            state = f"NOT LOADED: {verdict}" if verdict else "pinned"
            typer.echo(f"{folder.name:<24} {state} (sha256 {digest[:16]})")
    finally:
        store.close()


@tools_app.command("add")
def tools_add(
    source: Annotated[Path, typer.Argument(help="A Python file defining <name>(...).")],
) -> None:
    """Install a tool you implemented and reviewed: copied to $OMEGA_HOME/tools/<name>.py and
    pinned by hash; it loads at the next start."""
    from omega.evolution.proposals import TOOL_NAME
    from omega.memory.artefacts import ArtefactStore

    name = source.stem
    if not TOOL_NAME.fullmatch(name) or not source.is_file():
        fail(f"{source} is not a file named <snake_case_name>.py", code=1)
    runtime = load_runtime()
    target = runtime.paths.tools / f"{name}.py"
    if source.resolve() != target.resolve():
        shutil.copyfile(source, target)
    store = open_store(runtime)
    try:
        pin = ArtefactStore(store, runtime.paths.home).pin(
            "tool", name, target, origin="owner", by="owner (cli)"
        )
    finally:
        store.close()
    typer.echo(f"Installed tool {name} at {target} (sha256 {pin.sha256}).")
