"""Self-heal markers applied at once (replies, plan steps, scheduled checks, a second replica)
count into one session: each SELF_HEAL is claimed, counted, saved and given its check in one
store transaction, and the schema refuses a second live session. Ending the session ends every
check it scheduled."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from omega.evolution.heal import SelfHealStore
from omega.evolution.heal.sessions import MAX_ITERATIONS, SelfHealingState, remember_check
from omega.markers import parse_markers
from omega.markers.handlers import apply_markers
from omega.memory import Store
from omega.memory.migrations import bundled_migrations
from omega.owner import OWNER
from omega.turn import MarkerContext
from tests.unit.test_limitations_self_heal import apply, ctx, sent

__all__ = ["ctx"]  # the fixture, shared with the unit tests of self-healing


@pytest.fixture
def replica(ctx: MarkerContext) -> Iterator[MarkerContext]:
    """The same owner's markers applied through a second store connection, as another
    replica (its own database thread) would."""
    other = Store(ctx.paths.db)
    yield dataclasses.replace(ctx, store=other)
    other.close()


def at_once(contexts: list[MarkerContext], count: int) -> list[list[str]]:
    """`count` SELF_HEAL markers, each from its own message, applied concurrently, spread
    over `contexts`."""

    async def one(i: int) -> list[str]:
        base = contexts[i % len(contexts)]
        context = dataclasses.replace(
            base, message=dataclasses.replace(base.message, id=uuid.uuid4().hex)
        )
        outcome = await apply_markers(parse_markers(f"SELF_HEAL: attempt {i} | check it"), context)
        return outcome.applied + outcome.failed

    async def all_of_them() -> list[list[str]]:
        return await asyncio.gather(*(one(i) for i in range(count)))

    return asyncio.run(all_of_them())


def sessions(ctx: MarkerContext) -> list[tuple[int, int, str]]:
    rows = ctx.store.query("SELECT id, iteration, status FROM self_heal_sessions ORDER BY id")
    return [(int(r["id"]), int(r["iteration"]), str(r["status"])) for r in rows]


def test_concurrent_markers_count_into_one_session_and_resolving_ends_every_check(
    ctx: MarkerContext, replica: MarkerContext
) -> None:
    count = MAX_ITERATIONS - 2
    outcomes = at_once([ctx, replica], count)
    assert sorted(o[0] for o in outcomes) == sorted(
        f"SELF_HEAL iteration {n}" for n in range(1, count + 1)
    )
    [(session_id, iteration, status)] = sessions(ctx)
    assert (iteration, status) == (count, "open")
    assert len(ctx.store.pending_tasks(OWNER)) == count
    assert len(ctx.store.state_keys(f"self_heal:{session_id}")) == count

    assert apply(ctx, "Verified.\nSELF_HEAL_RESOLVED") == ["SELF_HEAL_RESOLVED resolved"]
    assert sessions(ctx) == [(session_id, count, "resolved")]
    assert ctx.store.pending_tasks(OWNER) == []
    [detail] = [
        str(e["detail"])
        for e in ctx.store.audit_entries()
        if e["event"] == "self_heal:checks_cancelled"
    ]
    assert detail.count("cancelled task") == count


def test_concurrent_markers_past_the_cap_escalate_once(
    ctx: MarkerContext, replica: MarkerContext
) -> None:
    count = MAX_ITERATIONS + 2
    outcomes = at_once([ctx, replica], count)
    assert sum(o == ["SELF_HEAL escalated"] for o in outcomes) == 1
    assert sum("escalated; only the owner" in o[0] for o in outcomes) == 1
    [(_, iteration, status)] = sessions(ctx)
    assert (iteration, status) == (MAX_ITERATIONS + 1, "escalated")
    assert ctx.store.pending_tasks(OWNER) == []  # the ten checks were cancelled
    assert len([m for m in sent(ctx) if "ESCALATION" in m.text]) == 1
    # The model cannot close it; the session and its count stay for the owner.
    assert "escalated" in apply(ctx, "SELF_HEAL_RESOLVED")[0]
    assert sessions(ctx)[0][1:] == (MAX_ITERATIONS + 1, "escalated")


def test_the_schema_refuses_a_second_live_session(ctx: MarkerContext) -> None:
    repo = SelfHealStore(ctx.store)
    repo.save(SelfHealingState(anomaly="one", verification="v", iteration=1))
    with pytest.raises(sqlite3.IntegrityError):
        repo.save(SelfHealingState(anomaly="two", verification="v", iteration=1))
    repo.save(SelfHealingState(anomaly="done", verification="v", status="resolved"))
    assert [s[2] for s in sessions(ctx)] == ["open", "resolved"]


def test_the_migration_clears_sessions_an_earlier_race_left_live(ctx: MarkerContext) -> None:
    """A store that raced before this fix holds several live sessions: upgrading keeps the
    newest, clears the others and cancels their checks."""
    [migration] = [m for m in bundled_migrations() if m.name == "self_heal_one_live"]
    store = ctx.store
    with store.transaction() as conn:
        conn.execute("DROP INDEX idx_self_heal_sessions_live")
        conn.execute("DROP INDEX idx_self_heal_events_created")
        conn.execute("DELETE FROM schema_migrations WHERE version = ?", (migration.version,))
    repo = SelfHealStore(store)
    tasks: list[str] = []
    ids: list[int] = []
    for n in range(3):
        state = repo.save(SelfHealingState(anomaly=f"race {n}", verification="v", iteration=1))
        task_id, _ = store.create_task(
            channel=OWNER,
            sender_id=OWNER,
            reply_target=OWNER,
            description=f"check {n}",
            due_at=datetime.now(UTC) + timedelta(minutes=2),
            task_type="action",
        )
        remember_check(store, state.id, task_id)
        tasks.append(task_id)
        ids.append(state.id)
    store.close()
    upgraded = Store(ctx.paths.db)
    try:
        rows = upgraded.query("SELECT anomaly, status FROM self_heal_sessions ORDER BY id")
        assert [(r["anomaly"], r["status"]) for r in rows] == [
            ("race 0", "cleared"),
            ("race 1", "cleared"),
            ("race 2", "open"),
        ]
        assert [t.id for t in upgraded.pending_tasks(OWNER)] == [tasks[2]]
        assert [len(upgraded.state_keys(f"self_heal:{i}")) for i in ids] == [0, 0, 1]
    finally:
        upgraded.close()
