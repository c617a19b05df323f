"""What Slack's Events API sends, fuzzed: `addressed` (which events are for Omega, and what
they become) on well-formed events of odd shapes (fields missing, None or of another JSON
type, empty or huge text, unknown subtypes, threads, files without urls) never raises, and
what it returns names the event's own channel, sender and timestamp."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.slack.events import addressed, plain_text

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

BOT = "UOMEGA1"
odd_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", f"<@{BOT}> hi", f"<@{BOT}|omega>", "<#C1|>", "<!here>", "<https://x|y>", "&amp;lt;"]
    ),
    st.integers(5_000, 50_000).map(lambda n: "<@U1>" * n),
)
json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    odd_text,
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.none(), max_size=2),
)
ids = st.one_of(st.sampled_from(["D0123", "C0123", "G9", "U42", BOT, ""]), json_values)
files = st.lists(
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {},
            optional={
                "name": json_values,
                "mimetype": json_values,
                "url_private": json_values,
                "size": json_values,
            },
        ),
    ),
    max_size=3,
)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    """A `message` or `app_mention` event, any field missing or odd."""
    event: dict[str, Any] = {
        "type": draw(st.sampled_from(["message", "app_mention", "reaction_added", None])),
        "user": draw(ids),
        "channel": draw(ids),
        "ts": draw(st.one_of(st.just("1700000000.000100"), json_values)),
    }
    optional = {
        "text": odd_text,
        "subtype": st.sampled_from(
            ["", "file_share", "thread_broadcast", "message_changed", "bot_message", "new_one"]
        ),
        "thread_ts": st.one_of(st.just("1700000000.000001"), json_values),
        "channel_type": st.sampled_from(["im", "channel", "group", "mpim", "", "new"]),
        "bot_id": json_values,
        "files": st.one_of(files, json_values),
        "blocks": json_values,
        "edited": json_values,
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            event[key] = draw(values)
    return event


@settings(max_examples=300, deadline=None)
@given(events(), st.sets(st.tuples(st.sampled_from(["C0123", "D0123"]), st.text(max_size=20))))
def test_no_well_formed_event_makes_addressed_raise(
    event: dict[str, Any], followed: set[tuple[str, str]]
) -> None:
    found = addressed(event, "T1", BOT, followed)
    if found is None:
        return
    assert found.user == str(event["user"]) and found.user != BOT
    assert found.inbox_id == f"slack:T1:{event['channel']}:{event['ts']}"
    assert found.reply_target.startswith(str(event["channel"]))
    assert all(isinstance(file, dict) for file in found.files)


@settings(max_examples=200, deadline=None)
@given(odd_text, st.sampled_from(["", BOT, "U1"]))
def test_plain_text_takes_any_text(text: str, bot: str) -> None:
    assert isinstance(plain_text(text, bot), str)
