"""What the blind held-out similarity tests share (test_similarity_held_out_v3.py, _v4.py): the
count of merges on a set, the floor check, and the look-alike gaps that must stay apart."""

from __future__ import annotations

from omega.evolution.meaning import same_meaning

# Gaps that begin alike and are not alike (issue 39): apart in both configurations.
LOOK_ALIKES = (
    ("No teleport", "No telepathy"),
    ("Não consigo me teletransportar", "Não tenho telepatia"),
    ("Non posso teletrasportarmi", "Non posso usare la telepatia"),
    ("Ik kan niet teleporteren", "Geen telepathie"),
)


def merges(pairs: list[tuple[str, str, bool]], model: bool) -> tuple[int, int]:
    """True merges and false merges of `same_meaning` on a set of pairs."""
    said = [(same_meaning(a, b, model=model), same) for a, b, same in pairs]
    return sum(1 for s, same in said if s and same), sum(1 for s, same in said if s and not same)


def assert_not_below(measured: tuple[int, int], floor: tuple[int, int], same: int) -> None:
    """Precision and recall at least those of `floor` (compared as fractions, exactly)."""
    (true_pos, false_pos), (floor_true, floor_false) = measured, floor
    assert true_pos * (floor_true + floor_false) >= floor_true * (true_pos + false_pos), measured
    assert true_pos >= floor_true, f"recall {true_pos}/{same} < {floor_true}/{same}"


def assert_look_alikes_apart(model: bool) -> None:
    """Teleport and telepathy, in four languages, never merge."""
    for one, other in LOOK_ALIKES:
        assert not same_meaning(one, other, model=model), (one, other)
