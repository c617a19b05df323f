"""What a homeserver's /sync sends, fuzzed: a room timeline event of odd shape (every msgtype
and some nobody knows, body or formatted_body missing or not text, replies, threads, edits
without `m.new_content`, mentions, files whose url is no mxc or an odd one, sizes of any JSON
type, huge bodies, odd unicode, redacted events, events of other types) never makes
`MatrixChannel._event` raise: the sync token is saved only after every event of its sync, so
an event that raised would come back at every sync and hold back the room. nio's HTTP is a fake
answering downloads, sends and member lists."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from nio import (
    JoinedMembersResponse,
    MatrixRoom,
    MemoryDownloadResponse,
    RoomSendResponse,
)

from omega.channels.health import HealthReporter
from omega.channels.matrix import MatrixConfig
from omega.channels.matrix.channel import MatrixChannel, StoppedError
from omega.channels.matrix.state import SyncState
from omega.types import IncomingMessage

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ME = "@omega:example.org"
ANA = "@ana:example.org"
DIRECT = "!direct:example.org"
GROUP = "!group:example.org"


def channel(tmp: Path) -> MatrixChannel:
    """A channel as after logging in, in a direct room with Ana and a room of four; its nio
    client's HTTP answers every download with some bytes and every send with an event id."""
    config = MatrixConfig.model_validate(
        {"enabled": True, "homeserver": "https://matrix.example.org", "user_id": ME}
    )
    made = MatrixChannel(config, SyncState(tmp / "state.json"), HealthReporter(None, str))
    client = made.client
    client.access_token, client.user_id = "token", ME
    for room_id, people in ((DIRECT, [ANA]), (GROUP, [ANA, "@bo:x.org", "@cy:x.org"])):
        room = MatrixRoom(room_id, ME)
        for user in (ME, *people):
            room.add_member(user, user.partition(":")[0][1:].title(), None)
        client.rooms[room_id] = room
    made.display_name = "Omega"

    async def send(response_class: type, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if response_class is MemoryDownloadResponse:
            return MemoryDownloadResponse(b"\x89PNG some bytes", "image/png", None)
        if response_class is RoomSendResponse:
            return RoomSendResponse("$sent", DIRECT)
        return JoinedMembersResponse([], DIRECT)

    client._send = send  # type: ignore[method-assign]
    return made


def events_of(
    source: Mapping[str, Any], room_id: str, tmp: Path, made: MatrixChannel | None = None
) -> list[IncomingMessage]:
    """What the channel hands over for the timeline event `source` in `room_id`."""
    made = made or channel(tmp)
    got: list[IncomingMessage] = []

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        got.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def run() -> None:
        try:
            await made._event(room_id, source, submit)
        finally:
            await made.client.close()

    asyncio.run(run())
    return got


# -- the strategies ----------------------------------------------------------------------------

odd_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(max_size=10),  # lone surrogates too: JSON escapes them
    st.sampled_from(
        ["", " ", "\u202e\u200b", "e\u0301", "👩‍👩‍👧‍👦", "\x00", "omega", ME, "> <@a:b> q"]
    ),
    st.integers(5_000, 70_000).map(lambda n: "𝔘" * n),
)
json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    odd_text,
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.none(), max_size=2),
)


def mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`usual` nine times in ten, else `odd`."""
    return st.sampled_from([False] * 9 + [True]).flatmap(lambda rare: odd if rare else usual)


MSGTYPES = ["m.text", "m.notice", "m.emote", "m.image", "m.file", "m.audio", "m.video"]
MSGTYPES += ["m.location", "m.key.verification.request", "org.example.new", ""]
urls = st.one_of(
    st.sampled_from(
        [
            "mxc://example.org/abc",
            "mxc://example.org/",
            "mxc://",
            "mxc:///abc",
            "mxc://[::1/abc",  # not a host urlparse can read
            "mxc://ex ample.org/a b",
            "mxc://example.org/a/b/c",
            "https://example.org/file.png",
        ]
    ),
    odd_text.map(lambda text: f"mxc://example.org/{text}"),
    odd_text.map(lambda text: f"mxc://{text}"),
    json_values,
)


often = st.sampled_from([True] * 5 + [False])
sometimes = st.sampled_from([True, False, False])


@st.composite
def relations(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["reply", "thread", "edit", "annotation", "odd"]))
    event_id = draw(st.one_of(st.just("$root:example.org"), json_values))
    if kind == "reply":
        return {"m.in_reply_to": draw(st.one_of(st.just({"event_id": event_id}), json_values))}
    if kind == "thread":
        relation = {"rel_type": "m.thread", "event_id": event_id}
        if draw(st.booleans()):
            relation |= {"is_falling_back": True, "m.in_reply_to": {"event_id": event_id}}
        return relation
    if kind == "edit":
        return {"rel_type": "m.replace", "event_id": event_id}
    if kind == "annotation":
        return {"rel_type": "m.annotation", "event_id": event_id, "key": "👍"}
    return draw(json_values)


@st.composite
def contents(draw: st.DrawFn) -> dict[str, Any]:
    """An `m.room.message` content: any field there or not, of its type or not."""
    content: dict[str, Any] = {}
    if draw(often):
        content["msgtype"] = draw(mostly(st.sampled_from(MSGTYPES), json_values))
    if draw(often):
        content["body"] = draw(mostly(odd_text, json_values))
    optional: dict[str, Any] = {
        "format": st.sampled_from(["org.matrix.custom.html", "x"]),
        "formatted_body": st.one_of(
            odd_text, st.just(f'<a href="https://matrix.to/#/{ME}">O</a>'), json_values
        ),
        "m.relates_to": relations(),
        "m.mentions": st.one_of(
            st.just({"user_ids": [ME]}),
            st.fixed_dictionaries({}, optional={"user_ids": json_values, "room": json_values}),
            json_values,
        ),
        "url": urls,
        "filename": st.one_of(odd_text, json_values),
        "info": st.one_of(
            st.fixed_dictionaries(
                {}, optional={"mimetype": st.one_of(odd_text, json_values), "size": json_values}
            ),
            json_values,
        ),
        "file": st.just({"url": "mxc://example.org/enc", "key": {}, "iv": "", "hashes": {}}),
        "org.matrix.msc3245.voice": st.one_of(st.just({}), json_values),
        "m.new_content": st.one_of(st.just({"msgtype": "m.text", "body": "new"}), json_values),
    }
    for key, values in optional.items():
        if draw(sometimes):
            content[key] = draw(values)
    return content


TYPES = ["m.room.message"] * 6 + ["m.room.encrypted", "m.sticker", "m.reaction", "m.room.member"]


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    """A timeline event as /sync gives it (nio keeps each one's JSON as `source`)."""
    event: dict[str, Any] = {
        "type": draw(mostly(st.sampled_from(TYPES), json_values)),
        "sender": draw(mostly(st.sampled_from([ANA, ANA, ANA, ME, "@x:y", ""]), json_values)),
        "event_id": draw(mostly(st.just("$e1:example.org"), json_values)),
        "origin_server_ts": 1_700_000_000_000,
        "content": draw(mostly(contents(), json_values)),
    }
    if draw(st.integers(0, 5)) == 0:  # redacted: the content emptied, the reason in unsigned
        event["content"] = {}
        event["unsigned"] = {"redacted_because": {"type": "m.room.redaction", "sender": ANA}}
    elif draw(st.integers(0, 3)) == 0:
        event["unsigned"] = draw(st.one_of(st.just({"age": 10}), json_values))
    return event


def messages(room_id: str) -> st.SearchStrategy[dict[str, Any]]:
    """An `m.room.message` of Ana's: the envelope as every homeserver sends it."""
    return st.fixed_dictionaries(
        {
            "type": st.just("m.room.message"),
            "sender": st.just(ANA),
            "event_id": st.just("$e1:example.org"),
            "room_id": st.just(room_id),
            "content": contents(),
        },
        optional={"unsigned": st.just({"age": 10})},
    )


def check(got: list[IncomingMessage], event: dict[str, Any], room_id: str) -> None:
    for message in got:
        assert message.channel == "matrix"
        assert message.sender_id == str(event["sender"])
        assert message.id == f"matrix:{event['event_id']}"
        assert message.reply_target.startswith(room_id)
        assert message.text or message.attachments
        message.text.encode("utf-8")  # no lone surrogate left
        message.sender_name.encode("utf-8")


def a_file(url: str) -> dict[str, Any]:
    """Ana's picture at `url`, in the direct room."""
    content = {"msgtype": "m.image", "body": "cat.png", "url": url}
    return {"type": "m.room.message", "sender": ANA, "event_id": "$e1", "content": content}


# Urls nio can make no request of: urlparse refuses the first, quote() the lone surrogate.
UNREQUESTABLE = ["mxc://[::1/abc", "mxc://example.org/\ud800"]


# -- the tests ---------------------------------------------------------------------------------


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(events(), st.sampled_from([DIRECT, GROUP, "!unknown:example.org"]))
@example(a_file(UNREQUESTABLE[0]), DIRECT)
@example(a_file(UNREQUESTABLE[1]), DIRECT)
def test_no_well_formed_event_makes_event_raise(
    tmp_path: Path, event: dict[str, Any], room_id: str
) -> None:
    check(events_of(event, room_id, tmp_path), event, room_id)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.sampled_from([DIRECT, GROUP]).flatmap(lambda at: st.tuples(st.just(at), messages(at))))
