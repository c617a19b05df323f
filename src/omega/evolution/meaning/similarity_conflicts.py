"""When two texts cannot be the same gap, whatever an embedding model says of them: the lexical
method's conflict rules, as a veto for `omega.evolution.meaning.similarity.same_meaning` (issue 39).

An embedding model puts "send e-mail" and "read e-mail" close together (cosine 0.98 with
multilingual-e5-small): it says what a text is about, not which action on which thing it
asks for. The concepts of similarity_words.py do say it, so a model's merge is vetoed when
the two texts, as concepts:

- name one concept only (a bare "No teleport" merges only as the lexical method says);
- both name actions and share none ("send" and "read");
- both name things and share none, or each names a known action or thing the other lacks
  ("WhatsApp messages" and "Telegram messages", "print photos" and "print photocopies");
- one only "gets" (accesses, checks) and the other names an action that does more than look
  ("look up train times" and "buy train tickets"), or one only "makes" (takes, does) and the
  other names an action that is not making ("Fotos machen" and "Fotos bearbeiten"), beside
  the actions both name ("make calls" and "record calls");
- one names an action that undoes or ends something and the other names none ("book
  flights" and "cancel flight bookings", "back up" and "restore from a backup");
- a word of one is a word of the other negated (`follow`, `unfollow`; `crypt`, `decrypt`);
- one names an action the other does not, and the other names no action (not even "get" or
  "make") but a word the lexicon does not know, which may be its action ("verschicken" and
  "archivieren" e-mails, "generare" and "ruotare" images): the rules cannot tell the two
  actions apart, so the model is not asked. Opposites the concepts do not show (a particle, a
  prefix, "turn on" and "switch off") are similarity_polarity.py's.

The last two also hold for the lexical method's own merges: `similarity` scores such pairs 0.
"""

from __future__ import annotations

from omega.evolution.meaning.similarity_actions import ACTIONS, GENERIC_ACTIONS
from omega.evolution.meaning.similarity_things import BRANDS, GENERIC_THINGS, THINGS

__all__ = [
    "ACTION_CONCEPTS",
    "GENERIC",
    "LEXICON",
    "SPECIFIC",
    "conflict",
    "opposed",
    "things_of",
]

ACTION_CONCEPTS = frozenset(ACTIONS)
GENERIC = GENERIC_THINGS | frozenset(GENERIC_ACTIONS)
LEXICON = frozenset(ACTIONS) | frozenset(GENERIC_ACTIONS) | frozenset(THINGS) | frozenset(BRANDS)
SPECIFIC = LEXICON - GENERIC  # concepts that name one action or one thing
NOT_THINGS = ACTION_CONCEPTS | frozenset(GENERIC_ACTIONS)
# Actions that undo or end what another did: named by one text only, they make another gap.
UNDOING = frozenset(
    {"cancel", "restore", "delete", "unsubscribe", "decline", "unblock", "decrypt", "unpack"}
    | {"logout", "stop", "return"}
)
# Actions that only look at something: what the generic "get" (access, check) may stand for.
LOOKING = frozenset(
    {"read", "search", "track", "analyze", "summarize", "play", "recognize", "count", "measure"}
    | {"calculate", "compare", "describe", "verify", "scan", "download", "sync"}
)
# What the light "make" (machen, fazer: "take photos", "make a list") may stand for.
MAKING = frozenset({"create", "generate"})
NEGATING = ("un", "de", "dis")  # prefixes that make a word its opposite


def things_of(left: frozenset[str], right: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What each text is about: its specific things when both name some, else all of them
    (so that "search the web" and "search files" still differ)."""
    things_left, things_right = left - NOT_THINGS, right - NOT_THINGS
    if things_left - GENERIC and things_right - GENERIC:
        return things_left - GENERIC, things_right - GENERIC
    return things_left, things_right


def opposed(left: frozenset[str], right: frozenset[str]) -> bool:
    """One text undoes what the other does (and names nothing undone itself), or negates a
    word the other says: never one gap."""
    if bool(left & UNDOING) != bool(right & UNDOING):
        return True
    return any(
        one == prefix + other or other == prefix + one
        for one in left - right
        for other in right - left
        for prefix in NEGATING
    )


def conflict(left: frozenset[str], right: frozenset[str]) -> str | None:
    """Why two texts (as concepts) are not the same gap whatever a model says, or None."""
    if min(len(left), len(right)) < 2:
        return "one concept"
    if opposed(left, right):
        return "opposed"
    actions_left, actions_right = left & ACTION_CONCEPTS, right & ACTION_CONCEPTS
    if actions_left and actions_right and not actions_left & actions_right:
        return "other action"
    things_left, things_right = things_of(left, right)
    if things_left and things_right and not things_left & things_right:
        return "other thing"
    if (left - right) & SPECIFIC and (right - left) & SPECIFIC:
        return "another concept each"
    for one, other in ((left, right), (right, left)):
        if (one - other) & ACTION_CONCEPTS and not other & NOT_THINGS and other - LEXICON:
            return "action unread"
    for one, acts, other_acts in (
        (left, actions_left, actions_right),
        (right, actions_right, actions_left),
    ):
        extra = other_acts - acts  # what "get" or "make" would have to stand for
        if "get" in one and not acts - other_acts and extra - LOOKING:
            return "more than a look"
        if "make" in one and not acts - other_acts and extra - MAKING:
            return "more than making"
    return None
