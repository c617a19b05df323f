"""The store and gateway pieces of issue 17: the denial record, the inbox's kept replies and
handled ids, audit rows that are always written and never hold a secret, ingress limits, and
redaction of what leaves Omega."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.config.safety import LimitsSection
from omega.gateway import ingress
from omega.gateway.outbound import redacted
from omega.logs import REDACTED, redact, redact_url, register_secret
from omega.memory import Store
from omega.memory import inbox as inbox_module
from omega.memory.audit import AuditEntry
from omega.types import Attachment, IncomingMessage, OutgoingMessage
from tests.dbfile import connect_db


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "memory.db")


def test_a_denial_is_due_once_per_period_and_counts_what_was_dropped(store: Store) -> None:
    assert store.denial_due("telegram", "666", 86_400) == (True, 0)
    assert store.denial_due("telegram", "666", 86_400) == (False, 1)
    assert store.denial_due("telegram", "666", 86_400) == (False, 2)
    assert store.denial_due("whatsapp", "666", 86_400) == (True, 0)  # per channel
    with store.transaction() as conn:
        conn.execute("UPDATE denials SET last_at = '2000-01-01T00:00:00.000000Z'")
    assert store.denial_due("telegram", "666", 86_400) == (True, 2)
    # Senders quiet for the whole period are forgotten (the table stays small).
    assert [tuple(r) for r in store.query("SELECT channel FROM denials")] == [("telegram",)]


def test_a_message_id_is_taken_once_and_remembered_without_its_text(store: Store) -> None:
    message = IncomingMessage("terminal", "ana", "private words", id="jsonl:1", assurance="local")
    assert store.inbox_put(message) is True
    assert store.inbox_put(message) is False  # pending: a duplicate
    store.inbox_finish("jsonl:1")
    assert store.inbox_put(message) is False  # handled: still a duplicate
    [row] = store.query("SELECT status, payload, reply FROM inbox")
    assert tuple(row) == ("done", "{}", None)
    assert store.inbox_pending() == []


def test_only_the_newest_handled_ids_are_kept(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox_module, "INBOX_DONE_KEPT", 3)
    for i in range(6):
        store.inbox_put(IncomingMessage("terminal", "ana", "x", id=f"m{i}", assurance="local"))
        store.inbox_finish(f"m{i}")
    assert [r[0] for r in store.query("SELECT id FROM inbox ORDER BY seq")] == ["m3", "m4", "m5"]


def test_a_kept_reply_comes_back_until_the_message_is_done(store: Store) -> None:
    store.inbox_put(IncomingMessage("terminal", "ana", "hi", id="m1", assurance="local"))
    assert store.inbox_stored_reply("m1") is None
    reply = OutgoingMessage("terminal", "ana", "hello \ud800", kind="reply")
    assert store.inbox_store_reply("m1", [reply], ["/w/chart.png"]) is True
    messages, images = store.inbox_stored_reply("m1") or ([], [])
    assert messages == [OutgoingMessage("terminal", "ana", "hello \ufffd", kind="reply")]
    assert images == ["/w/chart.png"]
    store.inbox_finish("m1")
    assert store.inbox_stored_reply("m1") is None
    assert store.inbox_store_reply("task:abc", [reply]) is False  # no inbox row: nothing kept
    store.inbox_finish("m1", "a late error")  # already answered: stays done, not failed
    [row] = store.query("SELECT status FROM inbox WHERE id = 'm1'")
    assert row[0] == "done"


def test_an_audit_row_is_always_written_and_never_holds_a_secret(store: Store) -> None:
    register_secret("configured-secret-value-77")
    store.audit(
        AuditEntry(
            channel="terminal",
            sender_id="eve\udc80",
            status="error",
            input_text="lone \ud800 surrogate",
            detail="HTTP 401: key configured-secret-value-77 and sk-abcdefghijklmnop rejected; "
            "base https://bob:pw123456@llm.example/v1",
        )
    )
    [row] = store.audit_entries()
    assert row["sender_id"] == "eve\ufffd"
    assert row["input_text"] == "lone \ufffd surrogate"
    detail = str(row["detail"])
    assert "configured-secret-value-77" not in detail and "sk-abcdefghijklmnop" not in detail
    assert "pw123456" not in detail and "https://***@llm.example/v1" in detail


def test_recall_survives_a_sender_id_with_a_nul(store: Store) -> None:
    store.store_exchange("terminal", "a\0b", "garden plans", "ok")
    assert store.search_messages("a\0b", "garden") != []


@pytest.mark.no_store
def test_urls_lose_their_credentials() -> None:
    assert redact_url("https://user:pass@host:8080/v1") == "https://***@host:8080/v1"
    assert redact_url("http://localhost:11434/v1") == "http://localhost:11434/v1"
    assert redact("see postgres://app:secret@db/prod now") == "see postgres://***@db/prod now"


@pytest.mark.no_store
def test_ingress_cuts_long_text_refuses_big_attachments_and_scrubs() -> None:
    limits = LimitsSection(max_message_chars=100, max_attachment_bytes=1024)
    message = IncomingMessage(
        "terminal",
        "ana\ud800",
        "y" * 150,
        attachments=[
            Attachment("image", b"\0" * 2048, name="big.png"),
            Attachment("document", b"small", name="a.txt"),
        ],
        assurance="local",
    )
    cleaned = ingress.clean(message)
    assert cleaned.sender_id == "ana\ufffd"
    kept, notices = ingress.within_limits(cleaned, limits)
    assert kept.text == "y" * 100
    assert [a.name for a in kept.attachments] == ["a.txt"]
    assert [(n.key, n.values) for n in notices] == [
        ("message_cut", {"kept": 100, "total": 150}),
        ("attachment_refused", {"name": "'big.png'", "size": "2.0 KB", "limit": "1.0 KB"}),
    ]
    untouched = IncomingMessage("terminal", "ana", "short", assurance="local")
    assert ingress.within_limits(untouched, limits) == (untouched, [])


@pytest.mark.no_store
def test_what_leaves_omega_is_redacted() -> None:
    register_secret("configured-secret-value-88")
    error = OutgoingMessage("terminal", "ana", "failed: sk-abcdefghijklmnop", kind="status")
    assert redacted(error).text == f"failed: {REDACTED}"
    # A reply keeps ordinary text that merely looks like a credential, but never a
    # configured secret.
    reply = OutgoingMessage(
        "terminal", "ana", "password: hunter22 and configured-secret-value-88", kind="reply"
    )
    assert redacted(reply).text == f"password: hunter22 and {REDACTED}"


@pytest.mark.sqlite_only  # the SQLite file as version 008 left it
def test_migration_009_keeps_older_inbox_rows(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    Store(db).close()
    with connect_db(db) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(inbox)")}
    assert {"reply", "replied_at"} <= columns
