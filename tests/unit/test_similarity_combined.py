"""Issue 39's last point: Portuguese, Italian and Dutch read by the lexicon
(similarity_more.py, similarity_stop.py), concepts that named together name another
(similarity_combined.py), texts the lexicon cannot read (another language) merged only as
themselves and never on the model's word, and the light "make" that cannot stand for another
action."""

from __future__ import annotations

import pytest

from omega.evolution.meaning import same_meaning
from omega.evolution.meaning.similarity import model_may_merge, similarity
from omega.evolution.meaning.similarity_conflicts import conflict, opposed
from omega.evolution.meaning.similarity_words import concepts, languages, read

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_portuguese_italian_and_dutch_gaps_are_read_as_concepts() -> None:
    assert languages("nao consigo enviar e mails".split()) == ("portuguese",)
    assert concepts("Não consigo enviar e-mails") == {"send", "email"}
    assert concepts("Non posso inviare email") == {"send", "email"}
    assert concepts("Ik kan geen e-mails versturen") == {"send", "email"}
    assert same_meaning("Non posso prenotare voli", "Cannot book flights", model=False)
    assert same_meaning("Ik kan geen vluchten boeken", "No puedo reservar vuelos", model=False)
    # the second blind set's false merges: the action or the thing now read, and apart
    for one, other in (
        ("Não consigo enviar e-mails", "Não consigo ler e-mails"),
        ("Não consigo transcrever áudio", "Não consigo traduzir áudio"),
        ("Nessun accesso al calendario", "Nessun accesso alla calcolatrice"),
        ("Non posso teletrasportarmi", "Non posso usare la telepatia"),
    ):
        assert not same_meaning(one, other, model=False), (one, other)
        assert not model_may_merge(one, other), (one, other)


def test_concepts_named_together_name_another() -> None:
    transcribing = {"transcribe", "voice"}
    assert concepts("Can't convert audio recordings into text") == transcribing
    assert concepts("No speech-to-text") == transcribing
    assert concepts("Cannot transcribe voice memos") == transcribing
    assert "transcribe" not in concepts("Cannot convert text into audio")
    assert concepts("Cannot buy plane tickets") == {"book", "flight", "ticket"}
    assert concepts("Cannot scan QR codes") == {"read", "qr"}
    assert concepts("Cannot create zip archives") == {"compress", "archive"}
    assert concepts("Cannot draw pictures") == {"generate", "image"}
    assert concepts("Cannot draw diagrams") == {"draw", "chart"}
    assert concepts("Cannot schedule a reminder notification") == {"create", "reminder"}
    assert concepts("Cannot text a phone number") == {"send", "sms"}
    assert concepts("Cannot read text messages") == {"read", "sms"}
    assert same_meaning(
        "Impossible de réserver des vols", "Je ne peux pas acheter de billets d'avion"
    )


def test_a_text_the_lexicon_cannot_read_merges_only_as_itself() -> None:
    polish = ("Nie mogę wysłać e-maila", "Nie mogę czytać e-maili")
    swedish = ("Jag kan inte skicka e-post", "Jag kan inte läsa e-post")
    for one, other in (polish, swedish):
        assert not read(one) and not read(other)
        assert similarity(one, other) == 0.0 and not model_may_merge(one, other)
        assert same_meaning(one, one)
    assert read("Restaurant reservations") and read("Não consigo navegar na web")


def test_the_model_may_merge_only_texts_with_a_specific_concept_in_common() -> None:
    assert model_may_merge("No access to the internet", "Cannot browse the web")
    assert not model_may_merge("Cannot order groceries", "Cannot send emails")
    # "get" and "file" are said of every gap: not enough in common
    assert not model_may_merge("Cannot access files", "Cannot look at files")


def test_make_stands_for_no_action_but_making_and_returning_undoes_buying() -> None:
    assert conflict(
        concepts("Kann keine Notizen machen"), concepts("Kann keine Notizen bearbeiten")
    ) == ("more than making")
    assert not same_meaning("Kann keine Fotos machen", "Kann keine Fotos bearbeiten")
    assert opposed(
        concepts("Cannot buy items on Amazon"), concepts("Cannot return items bought on Amazon")
    )
    assert not same_meaning("Cannot make phone calls", "Cannot make video calls")
    assert not same_meaning("Cannot recognize faces in photos", "Cannot recognize text in photos")
