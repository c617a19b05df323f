"""A short text as the concepts it names, for similarity.py: folded, split into
words, stop words dropped, each word mapped to a concept of the lexicon (similarity_actions.py,
similarity_things.py) or, when the lexicon does not know it, to its Snowball stem in the text's
language (`snowballstemmer`, pure Python, loaded on first use).

A text with a Cyrillic word is Russian (`ё` folded to `е`, `й` kept; similarity_russian.py);
otherwise the language is told by the stop words the text uses (`puedo` -> Spanish, `keine` ->
German): the languages with the most are the text's, tried in that order; a text with none
("Restaurant reservations") is tried in all seven (similarity_stop.py). A word is looked up as it
is, then as its stem in each of the text's languages, then by the longest known stem it starts
with; a German compound is split into two known parts first when they explain more of it
(`Sprachnachrichten` -> voice, message).
An unknown word keeps its whole stem, spelled the same across languages (ph -> f, th -> t,
k -> c, y -> i, doubled letters once), so `telepathy` is not `teleport` and `Thermostat`,
`thermostat` and `termostato` are one word.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from omega.evolution.meaning.similarity_actions import ACTIONS, GENERIC_ACTIONS
from omega.evolution.meaning.similarity_combined import combined
from omega.evolution.meaning.similarity_more import MORE
from omega.evolution.meaning.similarity_russian import RUSSIAN
from omega.evolution.meaning.similarity_stop import LANGUAGES, PHRASES, STOP, STOP_WORDS
from omega.evolution.meaning.similarity_things import BRANDS, THINGS

__all__ = ["EXACT", "concept_of", "concepts", "fold", "languages", "read", "spelled", "stem"]

COMPOUND_MIN = 3  # letters of the shorter part of a German compound

CYRILLIC = re.compile("[а-я]")
_PHRASE = re.compile(r"\b(?:" + "|".join(map(re.escape, PHRASES)) + r")\b")


def _table(*lexicons: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Exact forms and stems (`*`) to concepts; the first lexicon to name a form keeps it."""
    exact: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for concept, forms in ((c, f) for lexicon in lexicons for c, f in lexicon.items()):
        for form in forms.split():
            if form.endswith("*"):
                prefixes.setdefault(form[:-1], concept)
            else:
                exact.setdefault(form, concept)
    return exact, prefixes


EXACT, PREFIXES = _table(ACTIONS, GENERIC_ACTIONS, THINGS, MORE, RUSSIAN)
for _brand in BRANDS:  # each its own concept, unless the lexicon names it (YouTube -> video)
    EXACT.setdefault(_brand, _brand)
_SHORTEST = min(map(len, PREFIXES))
ACTION_NAMES = frozenset(ACTIONS)
KNOWN = frozenset(EXACT.values()) | frozenset(PREFIXES.values())  # every concept of the lexicon


def fold(text: str) -> str:
    """Lower case, accents and punctuation gone, snake_case split, known phrases joined."""
    lowered = text.lower().replace("ß", "ss").replace("ё", "е")
    decomposed = unicodedata.normalize("NFKD", lowered).replace("и\u0306", "й")
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    spaced = " ".join(re.findall(r"[a-z0-9а-я]+", plain))
    return _PHRASE.sub(lambda match: PHRASES[match.group(0)], spaced)


def languages(words: list[str]) -> tuple[str, ...]:
    """The text's languages by its stop words, most first; all of them when it has none."""
    if any(CYRILLIC.search(word) for word in words):
        return ("russian",)
    counts = {lang: sum(word in STOP[lang] for word in words) for lang in LANGUAGES}
    best = max(counts.values())
    if best == 0:
        return LANGUAGES
    return tuple(lang for lang in LANGUAGES if counts[lang] == best)


@lru_cache(maxsize=4)
def _stemmer(language: str) -> Any:
    import snowballstemmer  # 13 ms to import: only once a text is compared

    return snowballstemmer.stemmer(language)


@lru_cache(maxsize=16384)
def stem(language: str, word: str) -> str:
    """The Snowball stem of a folded word in one of LANGUAGES."""
    return str(_stemmer(language).stemWord(word))


def spelled(word: str) -> str:
    """One spelling across languages: ph -> f, th -> t, k -> c, y -> i, doubled letters once."""
    plain = word.replace("ph", "f").replace("th", "t").replace("k", "c").replace("y", "i")
    return re.sub(r"(.)\1+", r"\1", plain)


def _prefixed(word: str) -> tuple[str, int]:
    """The concept of the longest known stem `word` starts with, and that stem's length."""
    for end in range(len(word), _SHORTEST - 1, -1):
        if word[:end] in PREFIXES:
            return PREFIXES[word[:end]], end
    return "", 0


def _known(word: str) -> str:
    return EXACT.get(word) or _prefixed(word)[0]


def _compound(word: str, shortest_head: int) -> tuple[str, ...]:
    """A German compound as two known parts (`sprachnachrichten` -> voice, message), the
    head at least `shortest_head` letters long."""
    for cut in range(len(word) - COMPOUND_MIN, max(shortest_head, COMPOUND_MIN) - 1, -1):
        head = word[:cut]
        tail = _known(word[cut:]) or _known(word[cut + 1 :])
        if tail and head not in STOP_WORDS and (known := _known(head)):
            return (known, tail)
    return ()


@lru_cache(maxsize=16384)
def concept_of(word: str, langs: tuple[str, ...]) -> tuple[str, ...]:
    """The concepts of one folded word (not a stop word) in a text of languages `langs`."""
    if word in EXACT:
        return (EXACT[word],)
    known, length = _prefixed(word)
    compound = len(word) >= 2 * COMPOUND_MIN + 2 and not CYRILLIC.search(word)
    if compound and (parts := _compound(word, length)):
        return parts
    if known:
        return (known,)
    for language in langs:  # stemmed only now: most words are known as they are
        if (found := EXACT.get(stem(language, word))) is not None:
            return (found,)
    return (spelled(stem(langs[0], word)),)


@lru_cache(maxsize=4096)
def read(text: str) -> bool:
    """Whether the lexicon reads the text: at least half its words are stop words or words of
    the lexicon. A text in another language ("Nie mogę wysłać e-maila", "Jag kan inte skicka
    e-post") is mostly words the rules cannot weigh, whose stems two such texts share
    whatever they ask: similarity.py merges it only when it names the same concepts, and never
    on the model's word."""
    words = [word for word in fold(text).split() if len(word) > 1 or word.isdigit()]
    langs = languages(words)
    known = sum(1 for word in words if word in STOP_WORDS or set(concept_of(word, langs)) <= KNOWN)
    return 2 * known >= len(words)


@lru_cache(maxsize=4096)
def concepts(text: str) -> frozenset[str]:
    """The concepts a text names, stop words dropped (see the module's docstring)."""
    words = fold(text).split()
    langs = languages(words)
    ordered: list[str] = []
    for word in words:
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        ordered.extend(concept_of(word, langs))
    return combined(ordered, ACTION_NAMES)
