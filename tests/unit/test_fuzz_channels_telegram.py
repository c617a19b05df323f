"""What Telegram sends, fuzzed: `TelegramChannel._incoming` on well-formed updates of odd
shapes (missing optional fields, empty or huge text, captions alone, media alone, edited
messages, channel posts, service messages, replies and forwards whose originals are gone,
users without a username or a name, negative and huge ids, entity types nobody knows, groups,
topics) never raises: an update that raised would be answered 500 by the webhook and held
back every later one. The Bot API at the wire is a fake answering getFile and the download."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from telegram import Bot, Update
from telegram.request import BaseRequest, RequestData

from omega.channels.telegram import TelegramChannel
from omega.config.channels import TelegramConfig
from omega.types import IncomingMessage

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

TOKEN = "7000000001:AAFakeTokenForTestsOnly_abcdefghijklmn"
BOT_ID = 7_000_000_001
BOT_NAME = "omega_test_bot"
MAX_DOWNLOAD = 1000


class WireBot(BaseRequest):
    """The Bot API at the wire: getFile answers with the file (its path sometimes missing, as
    Telegram may leave it out) and a download answers some bytes."""

    def __init__(self) -> None:
        self.file_path: str | None = "photos/file_1.jpg"
        self.body = b"\xff\xd8 some bytes"

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        if url.endswith("/getFile"):
            params = request_data.parameters if request_data is not None else {}
            result: dict[str, Any] = {
                "file_id": params.get("file_id", "f"),
                "file_unique_id": "u",
                "file_size": len(self.body),
            }
            if self.file_path is not None:
                result["file_path"] = self.file_path
            return 200, json.dumps({"ok": True, "result": result}).encode()
        if "/file/bot" in url:
            return 200, self.body
        return 400, json.dumps({"ok": False, "description": "Bad Request: not faked"}).encode()


def channel(wire: WireBot | None = None) -> TelegramChannel:
    """A channel as after getMe, its Bot speaking to `wire`."""
    config = TelegramConfig.model_validate({"enabled": True, "bot_token": TOKEN})
    made = TelegramChannel(config, max_download_bytes=MAX_DOWNLOAD)
    made.bot = Bot(TOKEN, request=wire or WireBot(), get_updates_request=WireBot())
    made.username, made.bot_id = BOT_NAME, BOT_ID
    return made


# -- the strategies ----------------------------------------------------------------------------

odd_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=60),
    st.sampled_from(
        [
            "",
            " ",
            "\u202e\u200b",
            "e\u0301",
            "👩‍👩‍👧‍👦 family",
            "\x00\x1b[31m",
            "/start",
            "/start@omega_test_bot hi",
            "/help@other_bot",
            f"@{BOT_NAME} hi",
            "@OMEGA_TEST_BOT",
            "[Forwarded from you]:",
        ]
    ),
    st.integers(5_000, 70_000).map(lambda n: "𝔘" * n),  # huge, past any limit
)
ids = st.one_of(
    st.integers(-(2**52), 2**52),
    st.sampled_from([0, -1, BOT_ID, 777000, -1001234567890, 2**52]),
)
names = st.one_of(st.none(), odd_text)


@st.composite
def users(draw: st.DrawFn) -> dict[str, Any]:
    """A User: `first_name` is the only name Telegram always sends, and may be empty."""
    user: dict[str, Any] = {
        "id": draw(ids),
        "is_bot": draw(st.integers(0, 4)) == 0,
        "first_name": draw(odd_text),
    }
    for key in ("last_name", "username", "language_code"):
        if (value := draw(names)) is not None:
            user[key] = value
    return user


@st.composite
def chats(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(["private"] * 4 + ["group", "supergroup", "channel", "sender", "new"])
    )
    chat: dict[str, Any] = {"id": draw(ids), "type": kind}
    for key in ("title", "username", "first_name", "last_name"):
        if (value := draw(names)) is not None:
            chat[key] = value
    if draw(st.booleans()):
        chat["is_forum"] = draw(st.booleans())
    return chat


ENTITY_TYPES = [
    "mention",
    "bot_command",
    "text_mention",
    "hashtag",
    "url",
    "bold",
    "spoiler",
    "custom_emoji",
    "blockquote",
    "expandable_blockquote",
    "a_type_from_next_year",
]


@st.composite
def entities(draw: st.DrawFn, text: str) -> list[dict[str, Any]]:
    """Entities on whole characters of `text` (UTF-16 offsets, as Telegram counts them)."""
    units = [0]
    for char in text:
        units.append(units[-1] + len(char.encode("utf-16-le")) // 2)
    found = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        entity: dict[str, Any] = {
            "type": draw(st.sampled_from(ENTITY_TYPES)),
            "offset": units[start],
            "length": units[end] - units[start],
        }
        if entity["type"] == "text_mention" or draw(st.integers(0, 9)) == 0:
            entity["user"] = draw(users())
        if entity["type"] == "custom_emoji":
            entity["custom_emoji_id"] = "123"
        found.append(entity)
    return found


def a_file(**extra: Any) -> dict[str, Any]:
    return {"file_id": "file-1", "file_unique_id": "u-1", **extra}


sizes = st.one_of(st.none(), st.integers(0, 3 * MAX_DOWNLOAD))
ORIGINS = ["user", "hidden_user", "chat", "channel", "a_new_origin"]


@st.composite
def origins(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(ORIGINS))
    origin: dict[str, Any] = {"type": kind, "date": 1_700_000_000}
    if kind == "user":
        origin["sender_user"] = draw(users())
    elif kind == "hidden_user":
        origin["sender_user_name"] = draw(odd_text)
    elif kind == "chat":
        origin["sender_chat"] = draw(chats())
    elif kind == "channel":
        origin["chat"] = draw(chats())
        origin["message_id"] = draw(ids)
    if draw(st.booleans()):
        origin["author_signature"] = draw(odd_text)
    return origin


@st.composite
def messages(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A Message: any optional field there or not."""
    message: dict[str, Any] = {
        "message_id": draw(ids),
        "date": draw(st.integers(0, 2_000_000_000)),
        "chat": draw(chats()),
    }
    if draw(st.integers(0, 5)):
        message["from"] = draw(users())
    if draw(st.integers(0, 9)) == 0:
        message["sender_chat"] = draw(chats())
    if (text := draw(st.one_of(st.none(), odd_text))) is not None:
        message["text"] = text
        if text and draw(st.booleans()):
            message["entities"] = draw(entities(text))
    if draw(st.integers(0, 3)) == 0 and (caption := draw(st.one_of(st.none(), odd_text))):
        message["caption"] = caption
        if draw(st.booleans()):
            message["caption_entities"] = draw(entities(caption))
    if draw(st.integers(0, 3)) == 0:
        count = draw(st.integers(0, 3))
        message["photo"] = [
            a_file(width=90 * n, height=90 * n, **_sized(draw(sizes))) for n in range(1, count + 1)
        ]
    if draw(st.integers(0, 5)) == 0:
        message["document"] = a_file(**_sized(draw(sizes)), **_optional(draw, "file_name"))
    if draw(st.integers(0, 6)) == 0:
        message["audio"] = a_file(duration=3, **_sized(draw(sizes)), **_optional(draw, "mime_type"))
    if draw(st.integers(0, 6)) == 0:
        message["voice"] = a_file(duration=3, **_sized(draw(sizes)), **_optional(draw, "mime_type"))
    if draw(st.integers(0, 8)) == 0:
        message["sticker"] = a_file(
            width=1, height=1, is_animated=False, is_video=False, type="regular"
        )
    service = draw(st.sampled_from(["", "", "", "", "joined", "left", "pinned"]))
    if service == "joined":
        message["new_chat_members"] = [draw(users())]
    elif service == "left":
        message["left_chat_member"] = draw(users())
    elif service == "pinned":  # the pinned message may be gone: Telegram sends its date only
        message["pinned_message"] = {"message_id": 1, "date": 0, "chat": message["chat"]}
    if draw(st.integers(0, 8)) == 0:
        message["new_chat_title"] = draw(odd_text)
    if depth == 0 and draw(st.integers(0, 3)) == 0:
        message["reply_to_message"] = draw(messages(depth=1))
        if draw(st.booleans()):
            message["quote"] = {"text": draw(odd_text), "position": 0}
    if draw(st.integers(0, 6)) == 0:  # a reply to a message of another chat
        message["external_reply"] = {"origin": draw(origins())}
    if draw(st.integers(0, 3)) == 0:
        message["forward_origin"] = draw(origins())
    if draw(st.integers(0, 8)) == 0:
        message["is_automatic_forward"] = True
    if draw(st.integers(0, 5)) == 0:
        message["message_thread_id"] = draw(ids)
        message["is_topic_message"] = draw(st.booleans())
    if draw(st.integers(0, 8)) == 0:
        message["edit_date"] = 1_700_000_100
    if draw(st.integers(0, 8)) == 0:
        message["unknown_field_from_next_year"] = {"x": [1, None]}
    return message


