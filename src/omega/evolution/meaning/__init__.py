"""Whether two short texts say the same thing: the one place similarity is judged, so that
limitations and proposals agree.

This module is the package's public face: callers outside `omega.evolution.meaning` import from
here. Inside, modules import each other directly.
- similarity: same_meaning (and the score it is judged on), possibly_same_meaning, most_alike
- similarity_words: a text as the concepts it names (folded words, Snowball stems)
- similarity_stop: stop words and phrases of the seven languages
- similarity_actions, similarity_things: the lexicon of actions and things, per language
- similarity_more: the lexicon in Portuguese, Italian and Dutch
- similarity_russian: Russian stop words and lexicon
- similarity_combined: concepts that, named together, name another
- similarity_polarity: opposite actions (a reversing particle or prefix, on and off)
- similarity_conflicts: the lexical conflict rules, a veto on the model's merges
- similarity_model: the optional embedding model (the `similarity` extra)

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.evolution.meaning.similarity import (
        most_alike,
        possibly_same_meaning,
        same_meaning,
    )

__all__ = [
    "most_alike",
    "possibly_same_meaning",
    "same_meaning",
]

__getattr__ = loader(
    __name__,
    {
        "most_alike": "similarity",
        "possibly_same_meaning": "similarity",
        "same_meaning": "similarity",
    },
)
