"""Guess the language of a user message: a stop-word heuristic, then py3langid.

The message's prose is read, without the paths, URLs, addresses, inline code and words with
digits it may carry (they are no language). Cyrillic script means Russian. Then a small
stop-word heuristic: each language has a set of very frequent function words (plus greetings
and a few words a personal-agent user types often); a word shared by several languages splits
its point among them, and a few telltale letters (ñ, ã, ß, ...) add small bonuses. When it
names a language, that is the answer: it reads one- and two-word greetings, which a
character n-gram model cannot. When it is unsure (no evidence, a tie, or only English words),
py3langid (a maintained naive Bayes model over character n-grams, restricted to the welcome
languages on an instance of its own) decides if it is at least `MIN_CONFIDENCE` sure; English
otherwise. A wrong non-English guess is the costly mistake (it is remembered as the person's
language), so English wins whenever the evidence is weak. docs/architecture.md has the
figures this design was picked by (bench/language_detection.py).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

from omega.prompts import LANGUAGES

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

__all__ = ["detect_language"]

DEFAULT_LANGUAGE = "English"
# Long messages do not need every word; a prefix keeps the cost bounded.
_MAX_CHARS = 4000
# Below this score (about one distinctive word) the guess is too weak to leave English.
_MIN_SCORE = 1.0
# py3langid's normalized probability below which its guess is no evidence (English stays).
MIN_CONFIDENCE = 0.8
# Omega's languages as py3langid names them (ISO 639-1).
CODES = {
    "English": "en",
    "Spanish": "es",
    "Portuguese": "pt",
    "French": "fr",
    "German": "de",
    "Italian": "it",
    "Dutch": "nl",
    "Russian": "ru",
}
_NAMES = {code: name for name, code in CODES.items()}
# Paths, URLs, e-mail addresses, inline code and words with digits: no language.
_NOT_PROSE = re.compile(
    r"`[^`\n]*`|\b[a-z][a-z0-9+.-]*://\S+|[\w.+-]+@[\w.-]+|\S*[/\\_$={}<>|]\S*|\S*\d\S*",
    re.IGNORECASE,
)


def _words(block: str) -> frozenset[str]:
    """The whitespace-separated words of a text block (keeps the word lists below readable)."""
    return frozenset(block.split())


_STOP_WORDS: dict[str, frozenset[str]] = {
    "English": _words(
        """
        the a and is are was were be been you your i my me we our they it this that these those
        what which who how why when where with for from about have has had do does did not
        can could would should will please help need want hello hi hey thanks thank just no
        of to in on at an if or but so some any there here today tomorrow remind meeting
        """
    ),
    "Spanish": _words(
        """
        el la los las de del que y en un una unos es son por para con no se lo le les su sus
        al como cómo más pero muy estoy estás está están esta este esto eso ese hola gracias
        qué yo tú tengo tienes necesito ayuda puedes quiero hoy mañana bien sí también hay mi
        tu usted nosotros todo cuando dónde donde porque buenos buenas días tardes noches
        favor ayudar hacer tiene ser fue era a o me te dos nos gustaría quisiera podrías
        puedo ahora mucho muchas muchos ellos ellas hasta recuérdame cuéntame dime
        """
    ),
    "Portuguese": _words(
        """
        o os a as de do da dos das que e em no na nos nas um uma é com não para por se mais
        mas muito eu você vocês tudo bem olá ola oi obrigado obrigada preciso ajuda tenho
        estou está isso isto este esta meu minha seu sua ao aos pelo pela também hoje amanhã
        bom boa dia sim quero pode como ele ela eles elas foi ser são fazer ajudar lembrar me
        lembra lembre conta diga tchau
        """
    ),
    "French": _words(
        """
        le la les de des du et en un une est sont je tu il elle nous vous ils elles que qui
        ne pas pour sur avec dans ce cette ces mon ma mes ton votre vos au aux bonjour salut
        merci oui non voudrais veux suis très aide aider mais ou où comment ça aujourd hui
        demain besoin plaît c j l d qu n s m t y avez avons peux pouvez faire me te bonsoir
        coucou
        """
    ),
    "German": _words(
        """
        der die das und ist ich du er sie es wir ihr nicht ein eine einen einem einer mit auf
        für von zu zum zur den dem des im auch bin bist sind haben habe hast hallo danke bitte
        ja nein wie was wo warum mein meine meinem meinen meiner dein deine brauche hilfe
        kannst können kann heute morgen guten tag aber oder noch schon sehr gut mir mich dich
        dir uns mache machen erinnere termin in so will möchte erzähl sag servus moin
        tschüss vielen
        """
    ),
    "Italian": _words(
        """
        il lo la i gli le di del della dei delle che e è un una uno per con non sono sei ho
        hai ha abbiamo mi ti ci si come cosa ciao grazie buongiorno buonasera bene bisogno
        aiuto aiutare puoi voglio vorrei oggi domani anche ma molto questo questa nel nella
        al alla dell nell sto stai sta tutto perché dove quando io lui lei noi voi loro mio
        mia tuo tua fare ricordami a o in no raccontami dimmi buonanotte salve
        """
    ),
    "Dutch": _words(
        """
        de het een en is ik je jij u we wij zij niet van met op voor naar aan dat die dit wat
        hoe waar mijn jouw heb hebt heeft hebben ben bent zijn hoi dank bedankt
        alsjeblieft alstublieft ja nee hulp nodig kun kunt kan wil vandaag morgen goed ook
        maar of nog er agenda graag hij zo te om bij mij jou ons doen herinner in me
        goedemorgen goedemiddag goedenavond welterusten doei
        """
    ),
}
# Letters that lean towards particular languages; each distinct one present adds this much,
# split among the languages listed.
_LETTER_BONUS = 0.75
_LETTERS: dict[str, tuple[str, ...]] = {
    "ñ": ("Spanish",),
    "¿": ("Spanish",),
    "¡": ("Spanish",),
    "ã": ("Portuguese",),
    "õ": ("Portuguese",),
    "ç": ("Portuguese", "French"),
    "ê": ("Portuguese", "French"),
    "â": ("Portuguese", "French"),
    "ô": ("Portuguese", "French"),
    "œ": ("French",),
    "è": ("French", "Italian"),
    "ù": ("French", "Italian"),
    "à": ("French", "Italian", "Portuguese"),
    "î": ("French",),
    "û": ("French",),
    "ò": ("Italian",),
    "ì": ("Italian",),
    "ß": ("German",),
    "ä": ("German",),
    "ö": ("German",),
    "ü": ("German",),
    "ĳ": ("Dutch",),
}


def _word_weights() -> dict[str, dict[str, float]]:
    """Each stop word's weight per language: a word shared by n languages counts 1/n for each."""
    owners: dict[str, list[str]] = {}
    for language, words in _STOP_WORDS.items():
        for word in words:
            owners.setdefault(word, []).append(language)
    return {word: dict.fromkeys(langs, 1.0 / len(langs)) for word, langs in owners.items()}