def _sized(size: int | None) -> dict[str, Any]:
    return {} if size is None else {"file_size": size}


def _optional(draw: st.DrawFn, key: str) -> dict[str, Any]:
    value = draw(names)
    return {} if value is None else {key: value}


KINDS = ["message", "edited_message", "channel_post", "edited_channel_post", "business_message"]


@st.composite
def updates(draw: st.DrawFn) -> dict[str, Any]:
    """An update: mostly a `message` (what the channel asks for), else another kind or none."""
    update: dict[str, Any] = {"update_id": draw(ids)}
    if draw(st.integers(0, 4)):
        update["message"] = draw(messages())
    for kind in draw(st.lists(st.sampled_from(KINDS[1:]), max_size=2, unique=True)):
        update[kind] = draw(messages())
    return update


def incoming(data: dict[str, Any], wire: WireBot | None = None) -> IncomingMessage | None:
    """What the channel makes of the update Telegram would send as `data`."""
    made = channel(wire)
    update = Update.de_json(data, made.bot)
    return asyncio.run(made._incoming(update))


def check(result: IncomingMessage | None, data: dict[str, Any]) -> None:
    if result is None:
        return
    message = data["message"]
    assert result.channel == "telegram"
    assert result.id == f"telegram:{message['chat']['id']}:{message['message_id']}"
    assert result.sender_id == str(message["from"]["id"])
    assert result.reply_target == str(message["chat"]["id"])
    assert result.text or result.attachments


