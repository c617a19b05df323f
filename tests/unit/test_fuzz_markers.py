"""Each marker's arguments as a model may write them, fuzzed: parse_markers never raises and
returns quickly on long repetitive replies, every event it returns carries fields its handler
can use (times and repeats that parse, ids, numbers in range), and its visible text holds no
marker (parsing it again finds nothing)."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.markers.registry import MARKERS, SPECS, parse_markers
from omega.schedule import parse_repeat, parse_when

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

any_text = st.text(st.characters(codec=None, categories=None), max_size=40)
field_text = st.one_of(
    any_text,
    st.sampled_from(
        [
            "2026-05-01T09:00",
            "2026-13-45T99:99",
            "tomorrow",
            "daily",
            "weekly",
            "DAILY",
            "abcd",
            "abcd1234",
            "0",
            "1440",
            "1441",
            "-5",
            "+7",
            "１２",
            "German",
            "<title>",
            "...",
            "",
            "\u202e",
            "e\u0301",
            "\x00",
            "9999-12-31T23:59",
            "0001-01-01T00:00+14:00",
        ]
    ),
)
names = st.sampled_from([spec.name for spec in MARKERS])
decor = st.sampled_from(["", "- ", "* ", "**", "`", "> ", "1. ", "Sure. ", "ok "])


@st.composite
def marker_lines(draw: st.DrawFn) -> str:
    """`NAME: f1 | f2 ...`, decorated as models do, sometimes mid-line or in lower case."""
    name = draw(names)
    name = name.lower() if draw(st.booleans()) and draw(st.booleans()) else name
    fields = draw(st.lists(field_text, max_size=5))
    colon = draw(st.sampled_from([":", ":", " :", ""]))
    return f"{draw(decor)}{name}{colon} {' | '.join(fields)}"


replies = st.lists(marker_lines() | any_text, max_size=6).map("\n".join)
repetitive = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from(
        ["a:", "SCHEDULE: ", "SCHEDULE:|", "| ", "- ", "**", "`", "HEARTBEAT_ADD: a. ", "[", ":"]
    ),
    st.integers(1, 10_000),
)


def check_event_fields(name: str, fields: tuple[str, ...]) -> None:
    """What the handlers rely on without checking again."""
    spec = SPECS[name]
    if spec.shape == "fields":
        assert spec.min_fields <= len(fields) <= spec.max_fields
    if name in ("SCHEDULE", "SCHEDULE_ACTION"):
        parse_when(fields[1])
        parse_repeat(fields[2] if len(fields) > 2 else "once")
    elif name in ("CANCEL_TASK", "UPDATE_TASK"):
        assert re.fullmatch(r"[0-9a-fA-F]{4,32}", fields[0])
    elif spec.shape == "number":
        low, high = spec.number_range
        assert low <= int(fields[0]) <= high
    elif spec.shape == "flag":
        assert fields == ()


@settings(max_examples=300, deadline=None)
@given(replies)
def test_marker_arguments_never_raise_and_events_are_usable(reply: str) -> None:
    result = parse_markers(reply)
    for event in result.events:
        check_event_fields(event.name, event.fields)
    again = parse_markers(result.text)
    assert again.events == () and again.rejected == ()
    assert all(reason for _, reason in result.rejected)


@settings(max_examples=60, deadline=None)
@given(repetitive, any_text)
def test_long_repetitive_replies_parse_quickly(body: str, tail: str) -> None:
    started = time.perf_counter()
    result = parse_markers(body + tail)
    parse_markers(result.text)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("unit", ["a:", "SCHEDULE: x |", "- **", "HEARTBEAT_ADD: a. ", "[{"])
def test_a_hundred_thousand_characters_of_one_pattern_parse_quickly(unit: str) -> None:
    text = unit * (100_000 // len(unit))
    started = time.perf_counter()
    parse_markers(text)
    parse_markers("\n".join([text[:200]] * 500))
    assert time.perf_counter() - started < 3.0
