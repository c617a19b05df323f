"""The Matrix channel's parts without a homeserver: mentions, reply fallbacks, HTML, where a
new room's events start, the state file, transaction ids, the factory and the self-check.
Its behaviour against a real Synapse is tests/integration/test_matrix_*.py."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.channels.matrix import PLUGIN, MatrixConfig
from omega.channels.matrix.checks import check_matrix
from omega.channels.matrix.events import (
    addressed,
    in_thread,
    parse_target,
    since_invited,
    strip_reply_fallback,
    text_contents,
    thread_root,
    thread_target,
    transaction_id,
)
from omega.channels.matrix.state import KEEP_ENCRYPTED, SyncState
from omega.channels.plugin import ChannelUnavailableError
from omega.channels.registry import bind_section, make_context
from omega.config import Config
from omega.ops.selfcheck import CheckContext
from omega.paths import OmegaPaths

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ME = "@omega:example.org"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"body": "hi", "m.mentions": {"user_ids": [ME]}}, True),
        ({"body": "hi", "m.mentions": {"user_ids": ["@ana:example.org"]}}, False),
        ({"body": "O: hi", "formatted_body": f'<a href="https://matrix.to/#/{ME}">O</a>'}, True),
        (
            {
                "body": "x",
                "formatted_body": '<a href="https://matrix.to/#/%40omega%3Aexample.org">',
            },
            True,
        ),
        ({"body": "what do you think, omega?"}, True),  # the display name, any case
        ({"body": "OMEGA tell me"}, True),
        ({"body": "the omegaverse is large"}, False),  # not a whole word
        ({"body": f"ask {ME} please"}, True),
        ({"body": "ask @omega please"}, True),
        ({"body": "ask @omegabot please"}, False),
        ({"body": "lunch at noon?"}, False),
        ({"formatted_body": 7, "body": None}, False),
    ],
)
def test_a_room_message_is_for_omega_only_when_it_mentions_it(
    content: dict[str, Any], expected: bool
) -> None:
    assert addressed(content, ME, "Omega") is expected


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=10,
)


@given(
    st.dictionaries(
        st.sampled_from(["body", "formatted_body", "m.mentions", "msgtype", "x"]), json_values
    ),
    st.text(max_size=20),
)
def test_any_content_is_judged_without_an_error(content: dict[str, Any], name: str) -> None:
    assert addressed(content, ME, name) in (True, False)


@given(st.text(max_size=200))
def test_a_body_without_a_reply_fallback_is_kept_as_it_is(body: str) -> None:
    stripped = strip_reply_fallback(body)
    if not body.startswith("> <"):
        assert stripped == body
    else:
        assert not stripped.startswith(">")


def test_a_reply_loses_the_quote_clients_put_before_it() -> None:
    body = "> <@ana:example.org> the old message\n> second line\n\nmy answer"
    assert strip_reply_fallback(body) == "my answer"


def test_markdown_goes_as_html_with_line_breaks_and_a_split_code_block_stays_code() -> None:
    first, second = text_contents(["**Hi**\nthere\n```py\nx = 1\n", "y = 2\n```\ndone"])
    assert first["body"] == "**Hi**\nthere\n```py\nx = 1\n"
    assert first["format"] == "org.matrix.custom.html"
    assert str(first["formatted_body"]).startswith("<b>Hi</b><br>there<br>")
    assert '<pre><code class="language-py">x = 1\n' in str(first["formatted_body"])
    assert str(second["formatted_body"]).startswith("<pre><code")
    assert "y = 2\n</code></pre>" in str(second["formatted_body"])
    assert first["msgtype"] == second["msgtype"] == "m.text"


def _member(user: str, membership: str, before: str = "") -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "m.room.member",
        "state_key": user,
        "content": {"membership": membership},
    }
    if before:
        event["unsigned"] = {"prev_content": {"membership": before}}
    return event


def test_a_new_rooms_events_count_from_the_invitation_and_an_old_rooms_from_the_start() -> None:
    said = {"type": "m.room.message", "content": {"body": "x"}}
    history, invite, join = said, _member(ME, "invite"), _member(ME, "join", "invite")
    assert since_invited([history, invite, said, join, said], ME) == 2
    assert since_invited([history, join, said], ME) == 2  # joined without an invitation seen
    assert since_invited([said, _member("@ana:example.org", "join"), said], ME) is None
    # Omega changing its name or picture is a join after a join: not a new room.
    assert since_invited([said, _member(ME, "join", "join"), said], ME) is None


def test_a_transaction_id_is_the_same_for_the_same_message_and_part() -> None:
    assert transaction_id("matrix:$a#reply", "0") == transaction_id("matrix:$a#reply", "0")
    assert transaction_id("matrix:$a#reply", "0") != transaction_id("matrix:$a#reply", "1")
    assert transaction_id("", "0") != transaction_id("", "0")  # no stable id: a fresh one


def test_the_state_file_is_private_and_a_damaged_one_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "matrix.state.json"
    state = SyncState(path, "s1_2", ME, "DEV", "tok", ["!e:x"], {"@ana:x": "!d:x"})
    state.save()
    assert path.stat().st_mode & 0o777 == 0o600
    assert SyncState.load(path) == state
    for damaged in ("", "{", "[]", '{"next_batch": 5, "direct": []}', "null"):
        path.write_text(damaged, encoding="utf-8")
        loaded = SyncState.load(path)
        assert loaded.path == path and isinstance(loaded.next_batch, str)


def _config(tmp_path: Path, **section: object) -> tuple[Config, OmegaPaths]:
    config = Config()
    config.channel.matrix = {"enabled": True, **section}  # type: ignore[attr-defined]
    bind_section(config, PLUGIN)
    return config, OmegaPaths(tmp_path)


def test_the_factory_names_what_is_missing(tmp_path: Path) -> None:
    config, paths = _config(tmp_path, homeserver="https://m.example.org/")
    section = config.channel.matrix  # type: ignore[attr-defined]
    assert isinstance(section, MatrixConfig) and section.homeserver == "https://m.example.org"
    with pytest.raises(ChannelUnavailableError, match=r"user_id, password \(or access_token\)"):
        PLUGIN.factory(make_context(PLUGIN, config, section, paths))


def test_without_matrix_nio_the_factory_gives_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, paths = _config(tmp_path, homeserver="https://m", user_id=ME, password="pw")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nio" else real(name, *a)
    )
    section = config.channel.matrix  # type: ignore[attr-defined]
    with pytest.raises(ChannelUnavailableError, match=r"pip install 'omega-agent\[matrix\]'"):
        PLUGIN.factory(make_context(PLUGIN, config, section, paths))


def test_the_self_check_warns_about_encrypted_rooms_and_missing_settings(tmp_path: Path) -> None:
    config, paths = _config(tmp_path, homeserver="https://m", user_id=ME, password="pw")
    ctx = CheckContext(config, paths)
    check = check_matrix(ctx)
    assert check is not None and check.ok and check.warning  # nobody allowed yet
    SyncState(paths.home / "matrix.state.json", told_encrypted=["!a:x", "!b:x"]).save()
    check = check_matrix(ctx)
    assert check is not None and check.ok and check.warning
    assert "2 end-to-end encrypted room(s) are not answered" in check.detail
    bare, _ = _config(tmp_path, user_id=ME)
    check = check_matrix(CheckContext(bare, paths))
    assert check is not None and not check.ok
    assert "homeserver" in check.detail and "password" in check.detail
    assert json.loads((paths.home / "matrix.state.json").read_text())["told_encrypted"]


def test_a_thread_is_read_answered_into_and_kept_apart() -> None:
    # Issue 36: a thread's messages are a conversation of their own, answered in the thread.
    relation = {"rel_type": "m.thread", "event_id": "$root/+ab", "is_falling_back": True}
    content = {"msgtype": "m.text", "body": "hi", "m.relates_to": relation}
    assert thread_root(content) == "$root/+ab"
    assert thread_root({"body": "hi"}) == ""
    assert thread_root({"m.relates_to": {"rel_type": "m.replace", "event_id": "$e"}}) == ""
    assert thread_root({"m.relates_to": {"rel_type": "m.thread", "event_id": "$a b"}}) == ""
    target = thread_target("!room:example.org", "$root/+ab")
    assert target != "!room:example.org"
    assert parse_target(target) == ("!room:example.org", "$root/+ab")
    assert parse_target("!room:example.org") == ("!room:example.org", "")
    assert parse_target("@ana:example.org") == ("@ana:example.org", "")
    sent = in_thread({"msgtype": "m.text", "body": "answer"}, "$root/+ab")
    assert sent["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": "$root/+ab",
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": "$root/+ab"},
    }
    assert in_thread({"body": "x"}, "") == {"body": "x"}


@given(st.text(max_size=40), st.text(max_size=40))
def test_a_thread_target_reads_back_whatever_the_ids(room: str, event: str) -> None:
    root = "$" + "".join(c for c in event if not c.isspace())
    assert parse_target(thread_target(room, root)) == (room, root)


def test_the_encrypted_rooms_remembered_are_bounded(tmp_path: Path) -> None:
    # Anyone may make encrypted rooms and invite Omega: what is kept of them is bounded.
    state = SyncState(tmp_path / "matrix.state.json")
    for number in range(KEEP_ENCRYPTED + 10):
        state.tell_encrypted(f"!r{number}:example.org")
    assert len(state.told_encrypted) == KEEP_ENCRYPTED
    assert state.told_encrypted[-1] == f"!r{KEEP_ENCRYPTED + 9}:example.org"
