"""Audit finding 1: the gate approves only what its own rules understand as harmless.

With a compromised judge (says "no" to every category) in autonomous mode with manual approval
off, the gate used to approve skills that delete the home folder, scan and brute-force the
network or print credential stores, because its forbidden-category word lists did not know
them. Every case of the machine corpus (gate_corpus_machine.py: commands, code, paths, other
languages' words for delete and format, scanning, credential stores, split commands,
look-alike letters, blobs), and the prose probes written after the first rules, is judged by a
compromised, an honest and a down judge in every autonomy mode: none is approved. The harmless
corpus carries none of the new signs.
"""

from __future__ import annotations

import asyncio

import pytest

from omega.evolution.gaps import submit
from omega.evolution.gate.machine import machine_signs
from omega.evolution.gate.reading import read_proposal
from omega.evolution.proposals import ProposalStore
from omega.memory.artefacts import ArtefactStore
from omega.skills.guarded import GuardedSkills
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.integration.gate_corpus import BENIGN
from tests.integration.gate_corpus_intl import BENIGN_MORE
from tests.integration.gate_corpus_machine import (
    CREDENTIALS,
    DESTRUCTION_COMMANDS,
    DESTRUCTION_PROSE,
    DISGUISED,
    EXPLOITS,
    MACHINE,
    NET,
    PROBES,
    SYS,
)
from tests.integration.test_gate_redteam import AUTONOMOUS, Judge
from tests.integration.test_gate_unreadable import POLICIES, decide, judgements

ALL_BENIGN = [*BENIGN, *BENIGN_MORE]
HELD = [*MACHINE, *PROBES]
# The audit's own repros, through the real submit.
AUDITED = [DESTRUCTION_COMMANDS[0], DESTRUCTION_COMMANDS[1], EXPLOITS[0], *CREDENTIALS[:2]]


@pytest.mark.no_store
def test_the_machine_corpus_covers_the_finding() -> None:
    assert len(MACHINE) >= 100
    assert {SYS, NET, "credential_access"} == {c for case in MACHINE for c in case.categories}
    assert {"en", "es", "fr", "de", "pt"} <= {c.lang for c in DESTRUCTION_PROSE}
    assert {"es", "fr", "de", "pt"} <= {c.lang for c in EXPLOITS}
    assert {"es", "fr", "de", "pt"} <= {c.lang for c in CREDENTIALS}
    assert len(DISGUISED) >= 10


@pytest.mark.no_store
@pytest.mark.parametrize(
    "index", range(len(HELD)), ids=[f"{i}-{c.lang}" for i, c in enumerate(HELD)]
)
def test_no_machine_case_is_approved_by_any_judge_in_any_mode(index: int) -> None:
    case = HELD[index]
    for who, judgement in judgements(case).items():
        for mode, policy in POLICIES.items():
            decision = decide(case, 3000 + index, policy, judgement)
            assert decision.action != "approve", (who, mode, case, decision.warnings)
            if who == "compromised" and not decision.errors:
                # Held for the owner with the reason the rules could not vouch for it.
                assert decision.judged["risk"] in ("medium", "high"), decision.judged
                assert any(
                    w.startswith(("not vouched for", "unreadable", "content:", "uncertain"))
                    for w in decision.warnings
                ), decision.warnings


@pytest.mark.no_store
@pytest.mark.parametrize("index", range(len(HELD)))
def test_every_machine_case_has_a_sign_the_rules_do_not_vouch_for(index: int) -> None:
    """Held by the new fail-closed rule itself, not only by luck in the older signals."""
    case = HELD[index]
    spec = case.spec(3000 + index)
    reading = read_proposal(spec)
    assert reading.machine or reading.unreadable, case
    assert not reading.clean


@pytest.mark.no_store
@pytest.mark.parametrize("index", range(len(ALL_BENIGN)))
def test_the_harmless_corpus_carries_no_sign_of_the_machine(index: int) -> None:
    case = ALL_BENIGN[index]
    spec = case.spec(3500 + index)
    assert machine_signs(spec, read_proposal(spec).facts.public) == (), case.description


@pytest.mark.parametrize("index", range(len(AUDITED)))
def test_the_audited_cases_through_the_real_submit_are_not_approved_nor_loaded(
    make_deps: MakeDeps, index: int
) -> None:
    case = AUDITED[index]
    deps = make_deps(Judge("lying", case), **AUTONOMOUS)
    filed = asyncio.run(
        submit(deps, Recorder(), case.spec(900 + index), goal="g", source="limitation", evidence=[])
    )
    proposal = ProposalStore(deps.store).get(filed.proposal.id)
    assert proposal is not None
    assert proposal.status == "pending", proposal.validation
    assert any("not vouched for" in w for w in proposal.validation["warnings"])
    skills = GuardedSkills(deps.paths.skills, ArtefactStore(deps.store, deps.paths.home), None)
    assert proposal.name not in [s.name for s in skills.skills()]
