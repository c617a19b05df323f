"""`same_meaning` compares gaps by meaning (issue 28, point 4; issue 39, point 4), measured on
the labelled sets in similarity_pairs.py: precision (a false merge hides a gap) and recall are
held to floors; the word-overlap score it replaced is measured on the same set for comparison.
Words the lexicon does not know are compared by their Snowball stems, whole: distinct gaps that
share a beginning (teleport, telepathy) stay apart, also through LimitationStore.record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from omega.evolution.gaps import LimitationStore
from omega.evolution.gaps.gap import Caps, Gap
from omega.evolution.meaning import same_meaning
from omega.evolution.meaning.similarity import similarity
from omega.evolution.meaning.similarity_stop import LANGUAGES
from omega.evolution.meaning.similarity_words import EXACT, concepts, languages
from omega.evolution.proposals import ProposalStore
from omega.memory.store import Store
from tests.unit.similarity_pairs import HELD_OUT, PAIRS, Pair

# Floors, documented in docs/evolution.md ("Same meaning"): precision is what matters (a false
# merge hides a gap); recall says how many rewordings still count twice. Measured
# (bench/similarity.py): labelled set 1.00 / 0.95, old held-out set 1.00 / 0.93 (both tuned on
# since issue 39; before it, 1.00 / 0.93 and 1.00 / 0.57 with words cut to five letters). The
# blind sets: test_similarity_held_out_v2.py holds the second one's figures (never tuned on).
MIN_PRECISION = 0.95
MIN_RECALL = 0.85
MIN_HELD_OUT_PRECISION = 0.95
MIN_HELD_OUT_RECALL = 0.85
# Gaps that begin alike and are not alike: each was one gap when words were cut to 5 letters.
LOOK_ALIKES = (
    ("No teleport", "No telepathy"),
    ("Cannot teleport objects", "Cannot use telepathy"),
    ("Cannot transcribe audio", "Cannot translate audio"),
    ("Cannot open the calendar", "Cannot open the calculator"),
    ("Cannot print photos", "Cannot print photocopies"),
    ("No photo", "No photocopy"),
)
# Words for generated texts: lexicon forms, look-alikes, stems that differ by a final vowel,
# stop words and filler, so that texts share concepts, nearly share them, or say nothing.
VOCABULARY = sorted(
    {*list(EXACT)[::7], "teleport", "telepathy", "clone", "klonen", "farmacia", "pharmacie"}
    | {"handwritten", "handwriting", "cannot", "the", "keine", "no", "puedo", "de", "tool"}
)
texts = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8).map(" ".join)


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


@pytest.mark.no_store
def test_the_labelled_set_is_large_and_balanced() -> None:
    kinds = {p.kind for p in PAIRS}
    assert len(PAIRS) >= 60 and kinds == {"paraphrase", "translation", "related", "unrelated"}
    assert 0.3 < sum(p.same for p in PAIRS) / len(PAIRS) < 0.7
    languages = " ".join(p.b for p in PAIRS if p.kind == "translation")
    assert "puedo" in languages and "Impossible" in languages and "Kann" in languages


@pytest.mark.no_store
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
    assert held_precision >= MIN_HELD_OUT_PRECISION and held_recall >= MIN_HELD_OUT_RECALL
    assert recall > old_recall + 0.5  # the word-overlap score missed nearly every rewording


@pytest.mark.no_store
def test_the_same_gap_in_four_languages_is_one_gap() -> None:
    english = "Cannot send emails"
    for other in (
        "No puedo enviar correos electrónicos",
        "Impossible d'envoyer des e-mails",
        "Kann keine E-Mails senden",
    ):
        assert same_meaning(english, other), other
    assert not same_meaning(english, "Cannot read emails")  # another gap, the same words


@pytest.mark.no_store
def test_scores_are_symmetric_bounded_and_one_for_the_same_text() -> None:
    for pair in PAIRS:
        score = similarity(pair.a, pair.b)
        assert 0.0 <= score <= 1.0 and score == similarity(pair.b, pair.a)
        assert similarity(pair.a, pair.a) == 1.0


@pytest.mark.no_store
@given(st.text(max_size=300), st.text(max_size=300))
def test_any_text_gets_a_score_in_range(a: str, b: str) -> None:
    score = similarity(a, b)
    assert 0.0 <= score <= 1.0 and score == similarity(b, a)
    assert same_meaning(a, b, model=False) == (score >= 0.6)


@pytest.mark.no_store
def test_gaps_that_begin_alike_stay_apart() -> None:
    """Issue 39: "No teleport" and "No telepathy" were one gap (both `telep`)."""
    for one, other in LOOK_ALIKES:
        assert not same_meaning(one, other), (one, other)
        assert similarity(one, other) == 0.0 or concepts(one) != concepts(other)
    assert concepts("No teleport") != concepts("No telepathy")
    # and each is still itself in other words (Snowball: teleportation -> teleport)
    assert same_meaning("No teleport", "Teleportation is not supported")
    assert same_meaning("No telepathy", "Telepathy is unavailable")


@pytest.mark.no_store
def test_the_language_is_told_by_its_stop_words_and_words_are_stemmed_in_it() -> None:
    assert languages("kann keine rechnungen bezahlen".split()) == ("german",)
    assert languages("no puedo pagar facturas".split()) == ("spanish",)
    assert languages("restaurant reservations".split()) == LANGUAGES
    assert languages("nao consigo ler arquivos".split()) == ("portuguese",)
    assert languages("non riesco a leggere i file".split()) == ("italian",)
    assert languages("ik kan geen bestanden lezen".split()) == ("dutch",)
    # Words the lexicon does not know meet by their stems across languages.
    assert same_meaning("Cannot control the thermostat", "No puedo controlar el termostato")
    assert same_meaning("Cannot clone git repositories", "Kann keine Git-Repositories klonen")
    # A thing with no action is the gap that only adds a light verb ("set") to it.
    assert same_meaning("No timer function", "Cannot set a timer")
    assert not same_meaning("No timer function", "Cannot delete a timer")


@pytest.mark.no_store
@given(texts, texts)
def test_scores_are_symmetric_on_texts_that_share_words(a: str, b: str) -> None:
    score = similarity(a, b)
    assert 0.0 <= score <= 1.0 and score == similarity(b, a)


@pytest.mark.no_store
@given(st.one_of(texts, st.text(min_size=1, max_size=200)))
def test_a_text_that_names_anything_means_itself(text: str) -> None:
    assume(concepts(text))  # a text of stop words only names nothing, like an empty one
    assert same_meaning(text, text) and similarity(text, text) == 1.0
    assert same_meaning(text, f"{text}.") and same_meaning(text, text.upper())


def test_a_distinct_gap_is_recorded_not_merged_into_a_look_alike(tmp_path: Path) -> None:
    """Issue 39: a person's "No telepathy" after their "No teleport" was merged into it (lost,
    and counted as a sighting of the first); now it is a limitation of its own, counted once
    toward their daily cap, and a rewording of the first is still that first one."""
    store = Store(tmp_path / "m.db")
    try:
        repo = LimitationStore(store)
        caps = Caps(per_hour=10, per_person_day=2)
        person = "person:telegram:7"

        def seen(title: str) -> tuple[int, bool]:
            gap = Gap(title, source="marker", reported_by=person, seen_with=person)
            found, created = repo.record(gap, caps)
            return found.id, created

        first = seen("No teleport")
        assert seen("No telepathy") == (first[0] + 1, True)
        assert seen("Teleportation is not supported") == (first[0], False)  # only counted
        assert [item.title for item in repo.list()] == ["No teleport", "No telepathy"]
        with pytest.raises(PermissionError):  # the cap: two a day from them, both kept
            seen("No time travel")
    finally:
        store.close()


@pytest.mark.no_store
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
