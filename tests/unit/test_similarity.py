"""`same_meaning` compares gaps by meaning (issue 28, point 4), measured on the labelled set in
similarity_pairs.py: precision (a false merge hides a gap) is held to a floor, recall is
printed; the word-overlap score it replaced is measured on the same set for comparison."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from omega.evolution.procedural import ProposalStore
from omega.evolution.similarity import concepts, same_meaning, similarity
from omega.memory.store import Store
from tests.unit.similarity_pairs import HELD_OUT, PAIRS, Pair

# Floors, documented in the README ("Self-evolution"): precision is what matters (a false
# merge hides a gap); recall says how many rewordings still count twice. Measured: labelled
# set 1.00 / 0.93, held-out set 1.00 / 0.57 (bench/similarity.py).
MIN_PRECISION = 0.95
MIN_RECALL = 0.85
MIN_HELD_OUT_PRECISION = 0.9


def measure(pairs: tuple[Pair, ...], judge: object = same_meaning) -> tuple[float, float]:
    """Precision and recall of `judge` on `pairs`."""
    assert callable(judge)
    said = [bool(judge(p.a, p.b)) for p in pairs]
    true_pos = sum(1 for p, s in zip(pairs, said, strict=True) if s and p.same)
    merged = sum(said)
    precision = true_pos / merged if merged else 1.0
    recall = true_pos / sum(p.same for p in pairs)
    return precision, recall


def word_overlap(a: str, b: str) -> bool:
    """The method this module replaced: word Jaccard >= 0.6 with a 3-word minimum."""
    left, right = (set(re.findall(r"[a-z0-9]+", t.lower())) for t in (a, b))
    return len(left) >= 3 and len(right) >= 3 and len(left & right) / len(left | right) >= 0.6


def test_the_labelled_set_is_large_and_balanced() -> None:
    kinds = {p.kind for p in PAIRS}
    assert len(PAIRS) >= 60 and kinds == {"paraphrase", "translation", "related", "unrelated"}
    assert 0.3 < sum(p.same for p in PAIRS) / len(PAIRS) < 0.7
    languages = " ".join(p.b for p in PAIRS if p.kind == "translation")
    assert "puedo" in languages and "Impossible" in languages and "Kann" in languages


def test_precision_and_recall_on_the_labelled_set() -> None:
    precision, recall = measure(PAIRS)
    held_precision, held_recall = measure(HELD_OUT)
    old_precision, old_recall = measure(PAIRS, word_overlap)
    print(
        f"\nsame_meaning: precision {precision:.3f} recall {recall:.3f}; held out: "
        f"precision {held_precision:.3f} recall {held_recall:.3f}; word overlap before: "
        f"precision {old_precision:.3f} recall {old_recall:.3f}"
    )
    assert precision >= MIN_PRECISION and recall >= MIN_RECALL
    assert held_precision >= MIN_HELD_OUT_PRECISION
    assert recall > old_recall + 0.5  # the word-overlap score missed nearly every rewording


def test_the_same_gap_in_four_languages_is_one_gap() -> None:
    english = "Cannot send emails"
    for other in (
        "No puedo enviar correos electrónicos",
        "Impossible d'envoyer des e-mails",
        "Kann keine E-Mails senden",
    ):
        assert same_meaning(english, other), other
    assert not same_meaning(english, "Cannot read emails")  # another gap, the same words


def test_scores_are_symmetric_bounded_and_one_for_the_same_text() -> None:
    for pair in PAIRS:
        score = similarity(pair.a, pair.b)
        assert 0.0 <= score <= 1.0 and score == similarity(pair.b, pair.a)
        assert similarity(pair.a, pair.a) == 1.0


@given(st.text(max_size=300), st.text(max_size=300))
def test_any_text_gets_a_score_in_range(a: str, b: str) -> None:
    score = similarity(a, b)
    assert 0.0 <= score <= 1.0 and score == similarity(b, a)
    assert same_meaning(a, b) == (score >= 0.6)


def test_stop_words_and_filler_say_nothing() -> None:
    assert concepts("It is not possible, the tool keeps failing") == frozenset()
    assert similarity("Cannot do it", "Cannot do it either") == 0.0
    assert concepts("Sprachnachrichten") == {"voice", "message"}  # a German compound


def test_a_reworded_proposal_merges_and_a_different_one_does_not(tmp_path: Path) -> None:
    """Through procedural memory, where proposals are filed: a Spanish rewording of a pending
    proposal is merged into it; "read" instead of "send" is a proposal of its own."""
    repo = ProposalStore(Store(tmp_path / "m.db"))
    gate = {"action": "manual_review"}

    def spec(name: str, description: str) -> dict[str, object]:
        return {"kind": "skill", "name": name, "description": description, "content": "-"}

    first = repo.file(
        "skill", spec("send-mail", "Send emails"), goal="", source="a", evidence=[], gate=gate
    )
    spanish = spec("correo", "Enviar correos electrónicos")
    again = repo.file("skill", spanish, goal="", source="b", evidence=[], gate=gate)
    other = repo.file(
        "skill", spec("inbox", "Read emails"), goal="", source="c", evidence=[], gate=gate
    )
    assert (first.outcome, again.outcome, other.outcome) == ("new", "merged", "new")
    assert again.proposal.id == first.proposal.id
