"""Prompt fragments: a promotion is one fragment that names its proposal and reviewer and feeds
every evaluation run; deactivating it (audited) keeps it out of the introspection prompt the
provider receives, reactivating brings it back."""

from __future__ import annotations

import asyncio
from datetime import UTC
from pathlib import Path

import pytest

from omega.evolution.proposals import (
    FragmentError,
    ProposalStore,
    approve,
    change_fragment,
    describe_fragment,
    fragment_history,
)
from omega.evolution.proposals.procedural import ALL_RUNS, FRAGMENT_RUN_KINDS
from omega.evolution.reflection import maybe_introspect
from omega.memory import Store
from omega.turn import PipelineDeps
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.unit.test_evolution import CALLS, EVALUATION, evaluator, evo_deps

NOTE = "Prefer patterns seen in at least three runs"


def promoted(deps: PipelineDeps) -> int:
    """A pending proposal approved by the owner with its notes promoted; the fragment's id."""
    filed = ProposalStore(deps.store).file(
        "tool",
        {"name": "pdf_text", "description": "Extract the text of PDF files for summaries"},
        goal="read PDFs",
        source="limitation",
        evidence=[],
        gate={"action": "manual_review"},
    )
    approve(
        deps.store,
        deps.paths,
        deps.config,
        filed.proposal.id,
        NOTE,
        "owner (cli)",
        promote_notes=True,
    )
    [fragment] = ProposalStore(deps.store).list_fragments()
    return fragment.id


def introspection_prompt(deps: PipelineDeps) -> str:
    """Run one introspection cycle and return the prompt the provider received."""
    deps.store.record_tool_calls(CALLS, agent="openai")
    asyncio.run(maybe_introspect(deps, Recorder(), "openai"))
    return str(deps.provider.prompts[-1])  # type: ignore[attr-defined]


def test_a_promotion_is_one_fragment_with_its_provenance(make_deps: MakeDeps) -> None:
    deps = evo_deps(make_deps, evaluator(EVALUATION), "passive")
    fragment_id = promoted(deps)
    repo = ProposalStore(deps.store)
    found = repo.fragment(fragment_id)
    assert found is not None
    assert (found.run_kind, found.proposal_id, found.reviewed_by) == (ALL_RUNS, 1, "owner (cli)")
    assert found.feeds == FRAGMENT_RUN_KINDS
    for run_kind in FRAGMENT_RUN_KINDS:
        assert repo.fragments(run_kind) == [NOTE]
    shown = describe_fragment(found, fragment_history(deps.store, fragment_id))
    assert "review notes of proposal #1, promoted by owner (cli)" in shown
    assert "Feeds: introspection_evaluation, limitation_analysis" in shown
    assert "promoted by owner (cli)" in shown.split("History:")[1]


def test_a_deactivated_fragment_leaves_the_introspection_prompt(make_deps: MakeDeps) -> None:
    deps = evo_deps(make_deps, evaluator(EVALUATION), "passive")
    fragment_id = promoted(deps)
    assert NOTE in introspection_prompt(deps)

    off = change_fragment(deps.store, fragment_id, False, "owner (telegram:1)")
    assert not off.active
    assert NOTE not in introspection_prompt(deps)
    assert ProposalStore(deps.store).list_fragments() == []
    assert [f.id for f in ProposalStore(deps.store).list_fragments(True)] == [fragment_id]

    change_fragment(deps.store, fragment_id, True, "owner (web)")
    assert NOTE in introspection_prompt(deps)
    history = fragment_history(deps.store, fragment_id)
    assert [(e.event, e.by) for e in history] == [
        ("fragment:promoted", "owner (cli)"),
        ("fragment:deactivated", "owner (telegram:1)"),
        ("fragment:reactivated", "owner (web)"),
    ]


def test_changing_an_unknown_or_unchanged_fragment_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        repo = ProposalStore(store)
        with pytest.raises(FragmentError, match="no prompt fragment #9"):
            change_fragment(store, 9, False, "owner")
        fragment_id = repo.add_fragment("limitation_analysis", "Name tools by verb", "owner")
        with pytest.raises(FragmentError, match="already active"):
            change_fragment(store, fragment_id, True, "owner")
        found = repo.fragment(fragment_id)
        assert found is not None and found.proposal_id is None
        assert found.feeds == ("limitation_analysis",)
        assert repo.fragments("introspection_evaluation") == []
        rows = store.query("SELECT COUNT(*) AS n FROM audit_log WHERE event LIKE 'fragment:%'")
        assert rows[0]["n"] == 0  # refused changes change nothing, so nothing is audited
    finally:
        store.close()


def test_the_fragments_command_takes_any_arguments_and_changes_only_what_it_names(
    isolated_env: Path,
) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from omega.app import bootstrap
    from omega.gateway.commands import Command, CommandContext, run_command
    from omega.skills import ProjectCatalog, SkillCatalog
    from omega.turn import local_owner_id
    from omega.types import IncomingMessage

    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    ctx = CommandContext(
        store=store,
        config=runtime.config,
        paths=runtime.paths,
        message=IncomingMessage("terminal", local_owner_id(), "x", assurance="local"),
        provider_name="openai",
        started_at=0.0,
        skills=SkillCatalog(runtime.paths.skills),
        projects=ProjectCatalog(runtime.paths.projects),
        timezone=UTC,
        role="owner",
    )
    repo = ProposalStore(store)
    fragment_id = repo.add_fragment(ALL_RUNS, NOTE, "test")
    words = st.sampled_from(["deactivate", "reactivate", "DEACTIVATE", "1", "²", "١", "9" * 30])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(words | st.text(max_size=12), max_size=3).map(" ".join))
    def check(args: str) -> None:
        before = repo.fragment(fragment_id)
        answer = asyncio.run(run_command(Command("fragments", args), ctx))
        assert isinstance(answer, str) and answer
        after = repo.fragment(fragment_id)
        assert before is not None and after is not None
        named = args.split()
        if before.active != after.active:  # only `deactivate 1` / `reactivate 1` switch it
            assert [w.lower() for w in named[:1]] in (["deactivate"], ["reactivate"])
            assert named[1:] == ["1"] and answer.endswith(NOTE)

    try:
        check()
    finally:
        store.close()
