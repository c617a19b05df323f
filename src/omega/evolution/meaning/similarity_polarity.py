"""Whether two texts ask for opposite actions on the same thing, for similarity.py (issue 39):
the one difference a bag of concepts cannot see when both texts name the same verb and differ
only by a particle or a prefix ("aanzetten" and "uitzetten" the heating, "caricare" and
"scaricare" a file, "включить" and "выключить" the light). Four general rules, none tied to a
pair of words:

1. *Separable particles that reverse the verb* (Dutch, German) and *Russian prefixes* that do:
   a word of one text is a particle plus a root, and a word of the other the opposite particle
   plus the same root of at least four letters (`aan`/`uit`, `in`/`uit`, `aan`/`af`; `an`/`aus`,
   `ein`/`aus`, `an`/`ab`, `auf`/`zu`; `в`/`вы`, `в`/`от`, `под`/`от`, `за`/`рас`): `anmelden`,
   `abmelden`; `einschalten`, `ausschalten`; `подключить`, `отключить`.
2. *Negating prefixes*: a word of one text (or its Snowball stem) is a word of the other with
   `un`, `dis`, `de`, `des`, `ont` or, before at least five letters, Italian `s` in front
   (`disable`, `desactivar`, `disattivare`, `scaricare`, `ontgrendelen`), and the other text
   does not say the prefixed word too.
3. *Polarity words across languages*: a text that switches something on (`turn on`, `enable`,
   `activar`, `allumer`, `einschalten`, `accendere`, `aanzetten`, `включить`) against one that
   switches it off (`turn off`, `disable`, `apagar`, `éteindre`, `ausschalten`, `spegnere`,
   `uitzetten`, `выключить`); one that joins (`subscribe`, `sign up`, `log in`, `abonnieren`,
   `aanmelden`, `подписаться`) against one that leaves (`unsubscribe`, `opt out`, `log out`,
   `afmelden`, `отписаться`). A text that says both (`turn the plugs on and off`) is opposed to
   neither.

4. *Directions*: both carry things from one place or form to another (convert, translate,
   move, copy, transfer, export, import) and name the same two in the other order ("PDF to
   Word", "Word to PDF"; "from English to Spanish", "from Spanish to English").

"Stop doing X" (`dejar de`, `deixar de`, `smettere di`, `aufhören`, `перестать`) is the lexicon's
`stop`, an undoing (similarity_stop.py's phrases, similarity_conflicts.UNDOING).
"""

from __future__ import annotations

import re
from functools import lru_cache

from omega.evolution.meaning.similarity_stop import STOP_WORDS
from omega.evolution.meaning.similarity_words import (
    ACTION_NAMES,
    concept_of,
    fold,
    languages,
    stem,
)

__all__ = ["polarity", "reversed_action"]

# Actions that take a thing from one place or form to another: the order of the two matters.
CARRYING = frozenset({"convert", "translate", "transfer", "move", "copy", "export", "import"})
ROOT_MIN = 4  # letters of the root a particle or a prefix is put before
# Particles (Dutch, German) and Russian prefixes whose verbs are each other's opposite.
PARTICLES = (
    ("aan", "uit"),
    ("in", "uit"),
    ("aan", "af"),
    ("an", "aus"),
    ("ein", "aus"),
    ("an", "ab"),
    ("auf", "zu"),
    ("в", "вы"),
    ("в", "от"),
    ("под", "от"),
    ("за", "рас"),
)
_PARTICLE_SET = frozenset(p for pair in PARTICLES for p in pair)
_OPPOSITE: dict[str, frozenset[str]] = {
    particle: frozenset(
        other for pair in PARTICLES if particle in pair for other in pair if other != particle
    )
    for particle in _PARTICLE_SET
}
NEGATING = ("un", "dis", "de", "des", "ont")  # before a word: its opposite
ITALIAN_S_MIN = 5  # letters after Italian `s` (`scaricare`): `spostare` is not `postare`
# Word beginnings (folded) that switch on or off, join or leave, in the eight languages.
_AXES: dict[str, tuple[str, str]] = {
    "power": (
        "turnon switchon poweron enabl activat activar activ activer aktivier attiv ativ "
        "encend acend allum einschalt anschalt anmach accend aanzet aanzett inschakel "
        "aandoe включ",
        "turnoff switchoff poweroff shutdown shutoff disabl deactiv desactiv deaktiv disattiv "
        "desativ apag eteind etein ausschalt abschalt ausmach speng spegn uitzet uitzett "
        "uitschakel uitdoe desliga выключ отключ",
    ),
    "member": (
        "subscri suscri abonn abonier inscri iscriv inschrijv aanmeld signup optin login "
        "signin inlogg einlogg подпис",
        "unsubscri desuscri desabon desinscri disiscriv uitschrijv afmeld abbestell optout "
        "logout signout uitlogg auslogg отпис",
    ),
}
_PHRASES = re.compile(
    r"\b(turn|switch|power)(?:s|ed|ing|es)?((?: [a-z]+){0,3}?) (on|off)\b"
    r"|\b(shut|opt|sign|log)(?:s|ting|ging|ing|ged|ted)? (down|off|in|out|up)\b"
)


