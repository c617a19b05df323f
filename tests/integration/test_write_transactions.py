"""Issue 40: the writes of a message's answer are few and whole. Store writes made inside
`Store.transaction()` join it (one commit, all or none); a message answered through the
gateway costs five write transactions (accept, claim, count the attempt, keep the answer with
its exchange and audit, mark it done), not eight; and when keeping them together fails, each
part is still written on its own, and the person still gets the answer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest

from omega.gateway.gateway import Gateway
from omega.memory import AuditEntry
from omega.memory.db import Database
from omega.types import IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.channel import RecordingTerminal
from tests.fakes.providers import DIRECT, ScriptedProvider


def typed(number: int) -> IncomingMessage:
    return IncomingMessage(
        "terminal", "me", f"question {number}", id=f"j-{number}", assurance="local"
    )


def counting_commits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per outermost write transaction the store begins from now on."""
    begun: list[int] = []
    outermost = Database._outermost_tx

    @contextlib.contextmanager
    def counted(self: Database) -> Iterator[object]:
        begun.append(1)
        with outermost(self) as conn:
            yield conn

    monkeypatch.setattr(Database, "_outermost_tx", counted)
    return begun


def audit_rows(store: object) -> int:
    return len(store.query("SELECT id FROM audit_log WHERE event = 'exchange'"))  # type: ignore[attr-defined]


def test_writes_inside_a_transaction_commit_together_or_not_at_all(make_deps: MakeDeps) -> None:
    store = make_deps(ScriptedProvider()).store
    entry = AuditEntry("terminal", "me", "ok", input_text="hi")
    with store.transaction():
        store.store_exchange("terminal", "me", "hi", "hello")
        store.audit(entry)
    assert len(store.recent_messages("terminal", "me", 10)) == 2 and audit_rows(store) == 1
    with pytest.raises(RuntimeError), store.transaction():
        store.store_exchange("terminal", "me", "again", "hello again")
        store.audit(entry)
        raise RuntimeError("the last part failed")
    assert len(store.recent_messages("terminal", "me", 10)) == 2 and audit_rows(store) == 1


def test_an_answered_message_costs_five_write_transactions(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = make_deps(
        ScriptedProvider(default="done", plan=DIRECT), OMEGA_PROVIDER__CLASSIFY="false"
    )
    deps.store.set_fact("me", "welcomed", "true")
    terminal = RecordingTerminal()

    async def run() -> list[int]:
        gateway = Gateway(deps, [terminal])
        await (await gateway.submit(typed(0)))  # first-message work (a conversation opens)
        begun = counting_commits(monkeypatch)
        for number in range(1, 4):
            await (await gateway.submit(typed(number)))
        return begun

    begun = asyncio.run(run())
    assert [m.text for m in terminal.sent][-3:] == ["done"] * 3
    assert len(begun) == 3 * 5
    rows = deps.store.query("SELECT status FROM inbox WHERE id IN ('j-1', 'j-2', 'j-3')")
    assert [row["status"] for row in rows] == ["done"] * 3
    assert audit_rows(deps.store) == 4


def test_when_the_answer_cannot_be_kept_whole_its_parts_are_kept_one_by_one(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = make_deps(
        ScriptedProvider(default="done", plan=DIRECT), OMEGA_PROVIDER__CLASSIFY="false"
    )
    terminal = RecordingTerminal()
    store = deps.store
    real_audit = type(store).audit
    failures: list[int] = []

    def audit_fails_once(self: object, entry: AuditEntry) -> None:
        if entry.event == "exchange" and not failures:
            failures.append(1)
            raise RuntimeError("disk hiccup")
        real_audit(self, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(type(store), "audit", audit_fails_once)

    async def run() -> None:
        gateway = Gateway(deps, [terminal])
        await (await gateway.submit(typed(1)))

    asyncio.run(run())
    assert failures == [1]
    assert [m.text for m in terminal.sent if m.kind == "reply"] == ["done"]
    assert [m.content for m in store.recent_messages("terminal", "me", 10)] == [
        "question 1",
        "done",
    ]
    assert audit_rows(store) == 1  # written on the second try, on its own
    [row] = store.query("SELECT status FROM inbox WHERE id = 'j-1'")
    assert row["status"] == "done"
