"""WhatsApp formatting, config, transcription key, and the real neonize adapter built offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from omega.channels.text import FENCE, split_text
from omega.channels.whatsapp.channel import chat_jid, qr_png, qr_terminal
from omega.channels.whatsapp.client import WaMessage, jid_user
from omega.channels.whatsapp.format import render_whatsapp
from omega.channels.whatsapp.inbound import inbox_id
from omega.config import Config
from omega.providers.transcription import transcriber_for

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def render(text: str) -> str:
    return render_whatsapp(text)[0]


def test_markdown_becomes_whatsapp_marks() -> None:
    assert render("**bold** and __bold__") == "*bold* and *bold*"
    assert render("*italic* and _italic_") == "_italic_ and _italic_"
    assert render("~~gone~~ and `code`") == "~gone~ and `code`"
    assert render("# Title\n- one\n* two") == "*Title*\n• one\n• two"
    assert render("[docs](https://example.org/a)") == "docs (https://example.org/a)"
    assert render("> quoted **text**") == "> quoted *text*"
    assert render("snake_case_name stays") == "snake_case_name stays"


def test_code_blocks_are_kept_verbatim_without_their_language() -> None:
    text = "Run:\n```python\nx = **not bold**\n```\ndone **now**"
    assert render(text) == "Run:\n```\nx = **not bold**\n```\ndone *now*"


def test_a_code_block_split_across_pieces_is_closed_and_reopened() -> None:
    code = "```\n" + "\n".join(f"line {i} **x**" for i in range(60)) + "\n```"
    pieces = split_text(code, limit=200)
    assert len(pieces) > 2
    state = False
    for piece in pieces:
        rendered, state = render_whatsapp(piece, state)
        assert rendered.count("```") % 2 == 0  # every message shows its code as code
        assert "**x**" in rendered  # code content untouched
    assert state is False


_PLAIN = st.text(
    alphabet=st.characters(blacklist_characters="*_~`#[]()>-+•\r", blacklist_categories=["Cs"]),
    max_size=300,
)


@given(_PLAIN)
def test_text_without_marks_is_unchanged(text: str) -> None:
    assert render(text) == text


@given(st.text(max_size=400))
@example("```")  # a block left open: the state says so and the block is closed
@example("```\x1c")  # a fence ended by a separator other than \n is still a fence
def test_rendering_never_fails_and_keeps_the_lines(text: str) -> None:
    rendered, code = render_whatsapp(text)
    lines = text.splitlines()
    # Only a closing fence is ever added, and only to a block left open.
    assert len(rendered.splitlines()) in (len(lines), len(lines) + 1)
    # The state says whether the piece ends inside a fenced block (an odd count of fences),
    # and the block it leaves open is closed in what is sent.
    fences = sum(1 for line in lines if FENCE.match(line))
    assert code is (fences % 2 == 1)
    if code:
        assert rendered.endswith("```")


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60), st.booleans())
def test_fenced_content_is_never_touched(content: str, newline: bool) -> None:
    body = content.replace("`", "'").replace("\r", "")
    body = "\n".join(line for line in body.splitlines() if line.strip() != "")
    text = f"```\n{body}\n```"
    assert render(text) == text


def test_whatsapp_config_numbers_mode_and_whisper_key() -> None:
    config = Config.model_validate(
        {
            "auth": {"owners": ["whatsapp:+351 900-000-001", "telegram:42"]},
            "channel": {
                "whatsapp": {
                    "enabled": True,
                    "allowed_users": ["+351 900 000 001", "*"],
                    "mode": "bot",
                    "whisper_api_key": "sk-whisper-123456",
                }
            },
        }
    )
    assert config.channel.whatsapp.allowed_users == ["351900000001", "*"]
    assert config.auth.owners == ["whatsapp:351900000001", "telegram:42"]
    assert config.channel.whatsapp.mode == "bot"
    transcriber = transcriber_for(config)
    assert transcriber is not None and transcriber.api_key == "sk-whisper-123456"
    assert Config().channel.whatsapp.mode == "personal"


def test_ids_and_targets() -> None:
    message = WaMessage("ABC", "120363@g.us", "351900000001:4@s.whatsapp.net")
    assert inbox_id(message) == "whatsapp:120363@g.us:ABC"
    assert jid_user(message.sender) == "351900000001"
    assert chat_jid("+351 900 000 001") == "351900000001@s.whatsapp.net"
    assert chat_jid("120363@g.us") == "120363@g.us"


def test_qr_is_a_png_and_unicode_half_blocks() -> None:
    assert qr_png("2@abc").startswith(b"\x89PNG")
    drawn = qr_terminal("2@abc")
    assert set(drawn) <= {" ", "\n", "▀", "▄", "█"} and "▀" in drawn


def test_the_real_neonize_adapter_builds_offline_and_reads_nested_media(tmp_path: Path) -> None:
    """The real library: the client object and its callbacks are built without any network,
    and neonize's own protobufs are read through the adapter."""
    from neonize.aioze.events import ConnectedEv, MessageEv
    from neonize.events import EVENT_TO_INT
    from neonize.proto import Neonize_pb2 as N
    from neonize.proto.waE2E import WAWebProtobufsE2E_pb2 as E

    from omega.channels.whatsapp.client import WhatsAppClient
    from omega.channels.whatsapp.neonize_client import NeonizeClient, convert

    client = NeonizeClient(tmp_path / "session")
    assert isinstance(client, WhatsAppClient)
    registered = client.client.event.list_func
    assert EVENT_TO_INT[MessageEv] in registered and EVENT_TO_INT[ConnectedEv] in registered
    assert client.client.event._qr.__name__ == "on_qr"
    assert client.is_connected() is False
    assert client.database == tmp_path / "session" / "session.db"

    voice = E.Message(audioMessage=E.AudioMessage(PTT=True, mimetype="audio/ogg", fileLength=9))
    image = E.Message(
        imageMessage=E.ImageMessage(
            caption="look",
            mimetype="image/jpeg",
            contextInfo=E.ContextInfo(
                participant="351911111111@s.whatsapp.net",
                quotedMessage=E.Message(
                    ephemeralMessage=E.FutureProofMessage(message=E.Message(conversation="old"))
                ),
            ),
        )
    )
    source = N.MessageSource(
        Chat=N.JID(User="120363", Server="g.us"),
        Sender=N.JID(User="1234567", Server="lid", Device=2),
        SenderAlt=N.JID(User="351911111111", Server="s.whatsapp.net"),
        IsGroup=True,
    )

    def event(message: E.Message, ident: str) -> N.Message:
        return N.Message(Info=N.MessageInfo(ID=ident, MessageSource=source), Message=message)

    once = convert(event(E.Message(viewOnceMessage=E.FutureProofMessage(message=image)), "A"))
    assert once.text == "look" and once.media[0].kind == "image"
    assert once.quoted_text == "old" and once.quoted_sender == "351911111111@s.whatsapp.net"
    assert once.sender == "1234567@lid" and once.sender_alt == "351911111111@s.whatsapp.net"
    assert once.chat == "120363@g.us" and once.is_group
    (media,) = convert(event(voice, "B")).media
    assert media.kind == "voice" and media.size == 9
    assert media.ref.HasField("audioMessage")  # what download_any is given
    document = E.Message(
        documentWithCaptionMessage=E.FutureProofMessage(
            message=E.Message(
                documentMessage=E.DocumentMessage(fileName="a.pdf", caption="read", mimetype="x")
            )
        )
    )
    read = convert(event(document, "C"))
    assert read.text == "read" and read.media[0].file_name == "a.pdf"
