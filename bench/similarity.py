"""How well `same_meaning` tells the same gap from a different one: precision, recall, load
time and time per pair on the labelled set in tests/unit/similarity_pairs.py, overall and by
kind of pair. `--misses` also lists the pairs it gets wrong.

Run: .venv/bin/python bench/similarity.py [--misses]
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.unit.similarity_pairs import HELD_OUT, PAIRS, Pair  # noqa: E402


def figures(pairs: tuple[Pair, ...], verdict: list[bool]) -> tuple[float, float, int, int]:
    """Precision, recall, false merges and missed merges of the verdicts on `pairs`."""
    true_pos = sum(1 for p, v in zip(pairs, verdict, strict=True) if v and p.same)
    false_pos = sum(1 for p, v in zip(pairs, verdict, strict=True) if v and not p.same)
    false_neg = sum(1 for p, v in zip(pairs, verdict, strict=True) if not v and p.same)
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    return precision, recall, false_pos, false_neg


def report(name: str, pairs: tuple[Pair, ...], module: ModuleType) -> None:
    """Print one set's figures (and, with --misses, every pair judged wrongly)."""
    started = time.perf_counter()
    scores = [module.similarity(p.a, p.b) for p in pairs]
    per_pair = (time.perf_counter() - started) / len(pairs)
    verdict = [s >= module.SAME_MEANING for s in scores]
    precision, recall, false_pos, false_neg = figures(pairs, verdict)
    print(f"{name}: {len(pairs)} pairs ({sum(p.same for p in pairs)} same)")
    print(f"  precision {precision:.3f}  recall {recall:.3f}  ", end="")
    print(f"({false_pos} false merges, {false_neg} missed)  {per_pair * 1e6:.0f} µs per pair")
    for kind in ("paraphrase", "translation", "related", "unrelated"):
        chosen = [i for i, p in enumerate(pairs) if p.kind == kind]
        right = sum(1 for i in chosen if verdict[i] == pairs[i].same)
        print(f"  {kind:<12} {right}/{len(chosen)} judged right")
    if "--misses" in sys.argv:
        for pair, score, said in zip(pairs, scores, verdict, strict=True):
            if said != pair.same:
                label = "FALSE MERGE" if said else "missed"
                print(f"    {label:<11} {score:.2f} {pair.a!r} ~ {pair.b!r}")


def main() -> None:
    """Load the module (timed), then report on the tuning set and the held-out set."""
    started = time.perf_counter()
    module = importlib.import_module("omega.evolution.similarity")
    print(f"load: {(time.perf_counter() - started) * 1000:.1f} ms (method: lexical concepts)")
    report("labelled set", PAIRS, module)
    report("held-out set", HELD_OUT, module)


if __name__ == "__main__":
    main()
