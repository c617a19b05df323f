"""The WhatsApp channel with the real gateway, pipeline, store and an OpenAI-compatible provider
(the scripted HTTP double), and a test double at the library boundary (tests/fakes/
whatsapp_client.py) in place of neonize: events in, calls out, recorded."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import io
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from omega.app import Runtime, Service, bootstrap, pipeline_deps, run_service
from omega.channels.base import Channel, Submit
from omega.channels.health import channel_health_lines
from omega.channels.whatsapp import WhatsAppChannel
from omega.channels.whatsapp.client import Media, Received, WaMessage
from omega.gateway.commands import OWNER_ONLY
from omega.gateway.gateway import Gateway
from omega.memory import Store
from omega.types import IncomingMessage, OutgoingMessage
from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.whatsapp_client import (
    OWNER_JID,
    OWNER_NUMBER,
    FakeWhatsApp,
    message_from,
    self_message,
)
from tests.fakes.whisper_server import FakeWhisper
from tests.integration.test_tool_loop import tool_call

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
OWNER_ENV = {
    "OMEGA_CHANNEL__WHATSAPP__ENABLED": "true",
    "OMEGA_CHANNEL__WHATSAPP__ALLOWED_USERS": f'["+{OWNER_NUMBER}"]',
    "OMEGA_AUTH__OWNERS": f'["whatsapp:+{OWNER_NUMBER}"]',
    "OMEGA_MEMORY__IDLE_MINUTES": "600",
}


@dataclass
class Terminal:
    """The owner at the terminal: an owner route that records what reaches it, and a way to
    type a message as the local user."""

    sent: list[OutgoingMessage] = field(default_factory=list)
    submit: Submit | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def name(self) -> str:
        return "terminal"

    async def run(self, submit: Submit) -> None:
        self.submit = submit
        await self.stopped.wait()

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self.stopped.set()

    async def type(self, text: str) -> None:
        assert self.submit is not None
        await self.submit(IncomingMessage("terminal", getpass.getuser(), text, assurance="local"))

    def texts(self) -> list[str]:
        return [m.text for m in self.sent]

    def photos(self) -> list[OutgoingMessage]:
        return [m for m in self.sent if m.photo is not None]


@dataclass
class Running:
    channel: WhatsAppChannel
    client: FakeWhatsApp
    terminal: Terminal
    home: Path
    output: io.StringIO
    store: Store
    runtime: Runtime


async def until(predicate: Callable[[], object], within: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def omega(
    home: Path,
    client: FakeWhatsApp,
    grace: float = 5.0,
    **channel_args: float,
) -> AsyncIterator[Running]:
    """The real gateway with the WhatsApp channel over `client` and the owner at a terminal."""
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    deps = pipeline_deps(runtime, store)
    output = io.StringIO()
    channel = WhatsAppChannel(
        runtime.config.channel.whatsapp,
        client,
        runtime.paths.whatsapp,
        health_file=runtime.paths.channel_health("whatsapp"),
        terminal=output,
        **channel_args,  # type: ignore[arg-type]
    )
    terminal = Terminal()
    stop = asyncio.Event()
    channels: list[Channel] = [channel, terminal]
    service = Service(deps, channels, Gateway(deps, channels), jobs=[], grace=grace)
    serving = asyncio.create_task(run_service(service, stop))
    await until(lambda: client.on_event is not None and terminal.submit is not None)
    try:
        yield Running(channel, client, terminal, home, output, store, runtime)
    finally:
        stop.set()
        await serving
        store.close()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> Callable[..., None]:
    def apply(**extra: str) -> None:
        for key, value in {**openai_env(fake_openai), **OWNER_ENV, **extra}.items():
            monkeypatch.setenv(key, value)

    apply()
    return apply


def asked(provider: FakeOpenAI, text: str) -> list[str]:
    return [r.last_user_text for r in provider.requests if text in r.last_user_text]


def inbox_rows(home: Path) -> list[tuple[str, str]]:
    with contextlib.closing(connect_db(home / "memory.db")) as db:
        return list(db.execute("SELECT id, status FROM inbox ORDER BY seq"))


@pytest.mark.slow
async def test_an_unpaired_start_shows_rotating_qr_codes_and_tells_the_owner_when_paired(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    client = FakeWhatsApp(account="")
    async with omega(isolated_env, client) as run:
        await until(lambda: run.terminal.photos())
        first = run.terminal.photos()[0]
        assert first.photo is not None and first.photo.startswith(b"\x89PNG")
        assert "Linked devices" in first.text
        session = isolated_env / "whatsapp_session"
        assert session.stat().st_mode & 0o777 == 0o700
        qr = session / "qr.png"
        assert qr.read_bytes() == first.photo and qr.stat().st_mode & 0o777 == 0o600
        assert "▀" in run.output.getvalue() or "▄" in run.output.getvalue()
        lines = dict(channel_health_lines(run.runtime.config, run.runtime.paths))
        assert lines["WhatsApp"].startswith("pairing")

        await client.rotate()  # a new code replaces the old one
        await until(lambda: len(run.terminal.photos()) == 2)
        second = run.terminal.photos()[1]
        assert second.photo != first.photo and qr.read_bytes() == second.photo
        assert run.output.getvalue().count("WhatsApp pairing: scan") == 2

        await client.pair()
        await until(lambda: any("paired as +351900000001" in t for t in run.terminal.texts()))
        assert not qr.exists()  # a used code is not left lying around
        lines = dict(channel_health_lines(run.runtime.config, run.runtime.paths))
        assert lines["WhatsApp"] == "+351900000001, connected"

        # Nothing else was broken by starting unpaired: the self-chat is answered.
        fake_openai.script = [Step(text="Hello Ana.", match="hi there")]
        await client.push(self_message("hi there", "M1"))
        await until(lambda: "Hello Ana." in client.texts())


async def test_personal_mode_answers_only_the_self_chat_and_never_its_own_replies(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="**Noted**, _Ana_.", match="remember milk")]
    client = FakeWhatsApp()
    async with omega(isolated_env, client):
        await client.push(self_message("remember milk", "M1"))
        await until(lambda: "*Noted*, _Ana_." in client.texts())  # Markdown in WhatsApp's marks
        (reply,) = [s for s in client.sent if "Noted" in s.text]  # Markdown in WhatsApp's marks
        assert OWNER_JID in client.composing  # "typing..." while working
        assert client.read == ["M1"]
        # "done" is written after the send: wait for it rather than read between the two.
        done = [(f"whatsapp:{OWNER_JID}:M1", "done")]
        await until(lambda: inbox_rows(isolated_env) == done)

        # Omega's own reply comes back in the self-chat: not a new message.
        await client.push(self_message(reply.text, reply.id))
        # Someone else writing to the owner, the owner writing to someone else, a group:
        # none of it is Omega's business in personal mode.
        await client.push(message_from("351911111111", "are you there?", "X1"))
        other = "351922222222@s.whatsapp.net"
        await client.push(
            Received(WaMessage("X2", other, OWNER_JID, "see you at 8", is_from_me=True))
        )
        await client.push(message_from("351911111111", "hello group", "X3", group="120363@g.us"))
        await asyncio.sleep(0.3)
        assert asked(fake_openai, "Noted") == []
        assert asked(fake_openai, "are you there") == asked(fake_openai, "see you") == []
        assert asked(fake_openai, "hello group") == []
        assert len(client.sent) == 2  # the welcome on first contact, and the reply
        assert [row[0] for row in inbox_rows(isolated_env)] == [f"whatsapp:{OWNER_JID}:M1"]


async def test_a_redelivered_message_is_handled_once(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Once.", match="only once")]
    client = FakeWhatsApp()
    async with omega(isolated_env, client):
        await client.push(self_message("only once please", "M7"))
        await until(lambda: "Once." in client.texts())
        await client.push(self_message("only once please", "M7"))
        await asyncio.sleep(0.3)
    assert len(asked(fake_openai, "only once")) == 1
    assert client.texts().count("Once.") == 1


async def test_nested_messages_are_unwrapped_by_the_adapter_and_answered(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    from neonize.proto import Neonize_pb2 as N
    from neonize.proto.waE2E import WAWebProtobufsE2E_pb2 as E

    from omega.channels.whatsapp.neonize_client import convert

    def wrapped(inner: E.Message) -> E.Message:
        view_once = E.Message(viewOnceMessageV2=E.FutureProofMessage(message=inner))
        ephemeral = E.Message(ephemeralMessage=E.FutureProofMessage(message=view_once))
        return E.Message(
            deviceSentMessage=E.DeviceSentMessage(destinationJID=OWNER_JID, message=ephemeral)
        )

    me = N.JID(User=OWNER_NUMBER, Server="s.whatsapp.net")
    phone = N.JID(User=OWNER_NUMBER, Server="s.whatsapp.net", Device=0)
    event = N.Message(
        Info=N.MessageInfo(
            ID="N1",
            Pushname="Ana",
            MessageSource=N.MessageSource(Chat=me, Sender=phone, IsFromMe=True),
        ),
        Message=wrapped(E.Message(extendedTextMessage=E.ExtendedTextMessage(text="deep hello"))),
    )
    fake_openai.script = [Step(text="Found it.", match="deep hello")]
    client = FakeWhatsApp()
    async with omega(isolated_env, client):
        await client.push(Received(convert(event)))
        await until(lambda: "Found it." in client.texts())


async def test_an_image_a_voice_note_and_a_document_arrive_and_an_image_made_goes_back(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="A test pattern.", match="what is this"),
        Step(text="It is sunny.", match="weather"),
        Step(text="Got the notes.", match="summarize"),
        Step(
            tool_calls=[tool_call("c1", "write_file", path="chart.png", content="PNGDATA")],
            match="draw",
        ),
        Step(text="Here is your **chart**."),
    ]
    with FakeWhisper() as whisper:
        whisper.transcripts[b"OggS-voice"] = "what's the weather like?"
        env(
            OMEGA_VOICE__BASE_URL=whisper.base_url,
            OMEGA_VOICE__API_KEY="gsk-voice-key-123456",
            OMEGA_PROVIDER__OPENAI__VISION="true",  # the photo reaches the model as an image
        )
        client = FakeWhatsApp()
        async with omega(isolated_env, client):
            photo = Media("image", "image/jpeg", "photo.jpg", len(PNG), PNG)
            await client.push(self_message("what is this?", "I1", media=(photo,)))
            await until(lambda: "A test pattern." in client.texts())
            voice = Media("voice", "audio/ogg; codecs=opus", "voice.ogg", 10, b"OggS-voice")
            await client.push(self_message("", "V1", media=(voice,)))
            await until(lambda: "It is sunny." in client.texts())
            notes = Media("document", "text/plain", "notes.txt", 13, b"meeting notes")
            await client.push(self_message("summarize", "D1", media=(notes,)))
            await until(lambda: "Got the notes." in client.texts())
            broken = Media("image", "image/jpeg", "photo.jpg", 10, ConnectionError("expired"))
            await client.push(self_message("and this one?", "I2", media=(broken,)))
            await until(lambda: len(asked(fake_openai, "and this one")) == 1)
            await client.push(self_message("draw a chart", "C1"))
            await until(lambda: any(s.image for s in client.sent) and len(client.sent) >= 6)
    image = next(r for r in asked(fake_openai, "what is this"))
    assert "[Attached file:" in image
    assert "[Voice message] what's the weather like?" in asked(fake_openai, "weather")[0]
    assert whisper.requests[0].audio == b"OggS-voice"
    document = asked(fake_openai, "summarize")[0]
    assert "[Attached file:" in document and ".txt]" in document
    assert "could not be downloaded" in asked(fake_openai, "and this one")[0]
    (made,) = [s for s in client.sent if s.image]
    assert made.image == b"PNGDATA" and made.chat == OWNER_JID
    assert "Here is your *chart*." in client.texts()


async def test_bot_mode_answers_people_and_in_groups_only_mentions_and_replies(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env(OMEGA_CHANNEL__WHATSAPP__MODE="bot", OMEGA_CHANNEL__WHATSAPP__ALLOWED_USERS='["*"]')
    bot = "351933333333@s.whatsapp.net"
    group = "120363000@g.us"
    client = FakeWhatsApp(account=bot)
    async with omega(isolated_env, client):
        await client.push(message_from("351911111111", "private question", "P1"))
        await until(lambda: client.texts("351911111111@s.whatsapp.net"))
        await client.push(message_from("351911111111", "chatter in the group", "G1", group=group))
        await client.push(
            message_from(
                "351911111111", "@351933333333 mentioned", "G2", group=group, mentions=(bot,)
            )
        )
        await until(lambda: any("mentioned" in t for t in client.texts(group)))
        await client.push(
            message_from(
                "351922222222",
                "replying to the bot",
                "G3",
                group=group,
                quoted_sender=bot,
                quoted_text="an earlier answer",
            )
        )
        await until(lambda: any("replying to the bot" in t for t in client.texts(group)))
        # Its own messages are never answered in bot mode.
        await client.push(Received(WaMessage("B1", group, bot, "from the bot", is_from_me=True)))
        await asyncio.sleep(0.3)
    assert asked(fake_openai, "chatter") == [] and asked(fake_openai, "from the bot") == []
    assert '[In reply to you: "an earlier answer"]' in asked(fake_openai, "replying to")[0]


async def test_a_long_reply_is_split_within_4096_and_joins_back(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    long = " ".join(f"word{i}" for i in range(2000))  # ~14k characters, no Markdown
    fake_openai.script = [Step(text=long, match="tell me everything")]
    client = FakeWhatsApp()
    async with omega(isolated_env, client):
        await client.push(self_message("tell me everything", "L1"))
        await until(lambda: long in "".join(client.texts()))
    pieces = [t for t in client.texts() if t.startswith("word") or t[:1].isdigit()]
    assert "".join(pieces) == long
    assert len(pieces) >= 4 and all(len(t) <= 4096 for t in pieces)


async def test_reconnects_five_seconds_after_a_drop_backing_off_while_it_fails(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    client = FakeWhatsApp(fail_reconnects=2)
    health = isolated_env / "whatsapp.health.json"
    async with omega(isolated_env, client, reconnect_first=0.2) as run:
        started = asyncio.get_running_loop().time()
        times: list[float] = []
        original = client.reconnect

        async def timed() -> None:
            times.append(asyncio.get_running_loop().time() - started)
            await original()

        client.reconnect = timed  # type: ignore[method-assign]
        await client.drop()
        assert json.loads(health.read_text())["state"] == "disconnected"
        await until(lambda: run.channel.state == "connected", within=10)
        assert len(times) == 3  # two failures, then up
        gaps = [b - a for a, b in zip([0.0, *times], times, strict=False)]
        assert gaps[0] >= 0.19 and gaps[1] >= 0.38 and gaps[2] >= 0.78  # 0.2, 0.4, 0.8
        assert json.loads(health.read_text())["state"] == "connected"
        fake_openai.script = [Step(text="Back.", match="still there")]
        await client.push(self_message("still there?", "R1"))
        await until(lambda: "Back." in client.texts())


async def test_a_crash_between_receipt_and_reply_is_answered_once_after_the_restart(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Too late.", match="slow question", hang_secs=3)]
    first = FakeWhatsApp()
    async with omega(isolated_env, first, grace=0.1):
        await first.push(self_message("slow question", "S1"))
        await until(lambda: asked(fake_openai, "slow question"))
    # Omega stopped before replying: the message is still pending in the durable inbox.
    assert inbox_rows(isolated_env) == [(f"whatsapp:{OWNER_JID}:S1", "pending")]
    assert [s.text for s in first.sent if "Too late" in s.text] == []
    fake_openai.script = [Step(text="The answer.", match="slow question")]
    second = FakeWhatsApp()
    async with omega(isolated_env, second):
        await until(lambda: "The answer." in second.texts())
        # WhatsApp delivers the same message again after the reconnect: not handled twice.
        await second.push(self_message("slow question", "S1"))
        await asyncio.sleep(0.3)
    assert second.texts().count("The answer.") == 1
    assert inbox_rows(isolated_env) == [(f"whatsapp:{OWNER_JID}:S1", "done")]


async def test_logout_is_reported_and_the_marker_and_command_pair_again_from_the_terminal(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    client = FakeWhatsApp()
    async with omega(isolated_env, client, pair_timeout=0.5) as run:
        await client.log_out()
        await until(lambda: any("logged out" in t for t in run.terminal.texts()))
        health = json.loads((isolated_env / "whatsapp.health.json").read_text())
        assert health["state"] == "logged out"

        # The owner asks the model, which answers with the WHATSAPP_QR marker.
        fake_openai.script = [Step(text="Here comes the code.\nWHATSAPP_QR", match="pair whatsapp")]
        await run.terminal.type("please pair whatsapp again")
        await until(
            lambda: run.terminal.photos() and "Here comes the code." in run.terminal.texts()
        )
        assert "WHATSAPP_QR" not in "".join(run.terminal.texts())
        assert run.terminal.photos()[0].target == getpass.getuser()

        # Nobody scans: pairing times out and the owner is told.
        await until(lambda: any("timed out" in t for t in run.terminal.texts()), within=5)
        assert not (isolated_env / "whatsapp_session" / "qr.png").exists()

        # /whatsapp starts it again; this time the phone scans it.
        before = len(run.terminal.photos())
        await run.terminal.type("/whatsapp")
        await until(lambda: len(run.terminal.photos()) > before)
        assert any(t.startswith("Pairing started") for t in run.terminal.texts())
        await client.pair()
        await until(lambda: any("paired as +351900000001" in t for t in run.terminal.texts()))
        await run.terminal.type("/whatsapp")
        await until(
            lambda: any("already paired as +351900000001" in t for t in run.terminal.texts())
        )


async def test_pairing_by_phone_code_and_whatsapp_refused_to_others(
    env: Callable[..., None], fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env(OMEGA_CHANNEL__WHATSAPP__ALLOWED_USERS='["*"]', OMEGA_CHANNEL__WHATSAPP__MODE="bot")
    client = FakeWhatsApp(account="")
    async with omega(isolated_env, client) as run:
        await until(lambda: run.terminal.photos())
        await run.terminal.type("/whatsapp +351 900 000 001")
        await until(lambda: any("ABCD-1234" in t for t in run.terminal.texts()))
        assert "pair_phone 351900000001" in client.calls
        await client.pair("351933333333@s.whatsapp.net")
        # A person who is not the owner cannot start pairing.
        await client.push(message_from("351911111111", "/whatsapp", "W1"))
        await until(lambda: OWNER_ONLY in client.texts("351911111111@s.whatsapp.net"))
    assert client.texts("351911111111@s.whatsapp.net")[-1] == OWNER_ONLY


@pytest.mark.slow
def test_omega_start_runs_the_real_neonize_channel_beside_the_others_and_stops_cleanly(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """The wiring in `omega start`, with the real library: the channel starts (unpaired, with
    no way out to WhatsApp from here), the terminal is still answered, status shows WhatsApp,
    its session folder is private, and SIGTERM ends everything with exit 0."""
    from tests.conftest import run_omega
    from tests.integration.test_start import Running

    env = openai_env(
        fake_openai,
        OMEGA_CHANNEL__WHATSAPP__ENABLED="true",
        OMEGA_CHANNEL__WHATSAPP__ALLOWED_USERS='["+351900000000"]',
    )
    omega = Running(env)
    omega.say("are you there?")
    omega.wait_for("reply", timeout=60)
    status = run_omega("status", env=env)
    code, stderr = omega.terminate()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert "whatsapp" in status.stdout.lower()
    assert "check whatsapp" in status.stdout and "not paired" in status.stdout
    session = isolated_env / "whatsapp_session"
    assert session.is_dir() and session.stat().st_mode & 0o777 == 0o700
