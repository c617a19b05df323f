"""The marker parser: every marker's shape, forgiveness, strictness, ordering and fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.markers import MARKERS, parse_markers
from omega.markers.registry import SPECS

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def events(text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(e.name, e.fields) for e in parse_markers(text).events]


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "SCHEDULE: Call mom | 2026-11-23T09:00 | once",
            ("SCHEDULE", ("Call mom", "2026-11-23T09:00", "once")),
        ),
        (
            "SCHEDULE: Stretch | 2026-11-23 07:30 | weekdays",
            ("SCHEDULE", ("Stretch", "2026-11-23 07:30", "weekdays")),
        ),
        (
            "SCHEDULE: Water plants | 2026-11-23T09:00Z",
            ("SCHEDULE", ("Water plants", "2026-11-23T09:00Z")),
        ),
        (
            "SCHEDULE_ACTION: Check the news | 2026-11-23T08:00 | daily",
            ("SCHEDULE_ACTION", ("Check the news", "2026-11-23T08:00", "daily")),
        ),
        ("CANCEL_TASK: 1a2b3c4d", ("CANCEL_TASK", ("1a2b3c4d",))),
        (
            "UPDATE_TASK: 1a2b3c4d | | 2026-12-01T10:00 |",
            ("UPDATE_TASK", ("1a2b3c4d", "", "2026-12-01T10:00", "")),
        ),
        ("PROJECT_ACTIVATE: website", ("PROJECT_ACTIVATE", ("website",))),
        ("PROJECT_DEACTIVATE", ("PROJECT_DEACTIVATE", ())),
        ("LANG_SWITCH: Spanish", ("LANG_SWITCH", ("Spanish",))),
        ("HEARTBEAT_ADD: Check disk space", ("HEARTBEAT_ADD", ("Check disk space",))),
        ("HEARTBEAT_REMOVE: disk", ("HEARTBEAT_REMOVE", ("disk",))),
        ("HEARTBEAT_INTERVAL: 15", ("HEARTBEAT_INTERVAL", ("15",))),
        ("HEARTBEAT_INTERVAL: 1", ("HEARTBEAT_INTERVAL", ("1",))),
        ("HEARTBEAT_INTERVAL: 1440", ("HEARTBEAT_INTERVAL", ("1440",))),
        (
            "SKILL_IMPROVE: playwright-mcp | Wait for the page to load | really",
            ("SKILL_IMPROVE", ("playwright-mcp", "Wait for the page to load | really")),
        ),
        ("WHATSAPP_QR", ("WHATSAPP_QR", ())),
        ("SILENT", ("SILENT", ())),
        (
            "LIMITATION: No email | Cannot send emails | Add SMTP",
            ("LIMITATION", ("No email", "Cannot send emails", "Add SMTP")),
        ),
        (
            "SELF_HEAL: audit misses model | check audit_log.model | after restart",
            ("SELF_HEAL", ("audit misses model", "check audit_log.model | after restart")),
        ),
    ],
)
def test_each_marker_acts_and_is_stripped(line: str, expected: tuple[str, tuple[str, ...]]) -> None:
    result = parse_markers(f"Here you go.\n{line}\nAnything else?")
    assert [(e.name, e.fields) for e in result.events] == [expected]
    assert result.text == "Here you go.\nAnything else?"
    assert not result.rejected


@pytest.mark.parametrize(
    "decorated",
    [
        "- SCHEDULE: Call mom | 2026-11-23T09:00 | once",
        "* **SCHEDULE:** Call mom | 2026-11-23T09:00 | once",
        "1. `SCHEDULE: Call mom | 2026-11-23T09:00 | once`",
        "   **SCHEDULE**: Call mom | 2026-11-23T09:00 | once  ",
        "> schedule: Call mom | 2026-11-23T09:00 | ONCE",
        "Schedule: Call mom | 2026-11-23T09:00 | once",
    ],
)
def test_forgiving_about_bullets_bold_backticks_and_case(decorated: str) -> None:
    result = parse_markers(f"Sure.\n{decorated}")
    assert [e.name for e in result.events] == ["SCHEDULE"]
    assert result.events[0].fields[0] == "Call mom"
    assert result.text == "Sure."


@pytest.mark.parametrize(
    "line, reason",
    [
        ("SCHEDULE: Call mom | tomorrow morning | once", "not an ISO"),
        ("SCHEDULE: Call mom | 2026-11-23T09:00 | hourly", "unknown repeat"),
        ("SCHEDULE: Call mom", "fields"),
        ("SCHEDULE:  | 2026-11-23T09:00 | once", "empty description"),
        ("HEARTBEAT_INTERVAL: 0", "out of range"),
        ("HEARTBEAT_INTERVAL: 1441", "out of range"),
        ("HEARTBEAT_INTERVAL: -5", "whole number"),
        ("HEARTBEAT_INTERVAL: soon", "whole number"),
        ("CANCEL_TASK: %", "hex"),
        ("CANCEL_TASK: *", "empty"),
        ("CANCEL_TASK: ab", "hex"),
        ("HEARTBEAT_ADD:", "empty"),
        ("PROJECT_DEACTIVATE: now", "no value"),
        ("LIMITATION: only a title", "fields"),
    ],
)
def test_invalid_markers_are_stripped_not_shown_and_reported(line: str, reason: str) -> None:
    result = parse_markers(f"Okay.\n{line}")
    assert result.events == ()
    assert result.text == "Okay."
    [(raw, why)] = result.rejected
    assert reason in why
    assert raw == line.strip()


def test_marker_mid_line_acts_and_only_the_marker_leaves() -> None:
    result = parse_markers(
        "I don't have email capabilities yet. LIMITATION: No email | Cannot send emails "
        "directly | Add SMTP provider integration\nAnything else?"
    )
    assert events(result.text) == []
    assert [e.name for e in result.events] == ["LIMITATION"]
    assert result.text == "I don't have email capabilities yet.\nAnything else?"


def test_two_field_markers_on_one_line_both_act() -> None:
    result = parse_markers(
        "Ok. SCHEDULE: a | 2026-01-01T10:00 | once SKILL_IMPROVE: x-skill | lesson one"
    )
    assert [e.name for e in result.events] == ["SCHEDULE", "SKILL_IMPROVE"]
    assert result.text == "Ok."


@pytest.mark.parametrize(
    "text",
    [
        "You can ask me to use SCHEDULE: for reminders, or CANCEL_TASK to stop one.",
        "The SILENT marker is for groups; PROJECT_ACTIVATE switches projects.",
        "Schedule: Monday is busy, Tuesday is free.",
        "Remember: HEARTBEAT_ADD: needs an item, which I will not add now.",
        "My LIMITATION: is that I can't swim",
    ],
)
def test_mentions_neither_truncate_nor_act(text: str) -> None:
    result = parse_markers(text + "\nSecond line stays.")
    assert result.events == ()
    assert result.text == text + "\nSecond line stays."


def test_deactivate_runs_before_activate_whatever_the_order() -> None:
    result = parse_markers("PROJECT_ACTIVATE: site\nSwitching.\nPROJECT_DEACTIVATE")
    assert [e.name for e in result.events] == ["PROJECT_DEACTIVATE", "PROJECT_ACTIVATE"]


def test_events_follow_handler_priority_then_appearance() -> None:
    result = parse_markers(
        "HEARTBEAT_ADD: b\nSCHEDULE: x | 2026-01-01T10:00 | once\nHEARTBEAT_ADD: a\n"
        "LANG_SWITCH: French"
    )
    assert [(e.name, e.value) for e in result.events] == [
        ("SCHEDULE", "x"),
        ("LANG_SWITCH", "French"),
        ("HEARTBEAT_ADD", "b"),
        ("HEARTBEAT_ADD", "a"),
    ]


def test_text_without_markers_is_returned_unchanged() -> None:
    text = "  Hello!\n\n\nLine three   \n"
    assert parse_markers(text).text == text


def test_every_marker_has_a_unique_priority_and_name() -> None:
    assert len(SPECS) == len(MARKERS)
    assert len({m.priority for m in MARKERS}) == len(MARKERS)


MARKER_LINES = st.sampled_from(
    [
        "SCHEDULE: a | 2026-01-01T10:00 | once",
        "SCHEDULE: a | nope | once",
        "PROJECT_DEACTIVATE",
        "HEARTBEAT_INTERVAL: 99999",
        "**SILENT**",
        "- LANG_SWITCH: German",
        "x LIMITATION: t | d | p",
        "SCHEDULE:",
        "schedule: a | 2026-01-01T10:00 | once",
        "CANCEL_TASK: abcd1234",
        "SKILL_IMPROVE: s | l",
        "`HEARTBEAT_OK`",
    ]
)
FUZZ_TEXT = st.lists(st.one_of(st.text(max_size=60), MARKER_LINES), max_size=8).map("\n".join)


@settings(max_examples=400)
@given(FUZZ_TEXT)
def test_fuzz_never_raises_and_no_marker_survives(text: str) -> None:
    result = parse_markers(text)
    again = parse_markers(result.text)
    assert again.events == ()
    assert again.rejected == ()
    for spec in MARKERS:
        for line in result.text.splitlines():
            assert not line.strip(" *_`-").startswith(f"{spec.name}:"), line


@given(st.text())
def test_fuzz_arbitrary_unicode(text: str) -> None:
    result = parse_markers(text)
    assert parse_markers(result.text).events == ()
