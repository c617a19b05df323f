"""Discord catch-up after a reconnect reads on past a message discord.py cannot parse (an
attachment without `size` or `url` raised KeyError inside its parser, which ended the whole
catch-up): that one is logged and reported, the channel's other messages are queued."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omega.channels.discord.channel import DiscordChannel
from tests.unit.test_fuzz_channels_discord import Cdn, a_message, a_user
from tests.unit.test_fuzz_channels_discord import channel as a_channel

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

DM_CHANNEL = 500
OTHER_DM = 600


def raw(message_id: int, channel_id: int, text: str, files: list[Any] | None = None) -> Any:
    """A message as the channel-history endpoint returns it."""
    return a_message(message_id, channel_id, a_user(42, "ana"), text, files or [])


class History(Cdn):
    """Discord's HTTP API as discord.py reaches it: the messages of each channel, newest first."""

    def __init__(self, pages: dict[int, list[Any]]) -> None:
        super().__init__()
        self.pages = pages

    async def logs_from(
        self, channel_id: int, limit: int, before: Any = None, after: Any = None, around: Any = None
    ) -> list[Any]:
        return [m for m in self.pages.get(int(channel_id), []) if int(m["id"]) > int(after or 0)]


async def test_one_unparsable_message_does_not_stop_the_catch_up(tmp_path: Path) -> None:
    no_size = {"id": "9", "filename": "x.png", "url": "https://cdn.example/x.png"}
    no_url = {"id": "8", "filename": "y.png", "size": 10}
    history = History(
        {
            DM_CHANNEL: [
                raw(104, DM_CHANNEL, "after both"),
                raw(103, DM_CHANNEL, "no url", [no_url]),
                raw(102, DM_CHANNEL, "no size", [no_size]),
                raw(101, DM_CHANNEL, "before"),
            ],
            OTHER_DM: [raw(201, OTHER_DM, "elsewhere")],
        }
    )
    channel: DiscordChannel = a_channel(history, tmp_path)
    channel.state.handed(DM_CHANNEL, 100, True)
    channel.state.handed(OTHER_DM, 200, True)
    reported: list[tuple[int | str, int, str]] = []

    async def dropped(message_id: int | str, tries: int, error: str) -> None:
        reported.append((message_id, tries, error))

    channel._dropped = dropped
    assert channel.client is not None
    await channel._catch_up(channel.client)
    queued = []
    while not channel._queue.empty():
        message, dm = channel._queue.get_nowait()
        queued.append((message.id, message.content, dm))
    assert queued == [
        (101, "before", True),
        (104, "after both", True),
        (201, "elsewhere", True),
    ]
    assert sorted(m for m, _, _ in reported) == ["102", "103"]
    assert all(tries == 1 and "KeyError" in error for _, tries, error in reported)