# -- the tests ---------------------------------------------------------------------------------


def private(**extra: Any) -> dict[str, Any]:
    """An update with a private message of Ana's carrying `extra`."""
    message = {
        "message_id": 7,
        "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ana"},
        "from": {"id": 42, "is_bot": False, "first_name": "Ana"},
        **extra,
    }
    return {"update_id": 1000, "message": message}


# A reply to someone whose first name is empty: PTB's `full_name` is then None.
NAMELESS_AUTHOR = private(
    text="what did they mean?",
    reply_to_message={
        "message_id": 6,
        "date": 1_699_999_999,
        "chat": {"id": 42, "type": "private"},
        "from": {"id": 43, "is_bot": False, "first_name": ""},
        "text": "the quoted words",
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(updates())
@example(NAMELESS_AUTHOR)
def test_no_well_formed_update_makes_incoming_raise(data: dict[str, Any]) -> None:
    check(incoming(data), data)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(updates())
@example(private(photo=[a_file(width=90, height=90)]))
def test_a_file_getfile_gives_no_path_for_is_a_note_not_an_error(data: dict[str, Any]) -> None:
    wire = WireBot()
    wire.file_path = None  # getFile's `file_path` is optional
    check(incoming(data, wire), data)


def test_a_reply_to_someone_without_a_name_is_quoted_from_someone() -> None:
    result = incoming(NAMELESS_AUTHOR)
    assert result is not None
    assert result.text == '[In reply to someone: "the quoted words"]\nwhat did they mean?'


def test_a_photo_getfile_gives_no_path_for_arrives_as_a_note() -> None:
    wire = WireBot()
    wire.file_path = None
    result = incoming(private(photo=[a_file(width=90, height=90)], caption="look"), wire)
    assert result is not None and result.attachments == []
    assert result.text == "[The photo sent here could not be downloaded.]\nlook"
