"""How well `same_meaning` tells the same gap from a different one: precision, recall, load
time and time per pair on the labelled set in tests/unit/similarity_pairs.py (tuned on: PAIRS,
and HELD_OUT since issue 39) and on the blind set in tests/unit/similarity_held_out.py (written
by someone else and never tuned on), overall and by kind of pair and language. Time per pair is
given cold (every word stemmed anew: a gap no one compared before) and warm (cached).
`--misses` also lists the pairs it gets wrong.

Run: .venv/bin/python bench/similarity.py [--misses]
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.unit.similarity_pairs import HELD_OUT, PAIRS, Pair  # noqa: E402

try:
    BLIND: Sequence[Any] = importlib.import_module("tests.unit.similarity_held_out").BLIND
except ImportError:  # the blind set is not on this branch
    BLIND = ()


def figures(pairs: Sequence[Pair], verdict: list[bool]) -> tuple[float, float, int, int]:
    """Precision, recall, false merges and missed merges of the verdicts on `pairs`."""
    true_pos = sum(1 for p, v in zip(pairs, verdict, strict=True) if v and p.same)
    false_pos = sum(1 for p, v in zip(pairs, verdict, strict=True) if v and not p.same)
    false_neg = sum(1 for p, v in zip(pairs, verdict, strict=True) if not v and p.same)
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    return precision, recall, false_pos, false_neg


def _timed(pairs: Sequence[Any], module: ModuleType) -> tuple[list[float], float, float]:
    """Scores, and seconds per pair cold (no cache: every word stemmed anew) and warm."""
    words = importlib.import_module("omega.evolution.meaning.similarity_words")
    caches: list[Callable[[], None]] = [
        words.stem.cache_clear,
        words.concept_of.cache_clear,
        words.concepts.cache_clear,
    ]
    for clear in caches:
        clear()
    started = time.perf_counter()
    scores = [module.similarity(p.a, p.b) for p in pairs]
    cold = (time.perf_counter() - started) / len(pairs)
    started = time.perf_counter()
    for pair in pairs:
        module.similarity(pair.a, pair.b)
    warm = (time.perf_counter() - started) / len(pairs)
    return scores, cold, warm


def report(name: str, pairs: Sequence[Any], module: ModuleType) -> None:
    """Print one set's figures (and, with --misses, every pair judged wrongly)."""
    scores, cold, warm = _timed(pairs, module)
    verdict = [s >= module.SAME_MEANING for s in scores]
    precision, recall, false_pos, false_neg = figures(pairs, verdict)
    print(f"{name}: {len(pairs)} pairs ({sum(p.same for p in pairs)} same)")
    print(f"  precision {precision:.3f}  recall {recall:.3f}  ", end="")
    print(f"({false_pos} false merges, {false_neg} missed)  ", end="")
    print(f"{cold * 1e6:.0f} µs per pair cold, {warm * 1e6:.0f} µs warm")
    for field in ("kind", "lang"):
        values = sorted({getattr(p, field) for p in pairs if hasattr(p, field)})
        for value in values:
            chosen = [i for i, p in enumerate(pairs) if getattr(p, field) == value]
            right = sum(1 for i in chosen if verdict[i] == pairs[i].same)
            print(f"  {field} {value:<12} {right}/{len(chosen)} judged right")
    if "--misses" in sys.argv:
        for pair, score, said in zip(pairs, scores, verdict, strict=True):
            if said != pair.same:
                label = "FALSE MERGE" if said else "missed"
                print(f"    {label:<11} {score:.2f} {pair.a!r} ~ {pair.b!r}")


def main() -> None:
    """Load the module (timed), then report on the tuning sets and the blind set."""
    started = time.perf_counter()
    module = importlib.import_module("omega.evolution.meaning.similarity")
    loaded = time.perf_counter()
    words = importlib.import_module("omega.evolution.meaning.similarity_words")
    for language in words.LANGUAGES:  # the package and its four stemmers, loaded on first use
        words.stem(language, "loaded")
    first = time.perf_counter()
    print(
        f"load: {(loaded - started) * 1000:.1f} ms, first comparison (the stemmers) "
        f"{(first - loaded) * 1000:.1f} ms (method: lexical concepts, Snowball stems)"
    )
    report("labelled set", PAIRS, module)
    report("old held-out set (tuned on since issue 39)", HELD_OUT, module)
    if BLIND:
        report("blind set (never tuned on)", BLIND, module)


if __name__ == "__main__":
    main()