def test_no_message_of_any_content_makes_event_raise(
    tmp_path: Path, room_and_event: tuple[str, dict[str, Any]]
) -> None:
    room_id, event = room_and_event
    check(events_of(event, room_id, tmp_path), event, room_id)


@pytest.mark.parametrize("url", UNREQUESTABLE)
def test_a_file_at_a_url_nio_cannot_request_arrives_as_a_note(tmp_path: Path, url: str) -> None:
    [message] = events_of(a_file(url), DIRECT, tmp_path)
    assert message.attachments == []
    assert message.text.startswith("[The file cat.png sent here could not be downloaded.]")


def test_an_event_that_cannot_be_read_is_skipped_with_a_log_line_and_the_next_is_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    made = channel(tmp_path)
    real = made._content

    async def content(content: Mapping[str, Any]) -> Any:
        if content.get("body") == "poison":
            raise KeyError("a shape nobody foresaw")
        return await real(content)

    made._content = content  # type: ignore[method-assign]
    poison: dict[str, Any] = {"type": "m.room.message", "sender": ANA, "event_id": "$p"}
    poison["content"] = {"msgtype": "m.text", "body": "poison"}
    assert events_of(poison, DIRECT, tmp_path, made) == []  # not raised: the sync goes on
    assert "event $p in !direct:example.org could not be read; skipped" in caplog.text
    made = channel(tmp_path)
    made._content = content  # type: ignore[method-assign]
    [message] = events_of(a_file("mxc://example.org/abc"), DIRECT, tmp_path, made)
    assert message.attachments[0].data == b"\x89PNG some bytes"


def test_a_message_read_but_not_handed_over_at_a_stop_is_raised_so_the_sync_brings_it_again(
    tmp_path: Path,
) -> None:
    made = channel(tmp_path)

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        made._stop.set()  # submitted again until stored (test_matrix_store_retry.py), or this
        raise OSError("the store is away")

    async def run() -> None:
        try:
            await made._event(DIRECT, a_file("mxc://example.org/abc"), submit)
        finally:
            await made.client.close()

    with pytest.raises(StoppedError):
        asyncio.run(run())
