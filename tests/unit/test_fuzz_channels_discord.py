"""What Discord's gateway sends, fuzzed: a MESSAGE_CREATE of odd shape (no member, nick or
global name, replies whose original is gone, threads, mentions, files without a content type or
too large, empty or huge content, odd unicode, negative and huge snowflakes, message types
nobody knows, bots, webhooks, system users), read by discord.py as the gateway would, never
makes `DiscordChannel._incoming` raise: the consumer would try it again and drop it. Discord's
CDN is a fake answering some bytes, or refusing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import discord
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omega.channels.discord import DiscordConfig
from omega.channels.discord.channel import DiscordChannel, _in_guild
from omega.channels.discord.state import DiscordState
from omega.channels.health import HealthReporter
from omega.types import IncomingMessage

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

BOT_ID = 1_000_000_000_000_000_001
GUILD_ID = 1_100_000_000_000_000_001
GUILD_CHANNEL_ID = 1_200_000_000_000_000_001
LIMIT = 1000  # bytes a file may have to be downloaded (max_download_mb below)


class Cdn:
    """Discord's CDN as discord.py's HTTP client reaches it: some bytes, or a failure."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure = failure

    async def get_from_cdn(self, url: str) -> bytes:
        if self.failure is not None:
            raise self.failure
        return b"\x89PNG some bytes"


