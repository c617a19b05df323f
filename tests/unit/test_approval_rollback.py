"""An approval is one transaction with its registration (audit finding 5): when registering
fails, the proposal stays pending, nothing is left registered (no pin, no lesson, no fragment,
no folder on disk), the failure is audited and the owner is told; approving again works."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.app import bootstrap
from omega.evolution.proposals import ProposalStore, ReviewError, approve
from omega.memory import Store
from omega.memory.artefacts import ArtefactStore

SKILL = {"name": "weather-report", "description": "Report the weather.", "content": "Look."}
LESSON = {
    "name": "weather-lesson",
    "skill": "weather",
    "description": "A lesson for the skill weather",
    "content": "Give temperatures in Celsius.",
}


def broken(*args: object, **kwargs: object) -> None:
    raise OSError("disk full")


def events(store: Store) -> list[str]:
    return [str(row["event"]) for row in store.query("SELECT event FROM audit_log ORDER BY id")]


@pytest.mark.parametrize(
    ("kind", "spec", "fails"),
    [
        ("skill", SKILL, (ArtefactStore, "pin")),
        ("lesson", LESSON, (ProposalStore, "add_lesson")),
    ],
)
def test_a_registration_failure_leaves_the_proposal_pending(
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    spec: dict[str, str],
    fails: tuple[type, str],
) -> None:
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    repo = ProposalStore(store)
    filed = repo.file(kind, spec, goal="g", source="limitation", evidence=[], gate={})  # type: ignore[arg-type]
    with monkeypatch.context() as patch:
        patch.setattr(*fails, broken)
        with pytest.raises(ReviewError) as refused:
            approve(
                store,
                runtime.paths,
                runtime.config,
                filed.proposal.id,
                "short",
                "owner",
                promote_notes=True,
            )
    assert str(refused.value) == (
        f"approving #{filed.proposal.id} failed (OSError: disk full); nothing was registered "
        "and it is still pending"
    )
    proposal = repo.get(filed.proposal.id)
    assert proposal is not None and (proposal.status, proposal.reviewed_by) == ("pending", "")
    assert not (runtime.paths.skills / "weather-report").exists()
    assert store.query("SELECT * FROM artefacts") == []
    assert repo.lessons("weather", "*") == []
    assert repo.list_fragments(include_inactive=True) == []
    assert "proposal:approval_failed" in events(store)
    assert "proposal:approved" not in events(store)

    done = approve(
        store,
        runtime.paths,
        runtime.config,
        filed.proposal.id,
        "short",
        "owner",
        promote_notes=True,
    )
    assert done.startswith(f"Approved #{filed.proposal.id}")
    assert len(repo.list_fragments()) == 1
    store.close()
