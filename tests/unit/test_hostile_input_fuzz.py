"""Hostile input, fuzzed with hypothesis: the JSONL parser only ever returns a clean message or
raises ValueError, the JSONL channel reads every line whatever came before, and the real
gateway and pipeline answer and audit every message whatever its text or sender id."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omega.channels.terminal import JsonlChannel, parse_jsonl_line
from omega.gateway.gateway import Gateway
from omega.types import IncomingMessage, OutgoingMessage
from tests.conftest import MakeDeps
from tests.fakes.providers import EchoProvider

SURROGATE = re.compile("[\ud800-\udfff]")
# Text as hostile as it gets: any code point, lone surrogates included.
any_text = st.text(st.characters(codec=None, categories=None), max_size=60)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | any_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4)
    ),
    max_leaves=12,
)
message_objects = st.fixed_dictionaries(
    {},
    optional={
        "text": any_text | json_values,
        "sender_id": any_text | st.integers() | json_values,
        "sender_name": any_text | json_values,
        "is_group": st.booleans() | json_values,
        "id": any_text | st.integers() | json_values,
        "attachments": json_values
        | st.lists(
            st.binary(max_size=40).map(
                lambda b: {"kind": "document", "data": base64.b64encode(b).decode("ascii")}
            ),
            max_size=2,
        ),
    },
)


def lines() -> st.SearchStrategy[str]:
    """Input lines: JSON-looking objects, mangled JSON, deep nesting, arbitrary text."""
    objects = message_objects.map(lambda obj: json.dumps(obj, ensure_ascii=True))
    mangled = st.tuples(objects, st.integers(0, 200)).map(lambda t: t[0][: t[1]])
    deep = st.integers(1, 300_000).map(lambda n: "[" * n)
    return objects | mangled | deep | any_text


def check_clean(message: IncomingMessage) -> None:
    for value in (message.text, message.sender_id, message.sender_name, message.id):
        assert not SURROGATE.search(value)
        value.encode("utf-8")  # storable and printable


@pytest.mark.no_store
@settings(max_examples=400, deadline=None)
@given(lines())
def test_the_parser_returns_a_clean_message_or_a_value_error(line: str) -> None:
    try:
        message = parse_jsonl_line(line, "me")
    except ValueError as exc:
        assert str(exc)
        return
    check_clean(message)
    assert message.sender_id.strip()


@pytest.mark.no_store
@settings(max_examples=300, deadline=None)
@given(message_objects)
def test_valid_objects_with_any_strings_always_parse(obj: dict[str, Any]) -> None:
    line = json.dumps(obj)  # ensure_ascii: lone surrogates travel as \ud800 escapes
    try:
        message = parse_jsonl_line(line, "me")
    except ValueError:
        return
    check_clean(message)
    assert message.text == re.sub(SURROGATE, "\ufffd", obj["text"])


class _Submitted:
    def __init__(self) -> None:
        self.messages: list[IncomingMessage] = []

    async def __call__(self, message: IncomingMessage) -> asyncio.Future[None]:
        self.messages.append(message)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.set_result(None)
        return future


@pytest.mark.no_store
@settings(max_examples=60, deadline=None)
@given(st.lists(lines(), max_size=8))
def test_the_channel_reads_every_line_whatever_came_before(garbage: list[str]) -> None:
    flat = [line.replace("\n", " ").replace("\r", " ") for line in garbage]
    stdin = io.StringIO("".join(f"{line}\n" for line in flat) + '{"text": "the last one"}\n')
    stdout = io.StringIO()
    submitted = _Submitted()
    asyncio.run(JsonlChannel(stdin=stdin, stdout=stdout, default_sender="me").run(submitted))
    assert submitted.messages and submitted.messages[-1].text == "the last one"
    written = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert all(event["kind"] == "error" for event in written)
    non_empty = [line for line in flat if line.strip()]
    assert len(written) + len(submitted.messages) == len(non_empty) + 1


class Recorder:
    name = "terminal"

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []

    async def run(self, submit: object) -> None:
        return None

    async def send(self, message: OutgoingMessage) -> None:
        (message.text + message.target).encode("utf-8")  # a real channel would fail here
        self.sent.append(message)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None


def test_the_pipeline_answers_and_audits_any_text_from_any_sender(make_deps: MakeDeps) -> None:
    deps = make_deps(EchoProvider(suffix="\ud800"))  # a lone surrogate in every answer
    store = deps.store
    senders = any_text.filter(lambda s: bool(s.strip()))
    # Past max_message_chars (20,000) too: cut, told, answered.
    long_texts = st.tuples(any_text, st.integers(20_000, 25_000)).map(lambda t: t[0] + "x" * t[1])

    @settings(
        max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(text=any_text | long_texts, sender=senders)
    def one_message(text: str, sender: str) -> None:
        channel = Recorder()
        before = len(store.audit_entries(10_000))

        async def go() -> None:
            gateway = Gateway(deps, [channel])
            await gateway.submit(IncomingMessage("terminal", sender, text, assurance="local"))
            await gateway.drain()

        asyncio.run(go())
        kinds = [m.kind for m in channel.sent]
        assert kinds.count("reply") + kinds.count("command") + kinds.count("error") == 1, kinds
        assert len(store.audit_entries(10_000)) > before or "command" in kinds

    one_message()
