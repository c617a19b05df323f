"""Channels keep their cursor and state in the store (omega.channels.state): a channel built on
another host (another $OMEGA_HOME, the same store) resumes from what the first one saved; a
file left by an Omega that kept state in files only is taken into the store once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omega.channels.discord.state import DiscordState
from omega.channels.email.mail import Thread
from omega.channels.email.state import MailState
from omega.channels.matrix.state import SyncState
from omega.channels.slack.state import SlackState
from omega.channels.state import ChannelState
from omega.memory import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "memory.db")


def test_a_mail_cursor_saved_on_one_host_is_where_another_host_resumes(
    store: Store, tmp_path: Path
) -> None:
    first_home, second_home = tmp_path / "host-a", tmp_path / "host-b"
    stored = ChannelState(store, "email")
    state = MailState.load(first_home / "email.state.json", stored)
    state.uidvalidity, state.last_uid = 7, 41
    state.remember("email:7:41", "ana@example.org", Thread("<m41@x>", (), "Plans"))
    assert state.admit("email:7:41")
    state.save()
    # The leader dies; a replica on another machine (no file there) takes the channel over.
    assert not (second_home / "email.state.json").exists()
    resumed = MailState.load(second_home / "email.state.json", ChannelState(store, "email"))
    assert (resumed.uidvalidity, resumed.last_uid) == (7, 41)
    assert resumed.thread("email:7:41", "ana@example.org").message_id == "<m41@x>"


def test_matrix_discord_and_slack_state_follow_the_channel_to_another_host(
    store: Store, tmp_path: Path
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    sync = SyncState.load(a / "matrix.state.json", ChannelState(store, "matrix"))
    sync.next_batch = "s72594_4483_1934"
    sync.save()
    assert SyncState.load(b / "matrix.state.json", ChannelState(store, "matrix")).next_batch == (
        "s72594_4483_1934"
    )
    discord = DiscordState.load(a / "discord.state.json", ChannelState(store, "discord"))
    discord.handed(111, 999, dm=True)
    discord.save()
    moved = DiscordState.load(b / "discord.state.json", ChannelState(store, "discord"))
    assert moved.tracked() == [(111, 999, True)]
    slack = SlackState.load(a / "slack.state.json", ChannelState(store, "slack"))
    slack.follow(("C1", "200.1"))
    slack.save()
    assert SlackState.load(b / "slack.state.json", ChannelState(store, "slack")).followed == {
        ("C1", "200.1")
    }
    # Each channel has its own document.
    assert store.state_keys("channel:matrix") == ["state"]
    assert store.state_get("channel:email", "state") is None


def test_a_file_from_before_is_taken_into_the_store_once(store: Store, tmp_path: Path) -> None:
    old = tmp_path / "home" / "matrix.state.json"
    old.parent.mkdir()
    old.write_text(json.dumps({"next_batch": "s1_from_a_file"}), encoding="utf-8")
    assert SyncState.load(old, ChannelState(store, "matrix")).next_batch == "s1_from_a_file"
    elsewhere = tmp_path / "other" / "matrix.state.json"
    assert SyncState.load(elsewhere, ChannelState(store, "matrix")).next_batch == ("s1_from_a_file")
    # The store's copy wins over a stale file on this host.
    old.write_text(json.dumps({"next_batch": "stale"}), encoding="utf-8")
    assert SyncState.load(old, ChannelState(store, "matrix")).next_batch == "s1_from_a_file"


def test_a_channel_built_before_another_leader_moved_the_cursor_resumes_at_the_new_one(
    store: Store, tmp_path: Path
) -> None:
    """Every replica builds its channels at start and runs one when it takes the lease: the
    state is read again then, or it would resume where things stood when it was built (for
    e-mail: "never connected", which starts at the newest mail and skips the failover's)."""
    follower = MailState.load(tmp_path / "b" / "email.state.json", ChannelState(store, "email"))
    sync = SyncState.load(tmp_path / "b" / "matrix.state.json", ChannelState(store, "matrix"))
    leader = MailState.load(tmp_path / "a" / "email.state.json", ChannelState(store, "email"))
    leader.uidvalidity, leader.last_uid = 7, 12
    leader.save()
    other = SyncState.load(tmp_path / "a" / "matrix.state.json", ChannelState(store, "matrix"))
    other.next_batch = "s99"
    other.save()
    assert follower.last_uid == -1 and sync.next_batch == ""
    follower.refresh()
    sync.refresh()
    assert (follower.uidvalidity, follower.last_uid) == (7, 12)
    assert sync.next_batch == "s99"
