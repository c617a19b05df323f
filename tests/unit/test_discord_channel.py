"""The Discord channel in-process against its wire double (what is addressed to Omega in a
guild, files too large, replies to the bot), its 2,000-character pieces (with a fuzz test),
its state file, its config and its factory."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from omega.channels.discord import PLUGIN, DiscordConfig
from omega.channels.discord.channel import DiscordChannel, DiscordSendError
from omega.channels.discord.files import photo_filename
from omega.channels.discord.pieces import MAX_MESSAGE_CHARS, discord_pieces
from omega.channels.discord.state import DiscordState
from omega.channels.health import HealthReporter
from omega.channels.plugin import ChannelContext, ChannelUnavailableError, PluginChannelConfig
from omega.channels.text import FENCE, line_and_ending, utf16_len
from omega.config import Config
from omega.health_file import read_health
from omega.paths import OmegaPaths
from omega.types import IncomingMessage, OutgoingMessage
from tests.fakes.discord_server import GUILD_CHANNEL_ID, TOKEN, FakeDiscord

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ANA = 42


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with FakeDiscord() as server:
        yield server


class Running:
    """The channel running against the double, collecting what it submits."""

    def __init__(self, channel: DiscordChannel) -> None:
        self.channel = channel
        self.got: list[IncomingMessage] = []

    async def submit(self, message: IncomingMessage) -> asyncio.Future[None]:
        self.got.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def until(self, count: int) -> list[IncomingMessage]:
        for _ in range(200):
            if len(self.got) >= count:
                return self.got
            await asyncio.sleep(0.05)
        raise AssertionError(f"got {self.got}")


@pytest.fixture
async def running(discord: FakeDiscord, tmp_path: Path) -> AsyncIterator[Running]:
    config = DiscordConfig(
        enabled=True,
        bot_token=TOKEN,  # type: ignore[arg-type]
        api_url=discord.api_url,
        message_content_intent=True,
        max_download_mb=0.001,
    )
    channel = DiscordChannel(
        config, DiscordState(tmp_path / "state.json"), HealthReporter(None, lambda: "")
    )
    run = Running(channel)
    task = asyncio.create_task(channel.run(run.submit))
    while not await asyncio.to_thread(discord.connected):
        await asyncio.sleep(0.05)
    yield run
    await channel.stop()
    await asyncio.wait_for(task, 10)


async def test_in_a_guild_mentions_and_replies_to_the_bot_are_read_and_everyone_is_not(
    discord: FakeDiscord, running: Running
) -> None:
    await running.channel.send(
        OutgoingMessage("discord", f"channel:{GUILD_CHANNEL_ID}", "I am here.")
    )
    [mine] = discord.sent
    await asyncio.to_thread(discord.guild_message, ANA, "meeting at noon", everyone=True)
    await asyncio.to_thread(discord.guild_message, ANA, "why?", reply_to=mine)
    await asyncio.to_thread(discord.guild_message, ANA, "big file", mention=True)
    got = await running.until(2)
    await asyncio.sleep(0.3)
    assert [m.text for m in running.got] == ["why?", "big file"]
    assert all(m.is_group and m.reply_target == f"channel:{GUILD_CHANNEL_ID}" for m in got)
    assert got[0].id.startswith("discord:") and got[0].sender_id == str(ANA)


async def test_a_file_too_large_is_not_downloaded_and_the_person_is_told(
    discord: FakeDiscord, running: Running
) -> None:
    big = b"x" * 5000  # over max_download_mb = 0.001
    await asyncio.to_thread(discord.dm, ANA, "see this", "ana", [("big.bin", big, "")])
    [message] = await running.until(1)
    assert message.attachments == []
    assert message.text == "[The file big.bin sent here is too large for me to open.]\nsee this"
    assert not message.is_group and message.target == str(ANA)


def _fence_lines(piece: str) -> int:
    return sum(1 for raw in piece.splitlines(keepends=True) if FENCE.match(line_and_ending(raw)[0]))


def test_a_code_block_cut_in_two_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"print({i})  # a line of code" for i in range(150))
    text = f"Here it is:\n\n```python\n{code}\n```\n\nThat is all."
    pieces = discord_pieces(text)
    assert len(pieces) >= 3
    assert all(utf16_len(piece) <= MAX_MESSAGE_CHARS for piece in pieces)
    assert pieces[0].startswith("Here it is:\n\n```python\n")
    assert all(_fence_lines(piece) % 2 == 0 for piece in pieces)  # each renders as code
    assert all(piece.endswith(")  # a line of code\n```") for piece in pieces[:-1])  # lines
    assert all(piece.startswith("```python\n") for piece in pieces[1:])
    assert pieces[-1].endswith("```\n\nThat is all.")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "word ", " ", "\n", "\n```\n", "\n```py\n", "🙂", "\n\n", "é"]),
        max_size=300,
    ).map("".join),
    st.integers(min_value=60, max_value=200),  # room for a fence line beside the fences added
)
def test_pieces_fit_keep_code_blocks_whole_and_lose_nothing(text: str, limit: int) -> None:
    pieces = discord_pieces(text, limit)
    assert all(utf16_len(piece) <= limit and piece.strip() for piece in pieces)
    assert all(_fence_lines(piece) % 2 == 0 for piece in pieces)

    def visible(value: str) -> str:
        return "".join(value.split()).replace("`", "").replace("py", "")

    assert visible("".join(pieces)) == visible(text)


def test_a_photo_keeps_a_plain_file_name_else_is_named_by_its_bytes() -> None:
    assert photo_filename(b"x", "chart.png") == "chart.png"
    assert photo_filename(b"\xff\xd8\xff\xe0", "../../etc/passwd") == "photo.jpg"
    assert photo_filename(b"\x89PNG\r\n", "a caption, not a name") == "photo.png"
    assert photo_filename(b"GIF89a", "") == "photo.gif"


def test_the_state_survives_a_restart_and_a_damaged_file_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "discord.state.json"
    state = DiscordState(path)
    assert state.handed(10, 500, dm=True)
    assert not state.handed(10, 400, dm=True)  # an older message changes nothing
    state.handed(20, 700, dm=False)
    state.save()
    assert path.stat().st_mode & 0o777 == 0o600
    assert DiscordState.load(path).tracked() == [(10, 500, True), (20, 700, False)]
    path.write_text("{not json", encoding="utf-8")
    assert DiscordState.load(path).tracked() == []


def test_config_takes_ids_as_numbers_or_text_and_refuses_a_bad_api_url() -> None:
    config = DiscordConfig.model_validate({"allowed_users": [123456789012345678, "42"]})
    assert config.allowed_users == ["123456789012345678", "42"]
    with pytest.raises(ValidationError, match="http"):
        DiscordConfig.model_validate({"api_url": "discord.com"})
    with pytest.raises(ValidationError, match="colour"):
        DiscordConfig.model_validate({"colour": "blue"})
    own = set(DiscordConfig.model_fields) - set(PluginChannelConfig.model_fields)
    for name in own | {"allowed_users"}:  # what `omega init` asks for, in words
        assert DiscordConfig.model_fields[name].description, name


def _context(tmp_path: Path, section: DiscordConfig) -> ChannelContext:
    paths = OmegaPaths(tmp_path)
    return ChannelContext("discord", Config(), section, paths, tmp_path / "discord.health.json")


def test_the_factory_needs_a_token_and_names_the_extra_when_discord_py_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISCORD_BOT_TOKEN", raising=False)
    with pytest.raises(ChannelUnavailableError, match="DISCORD_BOT_TOKEN"):
        PLUGIN.factory(_context(tmp_path, DiscordConfig(enabled=True)))
    monkeypatch.setenv("DISCORD_BOT_TOKEN", TOKEN)
    monkeypatch.setitem(sys.modules, "discord", None)  # import discord fails
    monkeypatch.delitem(sys.modules, "omega.channels.discord.channel")
    with pytest.raises(ChannelUnavailableError, match=r"omega-agent\[discord\]"):
        PLUGIN.factory(_context(tmp_path, DiscordConfig(enabled=True)))


async def test_health_says_reconnecting_while_the_gateway_is_down_and_running_once_resumed(
    discord: FakeDiscord, tmp_path: Path
) -> None:
    health = tmp_path / "discord.health.json"
    config = DiscordConfig(enabled=True, bot_token=TOKEN, api_url=discord.api_url)  # type: ignore[arg-type]
    channel = DiscordChannel(
        config, DiscordState(tmp_path / "state.json"), HealthReporter(health, lambda: "bot")
    )
    run = Running(channel)
    task = asyncio.create_task(channel.run(run.submit))

    async def state_becomes(wanted: str) -> None:
        for _ in range(200):
            found = read_health(health) or {}
            if found.get("state") == wanted:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"health: {read_health(health)}")

    await state_becomes("running")
    discord.offline = True
    await asyncio.to_thread(discord.drop)
    await state_becomes("reconnecting")
    discord.offline = False
    await state_becomes("running")
    assert discord.identifies == 1 and len(discord.resumes) == 1
    with pytest.raises(DiscordSendError, match="not a Discord user or channel"):
        await channel.send(OutgoingMessage("discord", "ana@example.org", "hi"))
    await channel.stop()
    await asyncio.wait_for(task, 10)
    assert (read_health(health) or {}).get("state") == "stopped"
