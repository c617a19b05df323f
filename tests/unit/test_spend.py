"""The daily spending cap's arithmetic (turn/spend.py) and the audit queries it rests on."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from omega.memory import Store
from omega.memory.audit import AuditEntry, call_kind
from omega.memory.db import to_db_time
from omega.turn.spend import allowance, refusal, today
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder


def spend(store: Store, usd: float | None, provider: str = "openai", days_ago: int = 0) -> None:
    """An audited call of today (or `days_ago`) that cost `usd`."""
    store.audit(
        AuditEntry(
            channel="t",
            sender_id="s",
            status="ok",
            event="exchange",
            provider=provider,
            cost_usd=usd,
        )
    )
    if days_ago:
        with store.transaction() as conn:
            conn.execute(
                "UPDATE audit_log SET created_at = ? WHERE id = (SELECT MAX(id) FROM audit_log)",
                (to_db_time(datetime.now(UTC) - timedelta(days=days_ago)),),
            )


def test_today_counts_priced_provider_calls_of_the_utc_day_only(make_deps: MakeDeps) -> None:
    store = make_deps().store
    spend(store, 0.25)
    spend(store, None)  # not reported: counts as 0
    spend(store, 5.0, provider="")  # a bookkeeping row, not a call
    spend(store, 7.0, days_ago=1)
    assert store.spent_since(today()) == pytest.approx(0.25)


def test_audit_once_claims_an_event_once_a_day(make_deps: MakeDeps) -> None:
    store = make_deps().store
    entry = AuditEntry(channel="omega", sender_id="", status="denied", event="spending_cap:x")
    assert store.audit_once(entry, today()) is True
    assert store.audit_once(entry, today()) is False
    assert store.audit_once(entry, "9999-01-01") is True  # a later day claims it again


@pytest.mark.parametrize(
    ("spent", "event", "allowed"),
    [
        (0.79, "introspection", True),
        (0.80, "introspection", False),
        (0.80, "summary", False),
        (0.80, "heartbeat", False),
        (0.80, "something_new", False),  # an unknown kind of call is background work
        (0.80, "exchange", True),
        (0.99, "classify", True),
        (0.99, "ask", True),
        (1.00, "exchange", False),
        (1.00, "step", False),
    ],
)
def test_background_stops_at_80_percent_and_replies_at_the_cap(
    make_deps: MakeDeps, spent: float, event: str, allowed: bool
) -> None:
    deps = make_deps(OMEGA_LIMITS__DAILY_USD="1")
    spend(deps.store, spent)
    assert asyncio.run(allowance(deps, event)).allowed is allowed


def test_a_refusal_tells_the_owner_once_and_no_cap_refuses_nothing(make_deps: MakeDeps) -> None:
    deps = make_deps(OMEGA_LIMITS__DAILY_USD="1")
    spend(deps.store, 2.0)
    told = Recorder()
    deps.state.tell_owner = told.send
    errors = [asyncio.run(refusal(deps, event)) for event in ("summary", "facts", "exchange")]
    assert [e.kind if e else None for e in errors] == ["spending_cap"] * 3
    assert len(told.sent) == 2  # background once, replies once
    assert "background work" in told.sent[0].text and "replies" in told.sent[1].text
    assert call_kind("facts") == "summaries" and call_kind("exchange") == "reply"
    uncapped = make_deps(OMEGA_LIMITS__DAILY_USD="0")
    assert asyncio.run(refusal(uncapped, "introspection")) is None
