"""The report's period and cost groups: what happened before the period stays out of it, and
audit events are counted as self-evolution, other background work, or not at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omega.evolution.gaps import LimitationStore
from omega.evolution.reflection import evolution_report, since_days
from omega.evolution.reflection.report import cost_group
from omega.memory import Store
from omega.memory.audit import AuditEntry


@pytest.mark.no_store
def test_audit_events_fall_into_their_cost_group() -> None:
    assert cost_group("introspection") == "self_evolution"
    assert cost_group("proposal:new") == "self_evolution"
    assert cost_group("critic:tools") == "self_evolution"
    assert cost_group("gate_judgement") == "self_evolution"
    assert cost_group("gate_judge") == "self_evolution"  # the audit_as of evolution/judge.py
    assert cost_group("summary") == "background"
    assert cost_group("plan_summary") == "background"
    assert cost_group("exchange") is None
    assert cost_group("introspections") is None  # a name matches whole, only `x:` is a prefix
    assert cost_group("proposal") is None


def test_only_the_period_is_reported(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        limitations = LimitationStore(store)
        old, _ = limitations.add("Cannot scan paper")
        limitations.resolve(str(old.id), "a scanner skill", by="owner")
        new, _ = limitations.add("Cannot print")
        for event, cost in (("introspection", 0.5), ("introspection", 0.25), ("exchange", 9.0)):
            store.audit(
                AuditEntry(
                    channel="omega",
                    sender_id="",
                    status="ok",
                    event=event,
                    input_tokens=100,
                    output_tokens=10,
                    cost_usd=cost,
                )
            )
        ten_days_ago = (datetime.now(UTC) - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with store.transaction() as conn:
            conn.execute(
                "UPDATE limitations SET created_at = ? WHERE id = ?", (ten_days_ago, old.id)
            )
            conn.execute("UPDATE audit_log SET created_at = ? WHERE id = 1", (ten_days_ago,))
        report = evolution_report(store, since_days(7))
        assert [g.title for g in report.gaps_opened] == ["Cannot print"]
        assert [g.title for g in report.gaps_closed] == ["Cannot scan paper"]  # closed this week
        assert [g.id for g in report.gaps] == [old.id, new.id]
        assert report.gaps_open_now == 1
        [line] = report.cost
        assert (line.event, line.calls, line.cost_usd) == ("introspection", 1, 0.25)
        assert report.totals("self_evolution")["cost_usd"] == 0.25
        assert report.totals("background")["calls"] == 0
        assert evolution_report(store, since_days(30)).totals("self_evolution")["calls"] == 2
    finally:
        store.close()