def a_user(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
    return {"id": str(user_id), "username": name, "discriminator": "0", "avatar": None} | (
        {"bot": True} if bot else {}
    )


def a_message(
    message_id: int, channel_id: int, author: dict[str, Any], text: str, files: Sequence[Any] = ()
) -> dict[str, Any]:
    """A message as the gateway and the channel-history endpoint give it."""
    return {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": text,
        "timestamp": "2024-01-01T00:00:00+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": list(files),
        "embeds": [],
        "pinned": False,
        "type": 0,
    }


def client(cdn: Cdn) -> discord.Client:
    """A client as after READY and the guild's GUILD_CREATE, its HTTP reaching `cdn`."""
    made = discord.Client(intents=discord.Intents.none())
    state = made._connection
    state.http = cdn  # type: ignore[assignment]
    state.user = discord.ClientUser(state=state, data=a_user(BOT_ID, "omega_bot", bot=True))  # type: ignore[arg-type]
    channel: dict[str, Any] = {"id": str(GUILD_CHANNEL_ID), "type": 0, "name": "g"}
    channel["guild_id"] = str(GUILD_ID)
    channel |= {"position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None}
    state._add_guild_from_data(
        {  # type: ignore[typeddict-item]
            "id": str(GUILD_ID),
            "name": "Test Server",
            "owner_id": "1",
            "unavailable": False,
            "member_count": 3,
            "roles": [],
            "channels": [channel],  # type: ignore[list-item]
            "threads": [],
            "members": [],
            "emojis": [],
            "stickers": [],
            "features": [],
        }
    )
    return made


def channel(cdn: Cdn, tmp: Path) -> DiscordChannel:
    config = DiscordConfig(
        enabled=True,
        bot_token="x.y.z",  # type: ignore[arg-type]
        guilds=True,
        max_download_mb=LIMIT / 1024 / 1024,
    )
    made = DiscordChannel(config, DiscordState(tmp / "state.json"), HealthReporter(None, str))
    made.client = client(cdn)
    return made


# -- the strategies ----------------------------------------------------------------------------

odd_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(max_size=10),  # lone surrogates too: JSON escapes them
    st.sampled_from(
        ["", " ", "\u202e\u200b", "e\u0301", "👩‍👩‍👧‍👦", "\x00\x1b[31m", "@everyone", "<@!>"]
    ),
    st.integers(5_000, 70_000).map(lambda n: "𝔘" * n),
)
snowflakes = st.one_of(
    st.integers(0, 2**64 - 1),
    st.integers(-(2**63), -1),
    st.sampled_from([0, 1, BOT_ID, GUILD_ID, GUILD_CHANNEL_ID, 2**64 - 1, 2**64]),
)
MENTION_FORMS = ["<@{}>", "<@!{}>", "<@{}> ", " <@!{}>"]


@st.composite
def users(draw: st.DrawFn) -> dict[str, Any]:
    """A user: a person, a bot, Discord's system user, a webhook's author; names optional."""
    user: dict[str, Any] = {
        "id": str(draw(st.one_of(snowflakes, st.just(42)))),
        "username": draw(odd_text),
        "discriminator": draw(st.sampled_from(["0", "0000", "1234"])),
        "avatar": None,
    }
    if draw(st.booleans()):
        user["global_name"] = draw(st.one_of(st.none(), odd_text))
    for flag in ("bot", "system"):
        if draw(st.integers(0, 4)) == 0:
            user[flag] = draw(st.booleans())
    return user


@st.composite
def members(draw: st.DrawFn) -> dict[str, Any]:
    member: dict[str, Any] = {"roles": [], "joined_at": "2024-01-01T00:00:00+00:00"}
    member |= {"deaf": False, "mute": False, "flags": 0}
    if draw(st.booleans()):
        member["nick"] = draw(st.one_of(st.none(), odd_text))
    return member


@st.composite
def attachments(draw: st.DrawFn) -> dict[str, Any]:
    url = draw(st.sampled_from(["https://cdn.example/a/1/x.png", "", "not a url"]))
    file: dict[str, Any] = {
        "id": str(draw(snowflakes)),
        "filename": draw(odd_text),
        "size": draw(st.integers(0, 3 * LIMIT)),
        "url": url,
        "proxy_url": url,
    }
    if draw(st.booleans()):
        file["content_type"] = draw(
            st.one_of(
                st.none(),
                st.sampled_from(["image/png", "audio/ogg", "video/mp4", "", ";", "text/plain; x"]),
                odd_text,
            )
        )
    for key, value in (("width", 10), ("height", 10), ("duration_secs", 1.5), ("flags", 4)):
        if draw(st.integers(0, 3)) == 0:
            file[key] = value
    return file


# Default, reply, and the rest: joins, pins, boosts, thread starters, forwards, the unknown.
TYPES = [0, 0, 0, 19, 19, 1, 6, 7, 8, 18, 20, 21, 23, 46, 255, 9999]


@st.composite
def messages(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A MESSAGE_CREATE's data: any optional field there or not."""
    in_guild = draw(st.booleans())
    channel_id = draw(st.one_of(st.just(GUILD_CHANNEL_ID), snowflakes))
    content = draw(odd_text)
    if draw(st.booleans()):
        where = draw(st.integers(0, len(content)))
        form = draw(st.sampled_from(MENTION_FORMS)).format(BOT_ID)
        content = content[:where] + form + content[where:]
    message: dict[str, Any] = {
        "id": str(draw(snowflakes)),
        "channel_id": str(channel_id),
        "author": draw(users()),
        "content": content,
        "timestamp": "2024-01-01T00:00:00+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": draw(st.booleans()),
        "mentions": [],
        "mention_roles": [],
        "attachments": draw(st.lists(attachments(), max_size=3)),
        "embeds": [],
        "pinned": False,
        "type": draw(st.sampled_from(TYPES)),
    }
    if draw(st.booleans()):
        message["flags"] = draw(st.sampled_from([0, 1 << 14, 1 << 15, 4096]))
    if draw(st.booleans()):
        mentioned = draw(st.lists(users(), max_size=2))
        if draw(st.booleans()):
            mentioned.append(a_user(BOT_ID, "omega_bot", bot=True))
        message["mentions"] = mentioned
    if in_guild:
        message["guild_id"] = str(draw(st.one_of(st.just(GUILD_ID), snowflakes)))
        if draw(st.integers(0, 4)):
            message["member"] = draw(members())
    if draw(st.integers(0, 5)) == 0:
        message["webhook_id"] = str(draw(snowflakes))
    if draw(st.integers(0, 5)) == 0:
        message["thread"] = {
            "id": str(draw(snowflakes)),
            "type": 11,
            "guild_id": str(GUILD_ID),
            "parent_id": str(GUILD_CHANNEL_ID),
            "name": draw(odd_text),
            "owner_id": "42",
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 60,
                "archive_timestamp": "2024-01-01T00:00:00+00:00",
                "locked": False,
            },
        }
    if depth == 0 and draw(st.integers(0, 2)) == 0:
        reference: dict[str, Any] = {"message_id": str(draw(snowflakes))}
        reference["channel_id"] = str(draw(st.sampled_from([channel_id, GUILD_CHANNEL_ID])))
        if in_guild:
            reference["guild_id"] = str(GUILD_ID)
        message["message_reference"] = reference
        shape = draw(st.sampled_from(["gone", "missing", "message", "mine"]))
        if shape == "gone":  # deleted: Discord sends null
            message["referenced_message"] = None
        elif shape != "missing":
            original = draw(messages(depth=1))
            if shape == "mine":
                original["author"] = a_user(BOT_ID, "omega_bot", bot=True)
            message["referenced_message"] = original
    if draw(st.integers(0, 8)) == 0:
        message["unknown_field_from_next_year"] = {"x": [1, None]}
    return message


def incoming(data: dict[str, Any], cdn: Cdn, tmp: Path) -> IncomingMessage | None:
    """What the channel makes of `data`, read by discord.py as its gateway parser does."""
    made = channel(cdn, tmp)
    assert made.client is not None
    state = made.client._connection
    where, _ = state._get_guild_channel(data)  # type: ignore[arg-type]
    message = discord.Message(state=state, channel=where, data=data)  # type: ignore[arg-type]
    return asyncio.run(made._incoming(message, not _in_guild(message)))


def check(result: IncomingMessage | None, data: dict[str, Any]) -> None:
    if result is None:
        return
    assert result.channel == "discord"
    assert result.id == f"discord:{int(data['id'])}"
    assert result.sender_id == str(int(data["author"]["id"]))
    assert result.is_group == ("guild_id" in data)
    assert result.text or result.attachments
    result.text.encode("utf-8")  # no lone surrogate left
    result.sender_name.encode("utf-8")


# -- the tests ---------------------------------------------------------------------------------

FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@FUZZ
@given(messages())
def test_no_well_formed_message_makes_incoming_raise(tmp_path: Path, data: dict[str, Any]) -> None:
    check(incoming(data, Cdn(), tmp_path), data)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    messages(),
    st.sampled_from(
        [aiohttp.ClientConnectionError("refused"), aiohttp.InvalidURL("not a url"), TimeoutError()]
    ),
)
def test_a_file_the_cdn_fails_on_is_a_note_not_an_error(
    tmp_path: Path, data: dict[str, Any], failure: Exception
) -> None:
    check(incoming(data, Cdn(failure), tmp_path), data)


def test_a_file_whose_download_times_out_arrives_as_a_note(tmp_path: Path) -> None:
    """aiohttp's total timeout (discord.py's session keeps the 5-minute default) raises a bare
    TimeoutError, not a ClientError."""
    data = {
        "id": "77",
        "channel_id": "500",
        "author": a_user(42, "ana"),
        "content": "see this",
        "timestamp": "2024-01-01T00:00:00+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [
            {"id": "9", "filename": "a.png", "size": 10, "url": "https://c/a", "proxy_url": "x"}
        ],
        "embeds": [],
        "pinned": False,
        "type": 0,
    }
    result = incoming(data, Cdn(TimeoutError()), tmp_path)
    assert result is not None and result.attachments == []
    assert result.text == "[The file a.png sent here could not be downloaded.]\nsee this"
