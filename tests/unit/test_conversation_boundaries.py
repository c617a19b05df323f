"""Conversations follow privacy boundaries (issue 36): a direct chat and a group room are never
one conversation, on any channel; what memory brings into a room's prompt (history, recalled
messages, summaries, tasks, the memory-search tool) stays in that room; a scheduled action
runs in the conversation it was made in; a thread key cannot alias a hashed one, nor a raw id
another channel's person key. Store tests run on both engines (OMEGA_TEST_STORE=postgresql)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omega.gateway.pipeline import handle_message, respond
from omega.loops.scheduler import Scheduler
from omega.memory import Store
from omega.memory.conversations import thread_key
from omega.tools.builtin import BuiltinTools
from omega.tools.context import ToolDeps, reset_current_deps, set_current_deps
from omega.types import Context, IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider

SECRET = "zebrafever"  # what Ana says in private only


def _seen(context: Context) -> str:
    """Everything a provider call was given: the system prompt and every message."""
    return context.system_prompt + json.dumps([m.content for m in context.messages])


@pytest.mark.no_store
def test_a_message_names_its_conversation() -> None:
    assert IncomingMessage("telegram", "42", "hi", reply_target="42").conversation == ""
    room = IncomingMessage("telegram", "42", "hi", is_group=True, reply_target="-100")
    assert room.conversation == "-100"
    threaded = IncomingMessage("slack", "U1", "hi", reply_target="C1:1.2", thread="C1:1.2")
    assert threaded.conversation == "C1:1.2"
    # A group message whose channel names no room is still apart from the direct chat.
    assert IncomingMessage("plug", "ana", "hi", is_group=True).conversation not in ("", "ana")


# (channel, Ana's id there, her direct chat's reply target, a group room's reply target)
CHANNELS = [
    ("telegram", "42", "42", "-1001234567890"),
    ("whatsapp", "351900000042", "351900000042@s.whatsapp.net", "120363000000000042@g.us"),
]


@pytest.mark.parametrize(("channel", "ana", "direct", "group"), CHANNELS)
def test_what_is_said_in_private_never_reaches_a_rooms_prompt(
    make_deps: MakeDeps, channel: str, ana: str, direct: str, group: str
) -> None:
    provider = ScriptedProvider(default="Noted.")
    deps = make_deps(
        provider, **{f"OMEGA_CHANNEL__{channel.upper()}__ALLOWED_USERS": json.dumps([ana])}
    )

    def say(text: str, target: str, in_group: bool) -> Context:
        message = IncomingMessage(
            channel,
            ana,
            text,
            is_group=in_group,
            reply_target=target,
            assurance="platform",
        )
        provider.contexts.clear()
        asyncio.run(handle_message(deps, message, Recorder()))
        [answered] = [c for c in provider.answered if c.use_tools]
        return answered

    # In private: a closed conversation (summarised), then an open one.
    say(f"My diagnosis is {SECRET}, keep it between us.", direct, False)
    person = deps.store.person_of(channel, ana)
    closed = deps.store.close_active_conversation(channel, person)
    assert closed is not None
    deps.store.close_conversation(closed, f"Ana shared her diagnosis ({SECRET}).")
    say(f"Any diet advice for {SECRET}?", direct, False)

    # In the group room, words that would recall it: nothing of the direct chat is there.
    first = say("Tell the room about my diagnosis and diet advice.", group, True)
    assert SECRET not in _seen(first)
    assert first.group and first.thread == group
    second = say("And what did I just ask about diet?", group, True)
    assert "Tell the room about my diagnosis" in _seen(second)  # the room's own history
    assert SECRET not in _seen(second)

    # Back in private: the direct chat's history is there, the room's exchange is not in it.
    private = say("Thanks. Anything else?", direct, False)
    history = json.dumps([m.content for m in private.messages])
    assert f"Any diet advice for {SECRET}?" in history
    assert "Tell the room" not in history
    assert not private.group and private.thread == ""


def test_room_commands_show_only_the_room(make_deps: MakeDeps) -> None:
    deps = make_deps(
        ScriptedProvider(default="Noted."), OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS='["42"]'
    )
    store = deps.store
    person = store.person_of("telegram", "42")
    private = store.store_exchange("telegram", person, f"about {SECRET}", "ok")
    store.close_conversation(private, f"Talked about {SECRET}.")
    room = store.store_exchange("telegram", person, "lunch plans", "ok", thread="-100")
    store.close_conversation(room, "Planned lunch.")
    due = datetime.now(UTC) + timedelta(days=1)
    for target, what in (("42", f"Take {SECRET} pills"), ("-100", "Book the table")):
        store.create_task(
            channel="telegram", sender_id=person, reply_target=target, description=what, due_at=due
        )

    def ask(text: str, in_group: bool) -> str:
        out = Recorder()
        target = "-100" if in_group else "42"
        message = IncomingMessage(
            "telegram", "42", text, is_group=in_group, reply_target=target, assurance="platform"
        )
        asyncio.run(handle_message(deps, message, out))
        return " ".join(m.text for m in out.sent if m.kind == "command")

    in_room = ask("/history", True) + ask("/tasks", True)
    assert "Planned lunch." in in_room and "Book the table" in in_room
    assert SECRET not in in_room
    in_private = ask("/history", False) + ask("/tasks", False)
    assert SECRET in in_private and "Book the table" in in_private


def test_a_scheduled_action_made_in_a_room_runs_in_that_room(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(default="Lunch is at one.")
    deps = make_deps(provider, OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS='["42"]')
    store = deps.store
    person = store.person_of("telegram", "42")
    store.store_exchange("telegram", person, f"my diagnosis is {SECRET}", "noted")
    store.store_exchange("telegram", person, "lunch at one?", "sure", thread="-100")
    now = datetime.now(UTC)
    store.create_task(
        channel="telegram",
        sender_id=person,
        reply_target="-100",
        description="Remind the room about lunch and my diagnosis",
        due_at=now - timedelta(seconds=1),
        task_type="action",
        creator_role="group",
        is_group=True,
    )
    out = Recorder()
    asyncio.run(Scheduler(deps, out, respond).run_due(now))
    [answered] = [c for c in provider.answered if c.use_tools]
    assert answered.group and answered.thread == "-100"
    assert "lunch at one?" in _seen(answered)
    assert SECRET not in _seen(answered)
    assert [(m.target, m.text) for m in out.sent if m.kind == "reply"] == [
        ("-100", "Lunch is at one.")
    ]
    assert "Lunch is at one." in json.dumps(
        [m.content for m in store.recent_messages("telegram", person, 10, "-100")]
    )


async def test_memory_search_in_a_room_finds_only_the_rooms_messages(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        store.store_exchange("telegram", "ana", f"My cat has {SECRET}", "Poor cat")
        store.store_exchange("telegram", "ana", "My cat is called Felix", "Nice", thread="-100")
        tools = BuiltinTools(tmp_path / "workspace", store)
        for deps, found_secret in (
            (ToolDeps(sender_id="ana", channel="telegram", thread="-100", group=True), False),
            (ToolDeps(sender_id="ana", channel="telegram"), True),
        ):
            token = set_current_deps(deps)
            try:
                found = await tools.search_memory("my cat")
            finally:
                reset_current_deps(token)
            assert "Felix" in found
            assert (SECRET in found) is found_secret
    finally:
        store.close()


def test_recall_within_a_room_on_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        private = store.store_exchange("matrix", "ana", f"the garden code is {SECRET}", "ok")
        store.close_conversation(private, f"Garden code {SECRET}.")
        room = store.store_exchange("matrix", "ana", "the garden party", "ok", thread="!r:x")
        store.close_conversation(room, "Garden party.")
        elsewhere = store.store_exchange("matrix", "ana", "garden elsewhere", "ok", thread="!o:x")
        store.close_conversation(elsewhere, "Another room's garden.")
        inside = ("matrix", "!r:x")
        assert [m.content for m in store.search_messages("ana", "garden", within=inside)] == [
            "the garden party"
        ]
        assert store.recent_summaries("ana", 5, inside) == ["Garden party."]
        assert len(store.search_messages("ana", "garden")) == 3  # in private: all of hers
        assert len(store.recent_summaries("ana", 5)) == 3
        # A room's key past the stored length is matched as stored (its digest).
        long_room = "!" + "r" * 300 + ":x"
        store.store_exchange("matrix", "ana", "garden far away", "ok", thread=long_room)
        found = store.search_messages("ana", "garden", within=("matrix", long_room))
        assert [m.content for m in found] == ["garden far away"]
    finally:
        store.close()


def test_a_literal_thread_key_shaped_like_a_digest_is_not_that_digests_conversation(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        hostile = "<" + "x" * 300 + "@evil.example>"  # stored as its digest
        digest = thread_key(hostile)
        assert digest.startswith("sha256:")
        store.store_exchange("email", "ana", "the long thread", "kept", thread=hostile)
        # A second thread whose key is that digest, written out: its own conversation.
        store.store_exchange("email", "ana", "the literal one", "kept too", thread=digest)
        assert [m.content for m in store.recent_messages("email", "ana", 10, hostile)] == [
            "the long thread",
            "kept",
        ]
        assert [m.content for m in store.recent_messages("email", "ana", 10, digest)] == [
            "the literal one",
            "kept too",
        ]
        assert thread_key(digest) != digest
        assert thread_key("C1:100.1") == "C1:100.1"  # ordinary keys are kept as they are
    finally:
        store.close()


def test_a_raw_id_shaped_like_another_channels_key_never_takes_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        assert store.person_of("telegram", "222") == "222"  # the raw id, free
        # A plug-in's sender id written like Discord's person key for user 222.
        squatter = store.person_of("plug", "discord:222")
        assert squatter == "plug:discord:222"
        discord_user = store.person_of("discord", "222")
        assert discord_user == "discord:222"
        assert len({squatter, discord_user, "222"}) == 3
        # A key an older Omega gave a raw id with ':' is never handed to someone else.
        with store._tx() as conn:
            conn.execute(
                "INSERT INTO identities (channel, sender_id, person, created_at) "
                "VALUES ('old', 'discord:333', 'discord:333', '2026-01-01T00:00:00Z')"
            )
        assert store.person_of("telegram", "333") == "333"
        later = store.person_of("discord", "333")
        assert later not in ("333", "discord:333")
        assert store.person_of("discord", "333") == later  # recorded, stable
        # Matrix ids hold ':' themselves: always prefixed, never a raw key.
        assert store.person_of("matrix", "@ana:example.org") == "matrix:@ana:example.org"
    finally:
        store.close()