def _joined(text: str) -> str:
    """English phrasal verbs as one word: `turn the lights on` -> `turnon the lights`."""

    def join(match: re.Match[str]) -> str:
        if match.group(1):
            return f"{match.group(1)}{match.group(3)}{match.group(2)}"
        return f"{match.group(4)}{match.group(5)}"

    return _PHRASES.sub(join, text)


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """A text's words that are not stop words, and their Snowball stems in its languages."""
    words = [w for w in _joined(fold(text)).split() if w not in STOP_WORDS and len(w) > 2]
    langs = languages(words)
    return frozenset(words) | {stem(lang, w) for w in words for lang in langs[:2]}


@lru_cache(maxsize=4096)
def polarity(text: str) -> frozenset[str]:
    """The directions a text's actions take: `power+`, `power-`, `member+`, `member-`."""
    found: set[str] = set()
    for word in _words(text):
        for axis, (on, off) in _AXES.items():
            if any(word.startswith(w) for w in off.split()):
                found.add(axis + "-")
            elif any(word.startswith(w) for w in on.split()):
                found.add(axis + "+")
    return frozenset(found)


def _rooted(words: frozenset[str]) -> frozenset[tuple[str, str]]:
    """Each word as (particle, root) for every particle of PARTICLES it begins with."""
    return frozenset(
        (particle, word[len(particle) :])
        for word in words
        for particle in _PARTICLE_SET
        if word.startswith(particle) and len(word) - len(particle) >= ROOT_MIN
    )


def _particles(left: frozenset[str], right: frozenset[str]) -> bool:
    """A word of one is a particle and a root, of the other the opposite particle and root."""
    rooted = _rooted(right)
    return any(
        (opposite, root) in rooted
        for particle, root in _rooted(left)
        for opposite in _OPPOSITE[particle]
    )


def _negated(left: frozenset[str], right: frozenset[str]) -> bool:
    """A word of `left` is a word of `right` with a negating prefix."""
    for word in left:
        for prefix in NEGATING:
            rest = word[len(prefix) :]
            if word.startswith(prefix) and len(rest) >= ROOT_MIN and rest in right:
                return True
        if word.startswith("s") and len(word) > ITALIAN_S_MIN and word[1:] in right:
            return True
    return False


@lru_cache(maxsize=4096)
def _ordered(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The text's concepts in the order its words name them, and those that are actions."""
    words = [w for w in fold(text).split() if w not in STOP_WORDS and len(w) > 1]
    langs = languages(words)
    ordered = tuple(c for word in words for c in concept_of(word, langs))
    return ordered, frozenset(ordered) & ACTION_NAMES


def _reversed_direction(a: str, b: str) -> bool:
    """Both carry things from one to another (convert, translate, move...) and name the same
    two in the other order: "PDF to Word" is not "Word to PDF"."""
    (left, left_acts), (right, right_acts) = _ordered(a), _ordered(b)
    if not left_acts & right_acts & CARRYING:
        return False
    common = (set(left) & set(right)) - ACTION_NAMES - {"get", "make", "file", "data"}
    order_left = list(dict.fromkeys(c for c in left if c in common))
    order_right = list(dict.fromkeys(c for c in right if c in common))
    return len(common) >= 2 and order_left != order_right


@lru_cache(maxsize=16384)
def reversed_action(a: str, b: str) -> bool:
    """Whether one text asks for the opposite of the other's action (see the module's
    docstring): never one gap, whatever else they share."""
    left, right = _words(a), _words(b)
    only_left, only_right = left - right, right - left
    if _particles(only_left, only_right):
        return True
    if _negated(only_left, only_right) or _negated(only_right, only_left):
        return True
    if _reversed_direction(a, b):
        return True
    up, down = polarity(a), polarity(b)
    for axis in _AXES:
        ways = {axis + "+", axis + "-"}
        if len(up & ways) == 1 and len(down & ways) == 1 and up & ways != down & ways:
            return True
    return False
