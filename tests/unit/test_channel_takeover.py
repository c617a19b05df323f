"""Discord and Slack, like e-mail and Matrix, read their state from the store again when they
start receiving (issue 38). Every replica builds its channels at start, but only the one that
takes the lease `channel:<name>` runs one, maybe long after, on another host: what it read when
it was built is stale by then. Each test builds the follower first (host b), lets the leader
(host a, the same store) answer and stop, then runs the follower against the wire double: it
goes on from what the leader left in the store (Discord: the DM channels to catch up on;
Slack: the threads Omega follows), and its first save does not drop them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from omega.channels import discord as discord_plugin
from omega.channels import slack as slack_plugin
from omega.channels.base import Channel
from omega.channels.discord import DiscordConfig
from omega.channels.plugin import ChannelContext
from omega.channels.slack import SlackConfig
from omega.config import Config
from omega.memory import Store
from omega.paths import OmegaPaths
from omega.types import IncomingMessage, OutgoingMessage
from tests.fakes.discord_server import TOKEN, FakeDiscord
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, BOT_USER, FakeSlack

ANA_DISCORD = 42
ANA_SLACK = "U0ANA00001"
GENERAL = "C0GENERAL1"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """The fleet's one store (PostgreSQL on the PostgreSQL run); each host has its own home."""
    shared = Store(tmp_path / "memory.db")
    yield shared
    shared.close()


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with FakeDiscord() as server:
        yield server


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        server.add_user(ANA_SLACK, "Ana")
        yield server


class Receiving:
    """A channel running (`run` in a task), with what it submitted."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.got: list[IncomingMessage] = []
        self.task = asyncio.create_task(channel.run(self.submit))

    async def submit(self, message: IncomingMessage) -> asyncio.Future[None]:
        self.got.append(message)
        durable: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        durable.set_result(None)
        return durable

    def _once(self) -> list[IncomingMessage]:
        """What was submitted, each id once (as the durable inbox keeps it: Slack sends a
        mention as two events, one message)."""
        return list({message.id: message for message in self.got}.values())

    async def texts(self, count: int) -> list[str]:
        """The texts of the messages submitted, once there are `count`."""
        await _until(lambda: len(self._once()) >= count, f"{count} messages, got {self.got}")
        return [message.text for message in self._once()]

    async def stop(self) -> None:
        await self.channel.stop()
        await asyncio.wait_for(self.task, 10)


async def _until(predicate: object, what: str, secs: float = 15.0) -> None:
    for _ in range(int(secs / 0.05)):
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _built(name: str, section: BaseModel, home: Path, store: Store) -> Channel:
    """The channel as `omega start` builds it on a host whose $OMEGA_HOME is `home`."""
    plugin = discord_plugin.PLUGIN if name == "discord" else slack_plugin.PLUGIN
    home.mkdir(parents=True, exist_ok=True)
    ctx = ChannelContext(
        name=name,
        config=Config(),
        section=section,
        paths=OmegaPaths(home),
        health_file=home / f"{name}.health.json",
        store=store,
    )
    return plugin.factory(ctx)


async def test_a_discord_follower_catches_up_on_the_channels_the_leader_left_in_the_store(
    discord: FakeDiscord, store: Store, tmp_path: Path
) -> None:
    section = DiscordConfig(enabled=True, bot_token=SecretStr(TOKEN), api_url=discord.api_url)
    follower = _built("discord", section, tmp_path / "host-b", store)  # built at its start
    leader = Receiving(_built("discord", section, tmp_path / "host-a", store))
    await _until(discord.connected, "the leader's gateway session")
    await asyncio.to_thread(discord.dm, ANA_DISCORD, "hello")
    assert await leader.texts(1) == ["hello"]
    # Answered there: the DM channel is remembered, to catch up on after a new session.
    await leader.channel.send(OutgoingMessage("discord", str(ANA_DISCORD), "Hi Ana."))
    await leader.stop()  # the leader is gone; Ana writes while nobody reads

    await asyncio.to_thread(discord.dm, ANA_DISCORD, "sent during the failover")
    taking_over = Receiving(follower)
    try:
        assert await taking_over.texts(1) == ["sent during the failover"]
    finally:
        await taking_over.stop()
    dm_channel = discord.dm_channels[ANA_DISCORD]
    assert [channel for channel, _ in discord.history_reads] == [dm_channel]
    kept = store.state_get("channel:discord", "state")
    assert str(dm_channel) in kept["channels"]


async def test_a_slack_follower_follows_the_threads_the_leader_left_in_the_store(
    slack: FakeSlack, store: Store, tmp_path: Path
) -> None:
    section = SlackConfig(
        enabled=True,
        bot_token=SecretStr(BOT_TOKEN),
        app_token=SecretStr(APP_TOKEN),
        api_url=slack.api_url,
    )
    follower = _built("slack", section, tmp_path / "host-b", store)  # built at its start
    leader = Receiving(_built("slack", section, tmp_path / "host-a", store))
    await _until(lambda: slack.connections == 1, "the leader's socket")
    root = await asyncio.to_thread(
        slack.post, ANA_SLACK, GENERAL, f"<@{BOT_USER}> plans for Friday?", mention=True
    )
    assert await leader.texts(1) == ["plans for Friday?"]
    # Answered in its thread: Omega follows the thread (no mention needed from now on).
    await leader.channel.send(OutgoingMessage("slack", leader.got[0].reply_target, "Let's see."))
    assert (GENERAL, root) in leader.channel.state.followed  # type: ignore[attr-defined]
    await leader.stop()

    taking_over = Receiving(follower)
    try:
        await _until(lambda: slack.connections == 2, "the new leader's socket")
        await asyncio.to_thread(slack.post, ANA_SLACK, GENERAL, "and the date?", thread_ts=root)
        assert await taking_over.texts(1) == ["and the date?"]
    finally:
        await taking_over.stop()
    kept = store.state_get("channel:slack", "state")
    assert [GENERAL, root] in kept["threads"]
