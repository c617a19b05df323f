"""Identity is (channel, id): the same id on two channels is two people until the owner links
them (`omega people link`); rights stay with the channel id. Played through the real pipeline
with the scripted OpenAI-compatible provider."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from omega.gateway.pipeline import handle_message
from omega.memory import Store
from omega.turn import PipelineDeps
from omega.types import IncomingMessage
from tests.conftest import MakeDeps, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder


@pytest.fixture
def deps(make_deps: MakeDeps, fake_openai: FakeOpenAI) -> PipelineDeps:
    return make_deps(
        **openai_env(
            fake_openai,
            OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS=json.dumps(["42"]),
            OMEGA_PROVIDER__CLASSIFY="false",
        )
    )


def say(deps: PipelineDeps, channel: str, text: str) -> Recorder:
    out = Recorder()
    asyncio.run(
        handle_message(deps, IncomingMessage(channel, "42", text, assurance="platform"), out)
    )
    return out


def prompt_for(fake: FakeOpenAI, text: str) -> str:
    return next(r.system_text for r in reversed(fake.requests) if r.last_user_text == text)


def test_the_same_id_on_two_channels_is_two_people_until_linked(
    deps: PipelineDeps, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Noted.\nSCHEDULE: water the plants | 2031-05-01T09:00")]
    say(deps, "terminal", "remind me to water the plants")
    fake_openai.script = [Step(text="Hello.")]
    out = say(deps, "telegram", "what do I have planned?")
    assert "water the plants" not in prompt_for(fake_openai, "what do I have planned?")
    assert [(m.channel, m.target) for m in out.sent if m.kind == "reply"] == [("telegram", "42")]

    linked = run_omega("people", "link", "telegram:42", "terminal:42")
    assert linked.returncode == 0, linked.stderr
    listing = run_omega("people", "list").stdout
    assert "telegram:42  ->  42" in listing and "terminal:42  ->  42" in listing

    fake_openai.script = [Step(text="Your plants.")]
    out = say(deps, "telegram", "and now?")
    assert "water the plants" in prompt_for(fake_openai, "and now?")
    # Replies still go to the telegram id; the folder is the person's, shared by both ids.
    assert [(m.channel, m.target) for m in out.sent if m.kind == "reply"] == [("telegram", "42")]


def test_linking_to_the_owner_does_not_give_owner_rights(
    deps: PipelineDeps, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    from omega.turn import local_owner_id

    owner = local_owner_id()
    asyncio.run(
        handle_message(
            deps, IncomingMessage("terminal", owner, "hi", assurance="local"), Recorder()
        )
    )
    assert run_omega("people", "link", "telegram:42", f"terminal:{owner}").returncode == 0
    fake_openai.script = [Step(text="Sure.\nHEARTBEAT_ADD: mail the owner's notes to 42")]
    say(deps, "telegram", "add a check")
    assert not (isolated_env / "HEARTBEAT.md").exists()
    [row] = deps.store.query("SELECT sender_id, detail FROM audit_log WHERE event='marker_refused'")
    assert row["sender_id"] == owner  # the person, whose memory it is
    assert "not allowed for person" in row["detail"]


@pytest.mark.sqlite_only  # SQLite's scripts applied in two steps to a file
def test_an_existing_database_gets_its_identities(tmp_path: Path) -> None:

    from omega.memory.migrations import bundled_migrations, migrate

    db = tmp_path / "memory.db"
    conn = sqlite3.connect(db)
    before = [m for m in bundled_migrations() if m.version < 10]
    migrate(conn, before)
    rows = [
        ("c1", "terminal", "7", "2026-01-01T00:00:00.000000Z"),
        ("c2", "telegram", "7", "2026-02-01T00:00:00.000000Z"),
        ("c3", "telegram", "7", "2026-03-01T00:00:00.000000Z"),
        ("c4", "telegram", "9", "2026-03-01T00:00:00.000000Z"),
    ]
    conn.executemany(
        "INSERT INTO conversations (id, channel, sender_id, started_at, last_activity) "
        "VALUES (?, ?, ?, ?, ?)",
        [(*row, row[3]) for row in rows],
    )
    conn.commit()
    migrate(conn)
    found = set(conn.execute("SELECT channel, sender_id, person FROM identities"))
    conn.close()
    assert found == {
        ("terminal", "7", "7"),
        ("telegram", "7", "telegram:7"),
        ("telegram", "9", "9"),
    }
    store = Store(db)
    try:
        assert store.person_of("telegram", "7") == "telegram:7"
        assert store.person_of("whatsapp", "7") == "whatsapp:7"
        assert store.person_of("whatsapp", "11") == "11"
    finally:
        store.close()


def test_linked_channel_ids_share_one_folder(
    make_deps: MakeDeps, fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """A person's files are one folder whichever linked channel they write from (it was one
    folder a channel: a file saved from WhatsApp was not there on Telegram)."""
    deps = make_deps(
        **openai_env(
            fake_openai,
            OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS=json.dumps(["42"]),
            OMEGA_CHANNEL__WHATSAPP__ALLOWED_USERS=json.dumps(["42"]),
            OMEGA_PROVIDER__CLASSIFY="false",
        )
    )
    linked = run_omega("people", "link", "whatsapp:42", "telegram:42")
    assert linked.returncode == 0, linked.stderr
    folders = []
    for channel in ("telegram", "whatsapp"):
        fake_openai.script = [Step(text="Hi.")]
        say(deps, channel, f"hello from {channel}")
        prompt = prompt_for(fake_openai, f"hello from {channel}")
        [folder] = [word for word in prompt.split() if "/people/" in word]
        folders.append(folder)
    assert folders[0] == folders[1], folders
