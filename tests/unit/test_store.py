"""The store: per-sender facts, history, FTS recall, the audit log and the durable inbox."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from omega.memory import AuditEntry, Store
from omega.memory.conversations import fts_query
from omega.types import Attachment, ChatMessage, IncomingMessage


def test_facts_are_kept_per_sender(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    store.set_fact("alice", "name", "Alice")
    store.set_fact("bob", "name", "Bob")
    store.set_fact("alice", "name", "Alice B.")
    assert store.facts("alice") == {"name": "Alice B."}
    assert store.facts("bob") == {"name": "Bob"}
    assert store.delete_facts("alice") == 1
    assert store.facts("alice") == {}
    assert store.facts("bob") == {"name": "Bob"}
    store.close()


def test_history_is_per_sender_and_ordered(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    store.store_exchange("terminal", "a", "hello", "hi a")
    store.store_exchange("terminal", "b", "yo", "hi b")
    store.store_exchange("terminal", "a", "again", "hi again")
    assert store.recent_messages("terminal", "a", 10) == [
        ChatMessage("user", "hello"),
        ChatMessage("assistant", "hi a"),
        ChatMessage("user", "again"),
        ChatMessage("assistant", "hi again"),
    ]
    assert store.recent_messages("terminal", "a", 2)[0] == ChatMessage("user", "again")
    assert len(store.recent_messages("terminal", "b", 10)) == 2
    store.close()


def test_fts_recall_finds_closed_conversations_of_that_sender_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    first = store.store_exchange("terminal", "a", "my sister lives in Lisbon", "noted")
    store.store_exchange("terminal", "b", "Lisbon is lovely", "indeed")
    store.close_conversation(first, "Talked about family.")
    current = store.active_conversation("terminal", "a")
    found = store.search_messages(
        "a", "where does my sister live, Lisbon?", exclude_conversation=current
    )
    assert [m.content for m in found] == ["my sister lives in Lisbon"]
    assert store.recent_summaries("a") == ["Talked about family."]
    store.store_exchange("terminal", 'odd "id" OR *', "Lisbon trip", "ok")
    assert [m.content for m in store.search_messages('odd "id" OR *', "Lisbon")] == ["Lisbon trip"]
    store.close()


@pytest.mark.no_store
def test_fts_query_neutralizes_operators() -> None:
    assert fts_query('a" OR x* NEAR(') == '"near"'
    assert fts_query("") == ""
    assert fts_query("hello hello world") == '"hello" OR "world"'
    assert fts_query("what about the garden") == '"garden"'


def test_audit_entries_are_written(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    store.audit(
        AuditEntry(
            channel="terminal",
            sender_id="a",
            status="ok",
            input_text="hi",
            output_text="hello",
            provider="openai",
            model="m",
            input_tokens=10,
            output_tokens=2,
            cost_usd=0.001,
        )
    )
    [row] = store.audit_entries()
    assert row["status"] == "ok"
    assert row["input_tokens"] == 10
    assert row["provider"] == "openai"
    store.close()


def test_a_thread_is_a_conversation_of_its_own(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    store.store_exchange("slack", "ana", "in the DM", "dm answer")
    store.store_exchange("slack", "ana", "in thread one", "one answer", thread="C1:100.1")
    store.store_exchange("slack", "ana", "in thread two", "two answer", thread="C1:200.2")
    assert [m.content for m in store.recent_messages("slack", "ana", 10)] == [
        "in the DM",
        "dm answer",
    ]
    assert [m.content for m in store.recent_messages("slack", "ana", 10, "C1:100.1")] == [
        "in thread one",
        "one answer",
    ]
    # /new in one thread closes that thread's conversation only.
    one = store.active_conversation_id("slack", "ana", "C1:100.1")
    assert store.close_active_conversation("slack", "ana", "C1:100.1") == one
    assert store.recent_messages("slack", "ana", 10, "C1:100.1") == []
    assert len(store.recent_messages("slack", "ana", 10, "C1:200.2")) == 2
    assert len(store.recent_messages("slack", "ana", 10)) == 2
    # A hostile mail's Message-ID of any length is still a thread key (PostgreSQL's index
    # refuses entries past ~2.7 kB): the exchange is kept and found again.
    huge = "<" + secrets.token_hex(10_000) + "@evil.example>"  # (random: not compressible)
    store.store_exchange("email", "ana", "long id", "kept", thread=huge)
    assert [m.content for m in store.recent_messages("email", "ana", 10, huge)] == [
        "long id",
        "kept",
    ]
    assert store.recent_messages("email", "ana", 10, huge[:-1]) == []
    # A message waiting in the inbox keeps its thread across a restart.
    store.inbox_put(
        IncomingMessage("slack", "ana", "later", id="m1", thread="C1:200.2", assurance="platform")
    )
    store.close()
    store = Store(tmp_path / "m.db")
    assert [m.thread for m in store.inbox_pending()] == ["C1:200.2"]
    store.close()


def test_inbox_keeps_unfinished_messages_in_order(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = Store(db)
    first = IncomingMessage(
        channel="terminal",
        sender_id="a",
        text="one",
        attachments=[Attachment(kind="image", data=b"\x89PNG", name="../x")],
        assurance="local",
    )
    second = IncomingMessage(
        channel="terminal", sender_id="b", text="two", is_group=True, assurance="local"
    )
    third = IncomingMessage(channel="terminal", sender_id="a", text="three", assurance="local")
    for message in (first, second, third):
        store.inbox_put(message)
    store.inbox_put(first)  # the same message again is not duplicated
    store.inbox_finish(second.id)
    store.close()

    store = Store(db)  # as after a restart
    pending = store.inbox_pending()
    assert [m.text for m in pending] == ["one", "three"]
    assert pending[0].id == first.id
    assert pending[0].attachments[0].data == b"\x89PNG"
    store.inbox_finish(first.id, error="boom")
    assert [m.text for m in store.inbox_pending()] == ["three"]
    assert store.counts()["inbox_pending"] == 1
    store.close()


def test_recall_ranks_messages_holding_more_of_the_words_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    old = store.store_exchange("terminal", "a", "the café garden budget plan", "ok")
    for i in range(60):  # newer messages that hold only one of the words
        store.store_exchange("terminal", "a", f"garden note {i}", "ok")
    store.store_exchange("terminal", "b", "garden budget cafe for b", "ok")
    store.close_conversation(old, "")
    found = store.search_messages("a", "cafe garden budget?", limit=3)
    assert found[0].content == "the café garden budget plan"  # every word, diacritics folded
    assert [m.content for m in found[1:]] == ["garden note 59", "garden note 58"]
    assert all("for b" not in m.content for m in found)
    store.close()
