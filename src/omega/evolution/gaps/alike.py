"""The owner decides what the similarity rules cannot: whether two gaps are one.

`same_meaning` merges only what it is sure of (a false merge hides a gap), so a paraphrase it
cannot read stays a second limitation. When a new one is recorded, the open one most like it
(`most_alike`: the highest score `possibly_same_meaning` allows) is named in the owner's
alert with the command that merges them (gaps/merging.py). The embedding model is not asked:
its cosines for gap texts, alike or not, crowd above 0.84 (measured on the sets v1-v4; on v4 it
ranks the right gap first among the others for 50 of 168 paraphrases), so it would name a
candidate for nearly every gap, most often the wrong one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from omega.evolution.meaning import most_alike


class Gap(Protocol):
    """What a suggestion needs of a limitation."""

    @property
    def id(self) -> int: ...

    @property
    def title(self) -> str: ...

    @property
    def quoted(self) -> str: ...


def possibly_same(new: Gap, open_ones: Iterable[Gap]) -> Gap | None:
    """The open limitation (not `new`) most like `new`, if any may be the same gap; of
    equally alike ones the first listed (the oldest). None if none may be."""
    others = [other for other in open_ones if other.id != new.id]
    found = most_alike(new.title, [other.title for other in others])
    return None if found is None else others[found]


def merge_hint(new: Gap, known: Gap) -> str:
    """The alert's line naming a limitation that may be the same (quoted when not the owner's)."""
    return (
        f"\nPossibly the same as [{known.id}] {known.quoted}\n"
        f"If it is: /merge {new.id} {known.id} (or `omega limitations merge {new.id} {known.id}`)."
    )
