"""Parsing `omega chat --jsonl` input lines: strict about fields, never crashes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.channels.terminal import parse_jsonl_line

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_only_text_is_required() -> None:
    message = parse_jsonl_line('{"text": "hi"}', default_sender="me")
    assert (message.text, message.sender_id, message.is_group) == ("hi", "me", False)
    assert message.channel == "terminal"


def test_all_fields() -> None:
    line = json.dumps({"text": "yo", "sender_id": 42, "sender_name": "Ann", "is_group": True})
    message = parse_jsonl_line(line, default_sender="me")
    assert (message.sender_id, message.sender_name, message.is_group) == ("42", "Ann", True)


@pytest.mark.parametrize(
    "line, problem",
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"sender_id": "a"}', "'text' is required"),
        ('{"text": 5}', "'text' is required"),
        ('{"text": "x", "sender_id": ""}', "sender_id"),
        ('{"text": "x", "is_group": "yes"}', "is_group"),
        ('{"text": "x", "sender_name": []}', "sender_name"),
    ],
)
def test_bad_lines_are_rejected_with_a_reason(line: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_jsonl_line(line, default_sender="me")


@given(st.text(max_size=300))
def test_any_text_either_parses_or_raises_value_error(line: str) -> None:
    try:
        message = parse_jsonl_line(line, default_sender="me")
    except ValueError:
        return
    assert isinstance(message.text, str)


@given(
    st.dictionaries(
        st.sampled_from(["text", "sender_id", "sender_name", "is_group", "x"]),
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    )
)
def test_any_object_either_parses_or_raises_value_error(data: dict[str, object]) -> None:
    try:
        message = parse_jsonl_line(json.dumps(data), default_sender="me")
    except ValueError:
        return
    assert message.text == data["text"]


def test_every_event_is_one_line_whatever_its_strings_hold() -> None:
    # U+0085, U+2028 and U+2029 are legal raw in a JSON string, but line readers split on them
    # (hypothesis found an error event echoing an id with U+0085 read as two broken lines).
    import asyncio
    import io

    from omega.channels.terminal import JsonlChannel
    from omega.types import IncomingMessage

    class Submitted:
        async def __call__(self, message: IncomingMessage) -> asyncio.Future[None]:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            future.set_result(None)
            return future

    stdout = io.StringIO()
    stdin = io.StringIO('{"id": "0\\u00850\\u2028\\u2029"}\n')
    asyncio.run(JsonlChannel(stdin=stdin, stdout=stdout, default_sender="me").run(Submitted()))
    [line] = stdout.getvalue().splitlines()
    assert json.loads(line)["kind"] == "error"
    assert str(json.loads(line)["id"]).startswith("0\x850")
