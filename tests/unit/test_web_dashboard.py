"""The dashboard's queries (filters, paging, LIKE text taken literally, purge) and charts
(labels escaped)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.evolution.gaps import LimitationStore
from omega.memory import dashboard
from omega.memory.store import Store
from omega.web.charts import rate_bars, stacked_bars
from omega.web.security import Sessions


def test_limitations_filter_and_page(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        repo = LimitationStore(store)
        for i in range(30):
            repo.add(f"limit {i}", "100% sure" if i == 7 else "other")
        repo.resolve("1", "done")
        first = dashboard.limitations(store, "open")
        assert (first.total, len(first.rows), first.pages, first.has_next) == (29, 25, 2, True)
        second = dashboard.limitations(store, "open", page=2)
        assert len(second.rows) == 4 and second.has_prev and not second.has_next
        assert dashboard.limitations(store, "resolved").total == 1
        # "%" is a character to look for, not a wildcard.
        assert [r["title"] for r in dashboard.limitations(store, q="100%").rows] == ["limit 7"]
        assert dashboard.limitations(store, q="%").total == 1
    finally:
        store.close()


def test_purge_person_forgets_their_memory_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        store.store_exchange("telegram", "ana", "hi", "hello Ana")
        store.store_exchange("telegram", "bo", "hi", "hello Bo")
        store.set_fact("ana", "city", "Lisbon")
        store.set_fact("bo", "city", "Porto")
        gone = dashboard.purge_person(store, "ana")
        assert gone["facts"] == 1 and gone["conversations"] == 1
        assert store.facts("ana") == {}
        assert store.facts("bo") == {"city": "Porto"}
        assert [p["person"] for p in dashboard.people(store).rows] == ["bo"]
        left = store.query("SELECT sender_id FROM messages WHERE role = 'assistant'")
        assert [row["sender_id"] for row in left] == ["bo"]
    finally:
        store.close()


@pytest.mark.no_store
def test_chart_labels_are_escaped() -> None:
    evil = "<script>alert(1)</script>"
    svg = str(stacked_bars(evil, ["2026-01-01"], {evil: [3.0]}))
    svg += str(rate_bars(evil, [(evil, 0.5, evil)]))
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg


def test_login_token_is_one_time_and_the_file_private(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    sessions = Sessions(tmp_path / "web.url", "http://127.0.0.1:1", 1, store)
    link = sessions.new_login_link()
    token = link.split("token=")[1]
    assert (tmp_path / "web.url").stat().st_mode & 0o777 == 0o600
    session = asyncio.run(sessions.login(token))
    assert session is not None and asyncio.run(sessions.get(session.id)) == session
    assert asyncio.run(sessions.login(token)) is None
    assert asyncio.run(sessions.login("")) is None
    assert token not in (tmp_path / "web.url").read_text()
    store.close()


def test_usage_counts_the_prompt_tokens_read_from_cache(tmp_path: Path) -> None:
    from omega.memory.audit import AuditEntry

    store = Store(tmp_path / "m.db")
    for cached in (0, 700):
        store.audit(
            AuditEntry(
                "terminal",
                "ana",
                "ok",
                provider="anthropic",
                input_tokens=1000,
                cached_tokens=cached,
            )
        )
    (row,) = dashboard.usage_by_day(store)
    assert (row["input_tokens"], row["cached_tokens"], row["calls"]) == (2000, 700, 2)
    assert [e["cached_tokens"] for e in store.audit_entries()] == [700, 0]
    store.close()
