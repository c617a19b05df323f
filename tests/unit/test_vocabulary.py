"""One vocabulary for replies and audit: a reply to a message is `message.answer(...)`, an audit
row is filled from a model's answer by `usage_fields`, and `audit_message` takes AuditEntry's
own fields (mypy checks their names)."""

from __future__ import annotations

import asyncio

import pytest

from omega.turn import audit_message, usage_fields
from omega.types import IncomingMessage, OutgoingMessage, Reply, Usage
from tests.conftest import MakeDeps

REPLY = Reply(
    text="hi",
    provider="openai",
    model="gpt-x",
    usage=Usage(input_tokens=120, output_tokens=7, cost_usd=0.25, cached_tokens=100),
)


@pytest.mark.no_store
def test_usage_fields_are_what_a_model_answer_fills_in_an_audit_row() -> None:
    assert usage_fields(REPLY) == {
        "provider": "openai",
        "model": "gpt-x",
        "input_tokens": 120,
        "output_tokens": 7,
        "cost_usd": 0.25,
        "cached_tokens": 100,
    }
    assert usage_fields(None, provider="claude") == {
        "provider": "claude",
        "model": "",
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "cached_tokens": 0,
    }


@pytest.mark.no_store
def test_an_answer_goes_where_the_messages_replies_go() -> None:
    message = IncomingMessage(
        "telegram", "42", "hi", reply_target="-100", id="m-1", assurance="platform"
    )
    # Without a tag, the id is the kind and a digest of the text: stable, and of this turn.
    hello = message.answer("hello")
    assert hello == OutgoingMessage("telegram", "-100", "hello", id=hello.id, reply_to="m-1")
    assert hello.id.startswith("m-1#reply-") and message.answer("hello").id == hello.id
    wait = message.answer("wait", "status")
    assert (wait.kind, wait.reply_to) == ("status", "m-1") and wait.id.startswith("m-1#status-")
    assert message.answer("wait more", "status").id != wait.id
    assert message.answer("Got it", "ack", tag="ack") == OutgoingMessage(
        "telegram", "-100", "Got it", kind="ack", id="m-1#ack", reply_to="m-1"
    )


def test_audit_message_writes_the_sender_their_text_and_the_models_usage(
    make_deps: MakeDeps,
) -> None:
    deps = make_deps()
    store = deps.store
    message = IncomingMessage("terminal", "ana", "what is up", sender_name="Ana", assurance="local")
    asyncio.run(audit_message(deps, message, status="ok", output_text="hi", **usage_fields(REPLY)))
    asyncio.run(audit_message(deps, message, status="denied", input_text="", event="x"))
    first, second = sorted(store.audit_entries(), key=lambda row: int(str(row["id"])))
    assert {k: first[k] for k in ("sender_name", "input_text", "output_text", "event")} == {
        "sender_name": "Ana",
        "input_text": "what is up",
        "output_text": "hi",
        "event": "exchange",
    }
    assert (first["model"], first["input_tokens"], first["cost_usd"]) == ("gpt-x", 120, 0.25)
    assert (second["input_text"], second["status"], second["event"]) == ("", "denied", "x")
