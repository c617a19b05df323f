"""The Telegram channel through the real `omega start`, against a Bot API test double."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import OMEGA_BIN, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.telegram_server import TOKEN, FakeTelegram, Fault
from tests.fakes.whisper_server import FakeWhisper
from tests.integration.test_tool_loop import tool_call

ANA = 42  # allowed; the owner where a test says so
OWNER = {"OMEGA_AUTH__OWNERS": f'["telegram:{ANA}"]'}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
EVE = 666  # not allowed
GROUP = -100123


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server


def telegram_env(
    server: FakeTelegram, provider: FakeOpenAI, token: str = TOKEN, **extra: str
) -> dict[str, str]:
    return openai_env(
        provider,
        OMEGA_CHANNEL__TELEGRAM__ENABLED="true",
        OMEGA_CHANNEL__TELEGRAM__API_URL=server.api_url,
        OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS=f"[{ANA}]",
        OMEGA_MEMORY__IDLE_MINUTES="600",
        TELEGRAM_BOT_TOKEN=token,
        **extra,
    )


class Omega:
    """`omega start` in the background with the telegram channel, stderr collected."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [OMEGA_BIN, "start"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, **env),
        )
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def terminate(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self._reader.join(timeout=5)
        return code, "".join(self.stderr)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=5)


@pytest.fixture
def start(telegram: FakeTelegram, fake_openai: FakeOpenAI) -> Iterator[type[Omega]]:
    """Started processes are stopped at the end of the test, whatever happens."""
    started: list[Omega] = []

    class Tracked(Omega):
        def __init__(self, env: dict[str, str]) -> None:
            super().__init__(env)
            started.append(self)

    yield Tracked
    for omega in started:
        if omega.proc.poll() is None:
            omega.kill()


def wait_polling(telegram: FakeTelegram) -> None:
    telegram.wait_for(lambda: telegram.calls_of("getUpdates"))


