"""Whether two short texts (limitation titles, proposal descriptions) say the same thing.

The one place similarity is judged, so that limitations and proposals use one method.
"""

from __future__ import annotations

import re

SAME_MEANING = 0.6  # score at or above which two texts are the same gap or idea


def _words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}


def similarity(a: str, b: str) -> float:
    """How alike two texts are in meaning, from 0 (unrelated) to 1 (the same)."""
    left, right = _words(a), _words(b)
    if len(left) < 3 or len(right) < 3:
        return 0.0  # too short to judge by words
    return len(left & right) / len(left | right)


def same_meaning(a: str, b: str) -> bool:
    """Whether two texts describe the same gap or idea."""
    return similarity(a, b) >= SAME_MEANING
