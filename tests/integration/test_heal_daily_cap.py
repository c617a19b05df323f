"""The self-heal cap counts SELF_HEAL iterations over the last 24 hours across sessions: the
model claiming success (SELF_HEAL_RESOLVED) and starting again does not reset it; iterations
older than a day no longer count; the owner clearing a session starts the count again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from omega.evolution.heal import SelfHealStore
from omega.evolution.heal.sessions import MAX_ITERATIONS
from omega.memory.db import to_db_time
from omega.owner import OWNER
from omega.turn import MarkerContext
from tests.unit.test_limitations_self_heal import apply, command, ctx, sent

__all__ = ["ctx"]  # the fixture, shared with the unit tests of self-healing


def heal(ctx: MarkerContext, times: int, label: str = "same bug") -> list[str]:
    """`times` SELF_HEAL replies; the first outcome of each."""
    return [apply(ctx, f"SELF_HEAL: {label} try {i} | check it")[0] for i in range(times)]


def escalations(ctx: MarkerContext) -> int:
    return len([m for m in sent(ctx) if "ESCALATION" in m.text])


def test_the_eleventh_iteration_of_a_day_escalates_whatever_was_resolved_between(
    ctx: MarkerContext,
) -> None:
    assert heal(ctx, 4)[-1] == "SELF_HEAL iteration 4"
    assert apply(ctx, "Verified.\nSELF_HEAL_RESOLVED") == ["SELF_HEAL_RESOLVED resolved"]
    assert heal(ctx, 6, "again")[-1] == "SELF_HEAL iteration 10"
    assert apply(ctx, "Verified.\nSELF_HEAL_RESOLVED") == ["SELF_HEAL_RESOLVED resolved"]
    assert heal(ctx, 1, "once more") == ["SELF_HEAL escalated"]
    state = SelfHealStore(ctx.store).current()
    assert state is not None
    assert (state.status, state.iteration) == ("escalated", MAX_ITERATIONS + 1)
    assert escalations(ctx) == 1
    assert ctx.store.pending_tasks(OWNER) == []
    # Escalated: the model can neither resolve it nor go on.
    assert "escalated" in apply(ctx, "SELF_HEAL_RESOLVED")[0]
    assert "escalated" in heal(ctx, 1)[0]


def test_resolving_after_every_ten_never_lifts_the_cap(ctx: MarkerContext) -> None:
    """The auditor's loop: 3 x (10 SELF_HEAL, then SELF_HEAL_RESOLVED)."""
    for cycle in range(3):
        heal(ctx, 10, f"cycle {cycle}")
        apply(ctx, "Verified.\nSELF_HEAL_RESOLVED")
    rows = ctx.store.query("SELECT iteration, status FROM self_heal_sessions ORDER BY id")
    assert [(r["iteration"], r["status"]) for r in rows] == [
        (MAX_ITERATIONS, "resolved"),
        (MAX_ITERATIONS + 1, "escalated"),
    ]
    assert escalations(ctx) == 1


def test_iterations_older_than_a_day_no_longer_count(ctx: MarkerContext) -> None:
    heal(ctx, MAX_ITERATIONS - 1)
    apply(ctx, "Verified.\nSELF_HEAL_RESOLVED")
    assert heal(ctx, 1, "next") == ["SELF_HEAL iteration 10"]
    apply(ctx, "Verified.\nSELF_HEAL_RESOLVED")
    day_ago = to_db_time(datetime.now(UTC) - timedelta(hours=24, minutes=1))
    with ctx.store.transaction() as conn:  # the clock moves a day on
        conn.execute("UPDATE self_heal_events SET created_at = ?", (day_ago,))
    assert heal(ctx, 1, "a day later") == ["SELF_HEAL iteration 1"]


def test_the_owner_clearing_starts_the_count_again(ctx: MarkerContext) -> None:
    heal(ctx, MAX_ITERATIONS + 1)
    assert escalations(ctx) == 1
    assert command(ctx, "/selfheal clear", channel="telegram", sender="42").startswith("Cleared")
    assert heal(ctx, 1, "after the owner") == ["SELF_HEAL iteration 1"]