def test_a_private_message_is_answered_in_its_chat_and_commands_are_published(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    fake_openai.script = [Step(text="Hello Ana, 4.", match="2+2")]
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.private(ANA, "what is 2+2?", name="Ana")
    telegram.wait_for(lambda: "Hello Ana, 4." in telegram.texts(ANA))
    assert {int(c.params["chat_id"]) for c in telegram.sent()} == {ANA}
    assert "what is 2+2?" in fake_openai.requests[0].last_user_text
    # Typing was shown in that chat, the command menu was published from /help's list.
    typing = telegram.calls_of("sendChatAction")
    assert typing and all(c.params["action"] == "typing" for c in typing)
    assert {int(c.params["chat_id"]) for c in typing} == {ANA}
    (published,) = telegram.calls_of("setMyCommands")
    names = [c["command"] for c in published.params["commands"]]
    assert {"help", "status", "tasks", "forget"} <= set(names)
    code, err = omega.terminate()
    assert code == 0, err
    assert "Traceback" not in err


def test_a_stranger_gets_only_the_denial_once(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.private(EVE, "hi, who are you?", name="Eve")
    telegram.private(EVE, "answer me", name="Eve")
    telegram.private(ANA, "ping")
    telegram.wait_for(lambda: "echo: ping" in " ".join(telegram.texts(ANA)))
    time.sleep(0.5)
    assert telegram.texts(EVE) == ["Sorry, I'm not able to talk with you. Ask my owner to add you."]
    assert all("who are you" not in r.last_user_text for r in fake_openai.requests)
    assert omega.terminate()[0] == 0


def test_in_a_group_only_mentions_and_replies_to_the_bot_are_answered(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    fake_openai.script = [Step(text="SILENT", match="just saying")]
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.group(GROUP, ANA, "@omega_test_bot just saying hi to the team")
    telegram.wait_for(lambda: any("just saying" in r.last_user_text for r in fake_openai.requests))
    telegram.group(GROUP, ANA, "lunch at noon, everyone?")
    telegram.group(GROUP, ANA, "@omega_test_bot what is the capital of France?")
    telegram.wait_for(lambda: any("capital of France" in t for t in telegram.texts(GROUP)))
    telegram.group(GROUP, ANA, "and of Spain?", reply_to_bot=True)
    telegram.wait_for(lambda: any("of Spain" in t for t in telegram.texts(GROUP)))
    time.sleep(0.5)
    asked = [r.last_user_text for r in fake_openai.requests]
    assert not any("lunch" in text for text in asked)
    assert not any("lunch" in text for text in telegram.texts())
    assert telegram.texts(ANA) == []  # answers go to the group, not to Ana's private chat
    # SILENT in a group: nothing was said for the greeting.
    assert not any("just saying" in text or "SILENT" in text for text in telegram.texts())
    assert omega.terminate()[0] == 0


def test_a_10000_character_reply_arrives_in_pieces_that_join_back_exactly(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 60 + "end." for i in range(40)]
    long = "\n\n".join(paragraphs)[:10_000] + "🙂 done"
    assert len(long) > 10_000
    fake_openai.script = [Step(text=long, match="long")]
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.private(ANA, "tell me something long")
    telegram.wait_for(lambda: telegram.texts(ANA) and telegram.texts(ANA)[-1].endswith("done"))
    pieces = [t for t in telegram.texts(ANA) if t[:10] == long[:10] or t in long]
    assert len(pieces) >= 3
    assert "".join(pieces) == long
    # Every piece but the last ends on a paragraph break.
    assert all(piece.endswith("\n\n") for piece in pieces[:-1])
    refused = [c for c in telegram.calls_of("sendMessage") if not c.params.get("_accepted")]
    assert refused == []
    assert omega.terminate()[0] == 0


def asked_slow(provider: FakeOpenAI) -> list[str]:
    """The answering calls for "a slow question" (background calls quote it after "User:")."""
    return [
        r.last_user_text
        for r in provider.requests
        if "a slow question" in r.last_user_text and "User: a slow question" not in r.last_user_text
    ]


@pytest.mark.slow
def test_a_crash_before_the_reply_is_answered_once_and_a_redelivered_update_is_not_handled(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="too late", match="slow", hang_secs=30),
        Step(text="answered after the restart", match="slow"),
    ]
    env = telegram_env(telegram, fake_openai)
    first = start(env)
    wait_polling(telegram)
    update_id = telegram.private(ANA, "a slow question")
    telegram.wait_for(lambda: fake_openai.requests)
    # Stored in the inbox, so the update is confirmed to Telegram before the reply exists.
    telegram.wait_for(lambda: telegram.confirmed_offset > update_id)
    first.kill()

    second = start(env)
    telegram.wait_for(lambda: "answered after the restart" in telegram.texts(ANA))
    code, err = second.terminate()
    assert code == 0, err
    assert telegram.texts(ANA).count("answered after the restart") == 1
    assert "too late" not in telegram.texts(ANA)
    assert len(asked_slow(fake_openai)) == 2

    # The confirmation got lost (a crash between storing and the next getUpdates): Telegram
    # offers the update again; it is recognised and not handled a second time.
    telegram.redeliver(update_id)
    polls = len(telegram.calls_of("getUpdates"))
    third = start(env)
    telegram.wait_for(lambda: len(telegram.calls_of("getUpdates")) >= polls + 2)
    time.sleep(1.0)
    assert third.terminate()[0] == 0
    assert telegram.texts(ANA).count("answered after the restart") == 1
    assert len(asked_slow(fake_openai)) == 2
    conn = connect_db(isolated_env / "memory.db")
    rows = conn.execute("SELECT id, status FROM inbox").fetchall()
    conn.close()
    assert rows == [(f"telegram:{ANA}:1", "done")]


@pytest.mark.slow
def test_polling_errors_back_off_and_recover(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    telegram.faults = [
        Fault("getUpdates", 502, "Bad Gateway"),
        Fault("getUpdates", 500, "Internal Server Error"),
    ]
    omega = start(telegram_env(telegram, fake_openai))
    telegram.wait_for(lambda: len(telegram.calls_of("getUpdates")) >= 3)
    telegram.private(ANA, "still there?")
    telegram.wait_for(lambda: "echo: still there?" in " ".join(telegram.texts(ANA)))
    code, err = omega.terminate()
    assert code == 0, err
    assert "getUpdates failed (Bad Gateway); retrying in 1 s" in err
    assert "getUpdates failed (Internal Server Error); retrying in 2 s" in err


@pytest.mark.slow
def test_a_rejected_token_is_a_clear_log_line_without_the_token(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    wrong = "7000000001:AAWrongTokenWrongTokenWrongToken_xyz"
    omega = start(telegram_env(telegram, fake_openai, token=wrong))
    deadline = time.monotonic() + 20
    while "token was rejected" not in "".join(omega.stderr) and time.monotonic() < deadline:
        time.sleep(0.05)
    code, err = omega.terminate()
    assert code == 0, err
    assert "telegram: the bot token was rejected" in err
    assert "TELEGRAM_BOT_TOKEN" in err
    log = (isolated_env / "omega.log").read_text()
    assert "token was rejected" in log
    for text in (err, log):
        assert wrong not in text
        assert "AAWrongToken" not in text
    assert telegram.calls_of("getUpdates") == []
    status = run_omega("status", env=telegram_env(telegram, fake_openai, token=wrong))
    assert "telegram" in status.stdout and "token rejected" in status.stdout


def test_a_photo_arrives_as_the_largest_size_and_an_image_made_goes_back_with_send_photo(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="A test pattern.", match="what is this"),
        Step(
            tool_calls=[tool_call("c1", "write_file", path="chart.png", content="PNGDATA")],
            match="draw",
        ),
        Step(text="Here is your **chart**."),
    ]
    # A model that sees images: the photo reaches it as an image, not only a path.
    vision = {"OMEGA_PROVIDER__OPENAI__VISION": "true"}
    omega = start(telegram_env(telegram, fake_openai, **OWNER, **vision))
    wait_polling(telegram)
    telegram.photo(ANA, PNG, caption="what is this?")
    telegram.wait_for(lambda: "A test pattern." in telegram.texts(ANA))
    assert telegram.downloads == ["photos/large.jpg"]  # the largest size only
    asked = next(r for r in fake_openai.requests if "what is this" in r.last_user_text)
    assert "[Attached file:" in asked.last_user_text
    # The file was saved through the attachment stage and removed after the turn (the
    # cleanup stage runs after the send, so the reply may be seen a moment before it).
    inbox = isolated_env / "workspace" / "inbox"
    telegram.wait_for(lambda: list(inbox.glob("image-*")) == [], timeout=10.0)

    telegram.private(ANA, "draw a chart")
    telegram.wait_for(lambda: telegram.photos(ANA) and "Here is your chart." in telegram.texts(ANA))
    (photo,) = telegram.photos(ANA)
    assert photo.files["photo"] == b"PNGDATA"
    assert photo.params["_visible"] == "chart.png"
    (answer,) = [c for c in telegram.sent(ANA) if "chart" in c.params["_visible"]]
    assert answer.params["text"] == "Here is your <b>chart</b>."
    assert answer.params["parse_mode"] == "HTML"
    assert omega.terminate()[0] == 0


def test_a_voice_note_is_transcribed_and_answered_as_words(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="It is sunny.", match="weather")]
    with FakeWhisper() as whisper:
        whisper.transcripts[b"OggS-voice"] = "what's the weather like?"
        omega = start(
            telegram_env(
                telegram,
                fake_openai,
                OMEGA_VOICE__BASE_URL=whisper.base_url,
                OMEGA_VOICE__API_KEY="gsk-voice-key-123456",
                OMEGA_VOICE__MODEL="whisper-large-v3",
            )
        )
        wait_polling(telegram)
        telegram.voice(ANA, b"OggS-voice")
        telegram.wait_for(lambda: "It is sunny." in telegram.texts(ANA))
        assert omega.terminate()[0] == 0
    (request,) = whisper.requests
    assert request.audio == b"OggS-voice"
    assert request.model == "whisper-large-v3"
    assert request.authorization == "Bearer gsk-voice-key-123456"
    asked = next(r for r in fake_openai.requests if "weather" in r.last_user_text)
    assert "[Voice message] what's the weather like?" in asked.last_user_text
    # The call to the transcription endpoint has its own audit row (issue 28: every call).
    with connect_db(isolated_env / "memory.db") as conn:
        rows = conn.execute(
            "SELECT status, provider, model FROM audit_log WHERE event = 'transcription'"
        ).fetchall()
    assert rows == [("ok", "voice", "whisper-large-v3")]


def test_without_transcription_a_voice_note_gets_an_honest_answer_and_one_limitation(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.voice(ANA, b"OggS-one")
    telegram.wait_for(lambda: any("voice messages" in t for t in telegram.texts(ANA)))
    telegram.voice(ANA, b"OggS-two")
    telegram.wait_for(lambda: sum("voice messages" in t for t in telegram.texts(ANA)) == 2)
    assert omega.terminate()[0] == 0
    assert "no transcription service is set up" in telegram.texts(ANA)[0]
    # No answering call (those carry tools; background calls never do) was made.
    assert [r for r in fake_openai.requests if r.body.get("tools")] == []
    conn = connect_db(isolated_env / "memory.db")
    rows = conn.execute("SELECT title, source FROM limitations").fetchall()
    conn.close()
    assert rows == [("Cannot transcribe voice messages", "voice")]


def test_a_document_reaches_the_provider_as_a_file_and_a_reply_carries_its_quote(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    fake_openai.script = [
        Step(text="Got the notes.", match="summarize"),
        Step(text="Tuesday works.", match="what about"),
    ]
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.document(ANA, b"meeting notes", "notes.txt", "text/plain", caption="summarize")
    telegram.wait_for(lambda: "Got the notes." in telegram.texts(ANA))
    telegram.reply(ANA, "what about that day?", quoted="We could meet on Tuesday.")
    telegram.wait_for(lambda: "Tuesday works." in telegram.texts(ANA))
    assert omega.terminate()[0] == 0
    document = next(r for r in fake_openai.requests if "summarize" in r.last_user_text)
    assert "[Attached file:" in document.last_user_text and ".txt]" in document.last_user_text
    quoted = next(r for r in fake_openai.requests if "what about" in r.last_user_text)
    assert '[In reply to you: "We could meet on Tuesday."]' in quoted.last_user_text


def test_a_markdown_parse_error_is_sent_again_as_plain_text(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    fake_openai.script = [Step(text="Use **bold** and `x < y`.", match="format")]
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.private(ANA, "hi")
    telegram.wait_for(lambda: "echo: hi" in telegram.texts(ANA))
    telegram.faults = [
        Fault("sendMessage", 400, "Bad Request: can't parse entities: Unsupported start tag")
    ]
    telegram.private(ANA, "format something")
    telegram.wait_for(lambda: len(telegram.calls_of("sendMessage")) >= 4)
    time.sleep(0.3)
    code, err = omega.terminate()
    assert code == 0, err
    refused, sent = telegram.calls_of("sendMessage")[-2:]
    assert refused.params["parse_mode"] == "HTML" and not refused.params.get("_accepted")
    assert sent.params.get("parse_mode") is None
    assert telegram.texts(ANA)[-1] == "Use **bold** and `x < y`."  # every character kept
    assert "sent as plain text" in err


def test_rate_limits_are_waited_out_and_commands_work_with_the_bot_name(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    telegram.faults = [Fault("sendMessage", 429, "Too Many Requests: retry after 1", 1)]
    omega = start(telegram_env(telegram, fake_openai))
    wait_polling(telegram)
    telegram.private(ANA, "/help@omega_test_bot")
    telegram.wait_for(lambda: any("/tasks" in t for t in telegram.texts(ANA)))
    code, err = omega.terminate()
    assert code == 0, err
    limited, accepted = [c for c in telegram.calls_of("sendMessage")][:2]
    assert not limited.params.get("_accepted") and accepted.params.get("_accepted")
    assert "rate limited; retrying in 1 s" in err
    assert fake_openai.requests == []  # a command never reaches the provider


@pytest.mark.slow
def test_status_shows_the_bot_and_whether_polling_is_healthy(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    env = telegram_env(telegram, fake_openai, **OWNER)
    omega = start(env)
    wait_polling(telegram)
    telegram.private(ANA, "/status")
    telegram.wait_for(lambda: any("Uptime" in t for t in telegram.texts(ANA)))
    (status,) = [t for t in telegram.texts(ANA) if "Uptime" in t]
    assert "Telegram: @omega_test_bot, polling" in status
    telegram.private(ANA, "/whatsapp")
    telegram.wait_for(lambda: any("WhatsApp is not enabled" in t for t in telegram.texts(ANA)))
    result = subprocess.run(
        [OMEGA_BIN, "status"], capture_output=True, text=True, env=dict(os.environ, **env)
    )
    assert result.returncode == 0, result.stderr
    assert "@omega_test_bot, polling" in result.stdout
    assert omega.terminate()[0] == 0
    result = subprocess.run(
        [OMEGA_BIN, "status"], capture_output=True, text=True, env=dict(os.environ, **env)
    )
    assert "@omega_test_bot, stopped" in result.stdout


def test_a_reminder_set_on_telegram_is_delivered_to_that_chat_and_owner_alerts_reach_the_owner(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega]
) -> None:
    due = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=4)).strftime("%Y-%m-%dT%H:%M:%S")
    fake_openai.script = [Step(text=f"Will do.\nSCHEDULE: stretch your legs | {due} | once")]
    omega = start(telegram_env(telegram, fake_openai, OMEGA_OMEGA__TIMEZONE="UTC", **OWNER))
    wait_polling(telegram)
    telegram.group(GROUP, ANA, "@omega_test_bot remind us to stretch")
    telegram.wait_for(lambda: "Will do." in telegram.texts(GROUP))
    telegram.wait_for(lambda: any("stretch your legs" in t for t in telegram.texts(GROUP)))
    # An owner alert (a new limitation) goes to the owner's private chat, not to the group.
    telegram.voice(EVE, b"OggS")  # a stranger: denied, no limitation
    telegram.voice(ANA, b"OggS")
    telegram.wait_for(lambda: any("New limitation detected" in t for t in telegram.texts(ANA)))
    assert not any("New limitation" in t for t in telegram.texts(GROUP))
    assert not any("stretch" in t for t in telegram.texts(ANA))
    assert omega.terminate()[0] == 0


def test_a_replica_that_does_not_poll_answers_what_another_replica_received(
    telegram: FakeTelegram, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    from omega.memory import Store
    from omega.types import IncomingMessage

    store = Store(isolated_env / "memory.db")  # the polling replica, on another machine
    assert store.lease_acquire("channel:telegram", "poller-host:7:0123abcd", 600)
    message = IncomingMessage(
        "telegram", str(ANA), "from the poller", reply_target=str(ANA), assurance="platform"
    )
    assert store.inbox_put(message, "poller-host/1/7/0123abcd")
    store.close()
    env = telegram_env(telegram, fake_openai, **OWNER)
    omega = start(env)
    telegram.wait_for(lambda: "echo: from the poller" in telegram.texts(ANA))
    result = subprocess.run(
        [OMEGA_BIN, "status"], capture_output=True, text=True, env=dict(os.environ, **env)
    )
    assert "channel:telegram" in result.stdout and "poller-host:7:0123abcd" in result.stdout
    assert omega.terminate()[0] == 0
    assert telegram.calls_of("getUpdates") == []  # one consumer per bot: the lease holder
