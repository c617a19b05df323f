"""The Slack channel in-process against the wire double: an event is acknowledged only once
its message is durable (a failed submit is tried again first), and the bot token is
never sent to a file host that is not Slack's."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import SecretStr

from omega.channels.health import HealthReporter
from omega.channels.plugin import ChannelContext, ChannelUnavailableError
from omega.channels.slack import PLUGIN
from omega.channels.slack.channel import SlackChannel
from omega.channels.slack.config import SlackConfig
from omega.channels.slack.state import SlackState
from omega.config import Config
from omega.health_file import read_health
from omega.paths import OmegaPaths
from omega.types import IncomingMessage
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, BOT_USER, TEAM, FakeSlack

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ANA = "U0ANA00001"
GENERAL = "C0GENERAL1"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        server.add_user(ANA, "Ana")
        yield server


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        _Recorder.seen.append(dict(self.headers))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"stolen")


async def _until(predicate: Any, secs: float = 15) -> None:
    for _ in range(int(secs / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


def _channel(slack: FakeSlack, home: Path) -> SlackChannel:
    config = SlackConfig(
        enabled=True,
        allowed_users=[ANA],
        bot_token=SecretStr(BOT_TOKEN),
        app_token=SecretStr(APP_TOKEN),
        api_url=slack.api_url,
    )
    state = SlackState.load(home / "slack.state.json")
    return SlackChannel(config, BOT_TOKEN, APP_TOKEN, state, HealthReporter(None, lambda: ""))


async def test_an_event_is_acknowledged_only_after_it_is_durable(
    slack: FakeSlack, tmp_path: Path
) -> None:
    channel = _channel(slack, tmp_path)
    taken: list[IncomingMessage] = []
    failures = [RuntimeError("the inbox is not writable")]

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if failures:
            raise failures.pop()
        taken.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    paused = asyncio.Event()
    resume = asyncio.Event()

    async def pause(secs: float) -> None:  # the store is away until the test says otherwise
        paused.set()
        await resume.wait()

    channel._sleep = pause  # type: ignore[method-assign]
    task = asyncio.create_task(channel.run(submit))
    try:
        await _until(lambda: slack.connections == 1)
        ts, _ = await asyncio.to_thread(slack.dm, ANA, "hello")
        await asyncio.wait_for(paused.wait(), 15)
        [first] = slack.envelopes
        assert first.acked_at is None  # not durable: not acknowledged (submitted again)
        resume.set()
        await _until(lambda: slack.envelopes[-1].acked_at is not None)
        assert [m.id for m in taken] == [f"slack:{TEAM}:D0ANA00001:{ts}"]
        assert taken[0].sender_name == "Ana" and taken[0].reply_target == "D0ANA00001"

        # An event Omega has no use for is still acknowledged, so Slack does not retry it.
        reaction = {"type": "reaction_added", "user": ANA, "reaction": "tada", "event_ts": ts}
        await asyncio.to_thread(slack.deliver, reaction)
        await _until(lambda: slack.envelopes[-1].acked_at is not None)
        assert len(taken) == 1
    finally:
        await channel.stop()
        await asyncio.wait_for(task, 10)


async def test_the_bot_token_goes_to_slack_file_hosts_only(
    slack: FakeSlack, tmp_path: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    channel = _channel(slack, tmp_path)
    taken: list[IncomingMessage] = []

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        taken.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    task = asyncio.create_task(channel.run(submit))
    try:
        await _until(lambda: slack.connections == 1)
        good = slack.add_file(b"%PDF-1.4 real", "real.pdf", "application/pdf")
        evil = dict(good, url_private=f"http://127.0.0.1:{server.server_port}/x", name="x.pdf")
        del evil["url_private_download"]
        await asyncio.to_thread(slack.dm, ANA, "two files", [good, evil])
        await _until(lambda: bool(taken))
        [message] = taken
        assert [a.data for a in message.attachments] == [b"%PDF-1.4 real"]
        assert "x.pdf sent here could not be downloaded" in message.text
        assert _Recorder.seen == []
    finally:
        server.shutdown()
        await channel.stop()
        await asyncio.wait_for(task, 10)


def _context(tmp_path: Path, **section: Any) -> ChannelContext:
    return ChannelContext(
        name="slack",
        config=Config(),
        section=SlackConfig(enabled=True, **section),
        paths=OmegaPaths(tmp_path),
        health_file=tmp_path / "slack.health.json",
    )


def test_the_factory_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    with pytest.raises(ChannelUnavailableError, match=r"bot_token .*app_token"):
        PLUGIN.factory(_context(tmp_path))
    with pytest.raises(ChannelUnavailableError, match="starting with xapp-"):
        PLUGIN.factory(_context(tmp_path, bot_token=BOT_TOKEN, app_token=BOT_TOKEN))
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    assert isinstance(PLUGIN.factory(_context(tmp_path)), SlackChannel)

    # Without the `slack` extra: the pip command to install it.
    for module in [name for name in sys.modules if name.split(".")[0] == "slack_bolt"]:
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.delitem(sys.modules, "omega.channels.slack.channel")
    with pytest.raises(ChannelUnavailableError, match=r"pip install 'omega-agent\[slack\]'"):
        PLUGIN.factory(_context(tmp_path))


async def test_a_refused_bot_token_stops_the_channel_and_says_why(
    slack: FakeSlack, tmp_path: Path
) -> None:
    config = SlackConfig(enabled=True, api_url=slack.api_url)
    health = tmp_path / "slack.health.json"
    channel = SlackChannel(
        config,
        "xoxb-wrong",
        APP_TOKEN,
        SlackState(tmp_path / "s.json"),
        HealthReporter(health, lambda: ""),
    )

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        raise AssertionError("nothing may arrive")

    await asyncio.wait_for(channel.run(submit), 10)
    assert read_health(health) == {"state": "token rejected"} | (read_health(health) or {})
    assert "bot_token" in str((read_health(health) or {}).get("detail"))

    # The bot token is good but the app-level one is not: Socket Mode cannot open.
    health.unlink()
    channel = SlackChannel(
        config,
        BOT_TOKEN,
        "xapp-wrong",
        SlackState(tmp_path / "s.json"),
        HealthReporter(health, lambda: ""),
    )
    await asyncio.wait_for(channel.run(submit), 10)
    assert "app_token" in str((read_health(health) or {}).get("detail"))
    assert slack.connections == 0


async def test_nothing_of_a_refused_stranger_is_kept(
    slack: FakeSlack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 36: a thread is followed once Omega answered there, never for a refusal; the
    # display names looked up are a bounded cache.
    monkeypatch.setattr("omega.channels.slack.channel.NAMES_KEPT", 2, raising=False)
    channel = _channel(slack, tmp_path)
    seen: dict[str, IncomingMessage] = {}  # by id: a mention comes as two events

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        seen.setdefault(message.id, message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def taken() -> list[IncomingMessage]:
        return list(seen.values())

    for number in range(3):
        slack.add_user(f"U0EVE0000{number}", f"Eve {number}")
    task = asyncio.create_task(channel.run(submit))
    try:
        await _until(lambda: slack.connections == 1)
        strangers = []
        for number in range(3):
            text = f"<@{BOT_USER}> hello from eve {number}"
            strangers.append(
                await asyncio.to_thread(slack.post, f"U0EVE0000{number}", GENERAL, text, "", True)
            )
        await _until(lambda: len(taken()) == 3)
        for message in taken():
            await channel.send(message.answer("Sorry, I'm not able to talk with you.", "denied"))
        assert channel.state.threads == []
        assert not (tmp_path / "slack.state.json").exists()
        assert len(channel._names) == 2  # bounded, the oldest forgotten

        root = await asyncio.to_thread(slack.post, ANA, GENERAL, f"<@{BOT_USER}> hi", "", True)
        await _until(lambda: len(taken()) == 4)
        await channel.send(taken()[-1].answer("Hello Ana."))
        assert channel.state.threads == [(GENERAL, root)]
        assert json.loads((tmp_path / "slack.state.json").read_text())["threads"] == [
            [GENERAL, root]
        ]
        assert not set(strangers) & {ts for _, ts in channel.state.threads}
    finally:
        await channel.stop()
        await asyncio.wait_for(task, 10)