_WORD_WEIGHTS = _word_weights()
_WORD_RE = re.compile(r"[^\W\d_]+")
_CYRILLIC_RE = re.compile("[\u0400-\u04ff]")
# Static data, checked once: every language Omega speaks is detectable, and nothing else.
assert {*_STOP_WORDS, "Russian"} == set(LANGUAGES), "stop words must match omega.prompts"
assert set(CODES) == set(LANGUAGES), "py3langid codes must match omega.prompts"


def detect_language(text: str) -> str:
    """The most likely of LANGUAGES for `text`; English when unsure. Never raises."""
    try:
        return _detect(text)
    except Exception:  # detection only picks a reply language; it must never block a message
        return DEFAULT_LANGUAGE


def _detect(text: str) -> str:
    """The prose's script, then the heuristic, then py3langid when the heuristic is unsure."""
    prose = prose_of(text)
    words = _WORD_RE.findall(prose)
    if not words:
        return DEFAULT_LANGUAGE
    letters = sum(len(word) for word in words)
    if 2 * len(_CYRILLIC_RE.findall(prose)) > letters:
        return "Russian"
    guess = heuristic(words, prose)
    if guess is not None and guess != DEFAULT_LANGUAGE:
        return guess
    # One word, however often repeated, is too little for py3langid ("word word ..." reads as
    # Dutch to it): it must have at least two different words to weigh.
    if guess is None and len(set(words)) >= 2:
        language, confidence = identify(prose)
        if confidence >= MIN_CONFIDENCE:
            return language
    return DEFAULT_LANGUAGE


def prose_of(text: str) -> str:
    """The words of `text` a language shows in: NFC (decomposed accents read as one letter),
    casefolded, without paths, URLs, addresses, inline code and words with digits."""
    sample = unicodedata.normalize("NFC", text[:_MAX_CHARS])
    return _NOT_PROSE.sub(" ", sample).casefold()


def heuristic(words: list[str], prose: str) -> str | None:
    """The language the stop words and telltale letters point to; None when unsure (no
    evidence, or a tie)."""
    scores: dict[str, float] = {}
    # Distinct words: one word said over and over ("word word word ...", Dutch for "become")
    # is one piece of evidence, not a landslide.
    for word in set(words):
        for language, weight in _WORD_WEIGHTS.get(word, {}).items():
            scores[language] = scores.get(language, 0.0) + weight
    for letter, languages in _LETTERS.items():
        if letter in prose:
            for language in languages:
                scores[language] = scores.get(language, 0.0) + _LETTER_BONUS / len(languages)
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
    if not ranked or ranked[0][1] < _MIN_SCORE:
        return None
    best, score = ranked[0]
    if len(ranked) > 1 and ranked[1][1] >= score - 1e-9:
        return None  # a tie is no evidence either way
    return best


def identify(prose: str) -> tuple[str, float]:
    """py3langid's guess among LANGUAGES and its normalized probability."""
    code, probability = _identifier().classify(prose)
    return _NAMES[code], float(probability)


@lru_cache(maxsize=1)
def _identifier() -> LanguageIdentifier:
    """py3langid's model restricted to LANGUAGES, on an instance of its own (the evolution
    gate's identifier keeps every language). Imported on first use: it brings numpy and
    loading takes a few hundred milliseconds, which no path that never detects should pay."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_pickled_model(MODEL_FILE, norm_probs=True)
    identifier.set_languages([CODES[language] for language in LANGUAGES])
    return identifier
