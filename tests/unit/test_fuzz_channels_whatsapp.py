"""What WhatsApp sends, fuzzed: `wanted` (whether a message is for Omega in each mode) and
`to_incoming` (what it becomes, files downloaded) on well-formed messages of odd shapes (no
text, huge text, media alone, files that fail to download or are too large, edits, groups,
broadcasts, replies whose original is gone, forwards, odd JIDs, no push name) never raise."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.whatsapp.client import Media, WaMessage
from omega.channels.whatsapp.inbound import inbox_id, sender_number, to_incoming, wanted
from tests.fakes.whatsapp_client import FakeWhatsApp

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

MAX_DOWNLOAD = 1000
OWN = {"351900000000", "100000000000001"}
odd_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\u202e", "/approve_person x", "\ud800", "e\u0301"]),
    st.integers(5_000, 70_000).map(lambda n: "ж" * n),
)
jids = st.one_of(
    st.sampled_from(
        [
            "",
            "351900000000@s.whatsapp.net",
            "351911111111:3@s.whatsapp.net",
            "100000000000001@lid",
            "120363000000000000@g.us",
            "status@broadcast",
            "7-15551234567@interop",
            "@",
            "no-server",
            "a.b:c@d@e",
        ]
    ),
    st.text(max_size=20),
)
refs = st.one_of(
    st.binary(max_size=2 * MAX_DOWNLOAD),
    st.sampled_from([RuntimeError("gone"), TimeoutError(), OSError("network")]),
)
media = st.builds(
    Media,
    kind=st.sampled_from(["image", "voice", "audio", "document", "video"]),
    mime_type=st.text(max_size=10),
    file_name=st.text(max_size=10),
    size=st.one_of(st.none(), st.integers(-1, 3 * MAX_DOWNLOAD)),
    ref=refs,
)
messages = st.builds(
    WaMessage,
    id=st.text(max_size=20),
    chat=jids,
    sender=jids,
    text=odd_text,
    is_from_me=st.booleans(),
    is_group=st.booleans(),
    sender_alt=jids,
    push_name=odd_text,
    media=st.lists(media, max_size=3).map(tuple),
    mentions=st.lists(jids, max_size=3).map(tuple),
    quoted_sender=jids,
    quoted_text=odd_text,
    is_edit=st.booleans(),
    is_forwarded=st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(messages, st.sampled_from(["personal", "assistant", "anything-else"]))
def test_no_well_formed_message_makes_the_inbound_path_raise(message: WaMessage, mode: str) -> None:
    wanted(mode, OWN, message)
    assert isinstance(sender_number(message), str)
    incoming = asyncio.run(to_incoming(FakeWhatsApp(), message, OWN, MAX_DOWNLOAD))
    if incoming is None:
        return
    assert incoming.id == inbox_id(message)
    assert incoming.reply_target == message.chat
    assert incoming.text or incoming.attachments
    assert all(len(a.data) <= MAX_DOWNLOAD for a in incoming.attachments)
