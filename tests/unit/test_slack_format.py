"""Slack's side of text: Markdown rendered as mrkdwn and split to Slack's limit, and Slack's
incoming text read back as plain text; which events are for Omega."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.slack.events import addressed, parse_target, plain_text, reply_target
from omega.channels.slack.mrkdwn import escape, render_mrkdwn, split_mrkdwn

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

BOT = "U0BOT00001"


def test_markdown_becomes_mrkdwn() -> None:
    text, in_code = render_mrkdwn(
        "## Title\n**bold** *it* _it2_ ~~gone~~ `a<b` [site](https://x.org/?a=1&b=2)\n"
        "> quoted **bit**\n- item & more\n<script> & 3 > 2"
    )
    assert not in_code
    assert text == (
        "*Title*\n*bold* _it_ _it2_ ~gone~ `a&lt;b` <https://x.org/?a=1&amp;b=2|site>\n"
        "> quoted *bit*\n• item &amp; more\n&lt;script&gt; &amp; 3 &gt; 2"
    )


def test_a_link_to_another_scheme_stays_text_and_a_pipe_cannot_cut_the_label() -> None:
    assert render_mrkdwn("[x](javascript:alert(1))")[0] == "[x](javascript:alert(1))"
    assert render_mrkdwn("[a|b](https://x.org)")[0] == "<https://x.org|a¦b>"


def test_a_code_block_split_across_messages_is_closed_and_reopened() -> None:
    code = "```python\n" + "".join(f"line {n} < {n + 1}\n" for n in range(600)) + "```\nafter"
    pieces = split_mrkdwn(code, 1000)
    assert len(pieces) > 5
    assert all(len(p) <= 1000 for p in pieces)
    assert all(p.startswith("```") for p in pieces[:-1])
    assert all(p.rstrip().endswith("```") for p in pieces[:-1])
    assert "python" not in pieces[0]  # mrkdwn has no language after the fence
    assert pieces[-1].endswith("after")


def test_escaping_that_lengthens_a_piece_still_fits() -> None:
    pieces = split_mrkdwn("&" * 9000)
    assert all(len(p) <= 4000 for p in pieces)
    assert "".join(pieces) == "&amp;" * 9000


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=3000), st.integers(min_value=20, max_value=600))
def test_split_never_exceeds_the_limit(text: str, limit: int) -> None:
    assert all(0 < len(p) <= limit for p in split_mrkdwn(text, limit))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab &<\n", max_size=3000), st.integers(min_value=20, max_value=600))
def test_split_loses_nothing(text: str, limit: int) -> None:
    pieces = split_mrkdwn(text, limit)
    assert "".join("".join(pieces).split()) == "".join(escape(text).split())


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_plain_text_never_fails(text: str) -> None:
    assert isinstance(plain_text(text, BOT), str)


def test_slack_text_reads_as_plain_text() -> None:
    assert plain_text(
        f"<@{BOT}> ask <@U0ANA|ana> in <#C1|general> about <https://x.org|this> "
        "&amp; <https://y.org> &lt;3 <!here>",
        BOT,
    ) == ("ask @U0ANA in #general about this (https://x.org) & https://y.org <3 @here")
    assert plain_text("&amp;lt;") == "&lt;"


def test_targets_round_trip() -> None:
    assert parse_target(reply_target("C1", "1800000001.000002")) == ("C1", "1800000001.000002")
    assert parse_target(reply_target("D1")) == ("D1", "")


def _event(**fields: object) -> dict[str, object]:
    return {"type": "message", "user": "U1", "channel": "C1", "ts": "5.1", "text": "hi"} | fields


def test_which_events_are_for_omega() -> None:
    dm = addressed(_event(channel="D1", channel_type="im"), "T1", BOT)
    assert dm is not None and not dm.is_group and dm.reply_target == "D1"
    assert dm.inbox_id == "slack:T1:D1:5.1"
    in_dm_thread = addressed(_event(channel="D1", channel_type="im", thread_ts="4.0"), "T1", BOT)
    assert in_dm_thread is not None and in_dm_thread.reply_target == "D1:4.0"

    assert addressed(_event(channel_type="channel"), "T1", BOT) is None  # chatter
    mention = addressed(_event(channel_type="channel", text=f"<@{BOT}> hi"), "T1", BOT)
    assert mention is not None and mention.is_group and mention.text == "hi"
    assert mention.reply_target == "C1:5.1" and mention.thread == ("C1", "5.1")
    app_mention = addressed(_event(type="app_mention", thread_ts="4.0"), "T1", BOT)
    assert app_mention is not None and app_mention.reply_target == "C1:4.0"
    followed = addressed(
        _event(channel_type="channel", thread_ts="4.0"), "T1", BOT, {("C1", "4.0")}
    )
    assert followed is not None and followed.reply_target == "C1:4.0"
    other = addressed(_event(channel_type="channel", thread_ts="3.0"), "T1", BOT, {("C1", "4.0")})
    assert other is None

    for ignored in (
        _event(channel_type="im", bot_id="B2"),  # another bot
        _event(channel_type="im", user=BOT),  # Omega itself
        _event(channel_type="im", subtype="message_changed"),  # an edit
        _event(channel_type="im", subtype="channel_join"),
        _event(channel_type="im", user=""),
        _event(type="reaction_added", channel_type="im"),
    ):
        assert addressed(ignored, "T1", BOT) is None
    shared = addressed(
        _event(channel_type="im", subtype="file_share", files=[{"id": "F1"}, "junk"]), "T1", BOT
    )
    assert shared is not None and shared.files == ({"id": "F1"},)
