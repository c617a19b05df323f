"""Language detection: natural sentences per language, English fallbacks, and fuzzing."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.gateway.language import detect_language
from omega.prompts import LANGUAGES

SENTENCES = {
    "English": [
        "Hello, can you help me with my calendar?",
        "What is the weather like today?",
        "Please remind me to call the dentist tomorrow.",
        "Thanks, that was really helpful!",
    ],
    "Spanish": [
        "Hola, ¿cómo estás?",
        "Necesito ayuda con mi calendario",
        "¿Puedes recordarme llamar al médico mañana?",
        "Me gustaría reservar una mesa para dos",
        "No sé qué hacer con esto",
    ],
    "Portuguese": [
        "Olá, tudo bem? Eu preciso de ajuda",
        "Você pode me lembrar de ligar para o médico amanhã?",
        "Bom dia, como está o tempo hoje?",
        "Não sei o que fazer com isso",
        "Tenho uma reunião com a Ana na sexta-feira",
    ],
    "French": [
        "Bonjour, je voudrais de l'aide",
        "Est-ce que tu peux me rappeler d'appeler le médecin demain ?",
        "Merci beaucoup, c'est très gentil",
        "Quel temps fait-il à Paris aujourd'hui ?",
    ],
    "German": [
        "Hallo, ich brauche Hilfe mit meinem Kalender",
        "Kannst du mich morgen an den Termin erinnern?",
        "Wie ist das Wetter heute in Berlin?",
        "Ich weiß nicht, was ich damit machen soll",
    ],
    "Italian": [
        "Ciao, come stai? Ho bisogno di aiuto",
        "Puoi ricordarmi di chiamare il medico domani?",
        "Buongiorno, che tempo fa oggi a Roma?",
        "Non so cosa fare con questo",
        "Vorrei prenotare un tavolo per due",
    ],
    "Dutch": [
        "Hallo, ik heb hulp nodig met mijn agenda",
        "Kun je me morgen herinneren aan de afspraak?",
        "Wat is het weer vandaag in Amsterdam?",
        "Ik weet niet wat ik hiermee moet doen",
    ],
    "Russian": [
        "Привет, как дела?",
        "Мне нужна помощь с календарём",
        "Напомни мне завтра позвонить врачу",
    ],
}


@pytest.mark.parametrize(
    ("language", "sentence"),
    [(language, sentence) for language, sentences in SENTENCES.items() for sentence in sentences],
)
def test_natural_sentences(language: str, sentence: str) -> None:
    assert detect_language(sentence) == language


def test_every_language_is_covered() -> None:
    assert set(SENTENCES) == set(LANGUAGES)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Necesito ayuda con mi calendario", "Preciso de ajuda com o meu calendário"),
        ("No sé qué hacer con esto", "Non so cosa fare con questo"),
        ("Hallo, ich brauche Hilfe", "Hallo, ik heb hulp nodig"),
    ],
)
def test_close_languages_are_told_apart(a: str, b: str) -> None:
    assert detect_language(a) != detect_language(b)


@pytest.mark.parametrize(
    "text", ["", "   ", "😀🎉👍", "123 456", "ok", "hallo", "de", "?!", "\ud800", "\x00"]
)
def test_no_evidence_or_ties_mean_english(text: str) -> None:
    assert detect_language(text) == "English"


def test_decomposed_accents_and_case_do_not_matter() -> None:
    sentence = "¿PUEDES RECORDARME LLAMAR AL MÉDICO MAÑANA?"
    assert detect_language(unicodedata.normalize("NFD", sentence)) == "Spanish"


def test_a_few_foreign_words_in_english_stay_english() -> None:
    assert detect_language("Can you translate 'gracias' and 'merci' for me, please?") == "English"
    assert detect_language("I met Дмитрий at the conference yesterday") == "English"


def test_huge_input_is_fine() -> None:
    assert detect_language("Olá, tudo bem? " * 100_000) == "Portuguese"


@given(st.text(st.characters(exclude_categories=())))
def test_never_raises_and_returns_a_known_language(text: str) -> None:
    assert detect_language(text) in LANGUAGES
