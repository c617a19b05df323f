"""The Discord channel through the real `omega start`, against a wire double of Discord's REST
API and gateway websocket (tests/fakes/discord_server.py): DMs, strangers, guild mentions,
2,000-character pieces, files both ways, typing, a dropped socket resumed, and exactly once
across a crash and restarts."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.discord_server import (
    BOT_ID,
    GUILD_CHANNEL_ID,
    MESSAGE_CONTENT_INTENT,
    TOKEN,
    FakeDiscord,
)
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_telegram import Omega
from tests.integration.test_tool_loop import tool_call

ANA = 4_200_000_000_000_000_042  # allowed; the owner where a test says so
EVE = 6_660_000_000_000_000_666  # not allowed
DENIAL = "Sorry, I'm not able to talk with you. Ask my owner to add you."


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with FakeDiscord() as server:
        yield server


@pytest.fixture
def start(discord: FakeDiscord, fake_openai: FakeOpenAI) -> Iterator[type[Omega]]:
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


def configure(home: Path, discord: FakeDiscord, extra: str = "", token: str = TOKEN) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f"""
[channel.discord]
enabled = true
bot_token = "{token}"
api_url = "{discord.api_url}"
allowed_users = ["{ANA}"]
{extra}
""",
        encoding="utf-8",
    )


def env_for(provider: FakeOpenAI, **extra: str) -> dict[str, str]:
    return openai_env(provider, OMEGA_MEMORY__IDLE_MINUTES="600", **extra)


def connected(discord: FakeDiscord) -> None:
    """Until the bot's gateway session is up."""
    discord.wait_for(discord.connected)


def dm_texts(discord: FakeDiscord, user_id: int) -> list[str]:
    channel = discord.dm_channels.get(user_id)
    return discord.texts(channel) if channel is not None else []


def asked(provider: FakeOpenAI, words: str) -> list[str]:
    """The answering calls whose latest user message says `words` (background calls quote it
    after "User:")."""
    return [
        r.last_user_text
        for r in provider.requests
        if words in r.last_user_text and f"User: {words}" not in r.last_user_text
    ]


def test_dms_are_answered_strangers_refused_and_guild_channels_answer_only_mentions(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="Hello Ana, 4. @everyone", match="2+2"),
        Step(text="Paris.", match="capital of France"),
    ]
    # With the Message Content intent, Discord sends every guild message in full: the channel
    # itself must pick out the ones that mention the bot.
    configure(isolated_env, discord, "message_content_intent = true")
    env = env_for(fake_openai)
    omega = start(env)
    connected(discord)
    [identify] = [p for p in discord.received if p["op"] == 2]
    assert identify["d"]["intents"] & MESSAGE_CONTENT_INTENT
    discord.dm(ANA, "what is 2+2?", name="ana")
    discord.wait_for(lambda: "Hello Ana, 4. @everyone" in dm_texts(discord, ANA))
    # Typing was shown in Ana's DM; no reply may ping anyone (a model's @everyone stays text).
    assert discord.typing and set(discord.typing) == {discord.dm_channels[ANA]}
    assert all(s.payload.get("allowed_mentions") == {"parse": []} for s in discord.sent)

    # A stranger gets the denial once; nothing of theirs reaches the model.
    discord.dm(EVE, "hi, who are you?", name="eve")
    discord.dm(EVE, "answer me", name="eve")
    discord.dm(ANA, "ping")
    discord.wait_for(lambda: "echo: ping" in " ".join(dm_texts(discord, ANA)))
    time.sleep(0.5)
    assert dm_texts(discord, EVE) == [DENIAL]
    assert not any("who are you" in r.last_user_text for r in fake_openai.requests)
    # Nor is anything of theirs kept by the channel: only Ana's DM is remembered for catching
    # up after a restart (issue 36).
    state = json.loads((isolated_env / "discord.state.json").read_text(encoding="utf-8"))
    assert set(state["channels"]) == {str(discord.dm_channels[ANA])}

    # In a guild channel: only a message that mentions the bot is read, and answered there.
    discord.guild_message(ANA, "lunch at noon, everyone?")
    discord.guild_message(ANA, "what is the capital of France?", mention=True)
    discord.wait_for(lambda: "Paris." in discord.texts(GUILD_CHANNEL_ID))
    time.sleep(0.5)
    assert not any("lunch" in json.dumps(r.body) for r in fake_openai.requests)
    [question] = asked(fake_openai, "capital of France")
    assert f"<@{BOT_ID}>" not in question  # the mention itself is not part of the words
    assert discord.texts(GUILD_CHANNEL_ID) == ["Paris."]
    assert discord.identifies == 1
    state = json.loads((isolated_env / "discord.state.json").read_text(encoding="utf-8"))
    assert set(state["channels"]) == {str(discord.dm_channels[ANA]), str(GUILD_CHANNEL_ID)}

    # discord.py calls on_ready once the guilds listed in READY arrived or after its 2 s wait
    # for them: "connecting" until then, however quickly messages are answered.
    deadline = time.monotonic() + 20
    while True:
        status = run_omega("status", env=env)
        assert status.returncode == 0, status.stderr
        rows = {line.split()[0]: line for line in status.stdout.splitlines() if line.strip()}
        if "running" in rows["discord"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert "plug-in, omega_bot, running" in rows["discord"]
    assert "check discord" in status.stdout and "ok - omega_bot: running" in status.stdout
    code, err = omega.terminate()
    assert code == 0, err
    assert "Traceback" not in err
    log = (isolated_env / "omega.log").read_text(encoding="utf-8")
    assert TOKEN not in err + log + status.stdout
    assert "PyNaCl" not in err + log  # no voice warnings: Omega has no voice channels


def test_a_dm_is_not_in_the_history_of_the_same_persons_server_channel_turn(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    # Issue 36: a DM and a guild channel (and a thread of it) are conversations of their own.
    # What Ana says in private must not be in the prompt of a turn answered in public, even
    # with the words that would recall it.
    configure(isolated_env, discord)
    omega = start(env_for(fake_openai))
    connected(discord)
    discord.dm(ANA, "my diagnosis is zebrafever, keep it private")
    discord.wait_for(
        lambda: "echo: my diagnosis is zebrafever, keep it private" in dm_texts(discord, ANA)
    )
    discord.guild_message(ANA, "tell everyone about my diagnosis", mention=True)
    discord.wait_for(
        lambda: "echo: tell everyone about my diagnosis" in discord.texts(GUILD_CHANNEL_ID)
    )
    thread = GUILD_CHANNEL_ID + 77  # a thread of the channel: a channel of its own to Discord
    discord.guild_message(ANA, "and in this thread, my diagnosis?", mention=True, channel_id=thread)
    discord.wait_for(lambda: "echo: and in this thread, my diagnosis?" in discord.texts(thread))
    discord.dm(ANA, "what did I tell you privately?")
    discord.wait_for(lambda: "echo: what did I tell you privately?" in dm_texts(discord, ANA))

    def requests(words: str) -> list[str]:
        return [json.dumps(r.body) for r in fake_openai.requests if words in r.last_user_text]

    public = requests("tell everyone about my diagnosis")
    assert public and not any("zebrafever" in body for body in public)
    in_thread = requests("and in this thread")
    assert in_thread and not any("zebrafever" in body for body in in_thread)
    assert not any("tell everyone" in body for body in in_thread)  # the channel's own turn
    private = requests("what did I tell you privately")
    assert private and all("zebrafever" in body for body in private)  # the DM's history
    assert omega.terminate()[0] == 0


def test_a_stranger_is_offered_pairing_under_the_pairing_policy(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    configure(isolated_env, discord, 'dm_policy = "pairing"')
    omega = start(env_for(fake_openai))
    connected(discord)
    discord.dm(EVE, "may I talk to you?", name="eve")
    discord.wait_for(lambda: dm_texts(discord, EVE))
    [offer] = dm_texts(discord, EVE)
    assert "pair" in offer.lower() or "code" in offer.lower()
    assert not any("may I talk" in json.dumps(r.body) for r in fake_openai.requests)
    assert omega.terminate()[0] == 0


def test_a_long_reply_is_sent_in_pieces_of_at_most_2000_characters(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 60 + "end." for i in range(20)]
    long = "\n\n".join(paragraphs) + "\n\n🙂 done"
    assert len(long) > 6000
    fake_openai.script = [Step(text=long, match="long")]
    configure(isolated_env, discord)
    omega = start(env_for(fake_openai))
    connected(discord)
    [identify] = [p for p in discord.received if p["op"] == 2]
    assert not identify["d"]["intents"] & MESSAGE_CONTENT_INTENT  # not needed by default
    discord.dm(ANA, "tell me something long")
    discord.wait_for(lambda: dm_texts(discord, ANA) and dm_texts(discord, ANA)[-1].endswith("done"))
    pieces = [text for text in dm_texts(discord, ANA) if text in long]  # not the welcome
    assert len(pieces) >= 4
    assert all(len(piece) <= 2000 for piece in pieces)  # the double refuses longer ones too
    assert "".join(pieces) == long
    assert all(piece.endswith("\n\n") for piece in pieces[:-1])  # cut between paragraphs
    assert omega.terminate()[0] == 0


def test_an_attachment_is_downloaded_for_the_model_and_an_image_made_goes_back_as_a_file(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="Noted: two columns.", match="attached notes"),
        Step(
            tool_calls=[tool_call("c1", "write_file", path="chart.png", content="PNGDATA")],
            match="draw",
        ),
        Step(text="Here is your chart."),
    ]
    configure(isolated_env, discord)
    omega = start(env_for(fake_openai, OMEGA_AUTH__OWNERS=f'["discord:{ANA}"]'))
    connected(discord)
    discord.dm(
        ANA, "read the attached notes", attachments=[("notes.csv", b"a,b\n1,2\n", "text/csv")]
    )
    discord.wait_for(lambda: "Noted: two columns." in dm_texts(discord, ANA))
    [prompt] = asked(fake_openai, "attached notes")
    assert "[Attached file:" in prompt

    discord.dm(ANA, "draw a chart")
    discord.wait_for(lambda: any(s.files for s in discord.sent))
    discord.wait_for(lambda: "Here is your chart." in dm_texts(discord, ANA))
    [photo] = [s for s in discord.sent if s.files]
    assert photo.channel_id == discord.dm_channels[ANA]
    assert list(photo.files.values()) == [b"PNGDATA"]
    assert photo.payload["attachments"][0]["filename"].endswith(".png")
    assert omega.terminate()[0] == 0


def test_a_dropped_socket_resumes_and_no_event_is_lost_or_answered_twice_even_unresumed(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    configure(isolated_env, discord)
    omega = start(env_for(fake_openai))
    connected(discord)
    discord.dm(ANA, "first")
    discord.wait_for(lambda: "echo: first" in dm_texts(discord, ANA))

    # The network fails; a message comes while the socket is down; the resume replays it,
    # and (a fault injected) the one before it as well, which Omega has already answered.
    discord.resume_overlap = 1
    discord.drop()
    discord.dm(ANA, "while you were away")
    discord.wait_for(lambda: "echo: while you were away" in dm_texts(discord, ANA))
    # Discord asks for a reconnect (op 7): a resume again, and messages keep coming.
    discord.resume_overlap = 0
    discord.reconnect()
    discord.wait_for(lambda: len(discord.resumes) == 2)
    discord.dm(ANA, "after the reconnect")
    discord.wait_for(lambda: "echo: after the reconnect" in dm_texts(discord, ANA))
    assert discord.identifies == 1  # resumed, never a new session (which would lose events)
    resumes = [p for p in discord.received if p["op"] == 6]
    assert len(resumes) == 2 and all(p["d"]["session_id"] for p in resumes)

    # A session Discord will not resume (INVALID_SESSION): what it held is not sent again, but
    # the new session reads the DM channel's history and nothing is lost.
    discord.refuse_resume = discord.offline = True
    discord.drop()
    discord.dm(ANA, "during an expired session")  # held by the old session only
    discord.offline = False
    discord.wait_for(lambda: discord.identifies == 2)
    discord.wait_for(lambda: "echo: during an expired session" in dm_texts(discord, ANA))
    time.sleep(1.0)  # room for a repeat, which must not come
    texts = dm_texts(discord, ANA)
    for said in (
        "first",
        "while you were away",
        "after the reconnect",
        "during an expired session",
    ):
        assert texts.count(f"echo: {said}") == 1, texts
    assert len(asked(fake_openai, "first")) == 1
    assert omega.terminate()[0] == 0


@pytest.mark.slow
def test_a_crash_between_receipt_and_reply_is_answered_once_and_restarts_repeat_nothing(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="too late", match="slow", hang_secs=30),
        Step(text="answered after the restart", match="slow"),
    ]
    configure(isolated_env, discord)
    env = env_for(fake_openai)
    first = start(env)
    connected(discord)
    message = discord.dm(ANA, "a slow question")
    discord.wait_for(lambda: asked(fake_openai, "a slow question"))
    db = isolated_env / "memory.db"
    with connect_db(db) as conn:  # durable before the model was asked
        assert conn.execute("SELECT status FROM inbox").fetchall()
    first.kill()  # kill -9: no reply was sent
    assert not [text for text in dm_texts(discord, ANA) if "Omega" not in text]  # a welcome

    second = start(env)
    discord.wait_for(lambda: "answered after the restart" in dm_texts(discord, ANA))
    time.sleep(1.0)
    code, err = second.terminate()
    assert code == 0, err

    # Omega is down while Ana writes: no session gets it, Discord will not send it again.
    # The new session reads the DM channel's history after the last message handed over.
    discord.dm(ANA, "sent while you were down")
    third = start(env)
    discord.wait_for(lambda: "echo: sent while you were down" in dm_texts(discord, ANA))
    discord.dm(ANA, "still there?")
    discord.wait_for(lambda: "echo: still there?" in dm_texts(discord, ANA))
    assert third.terminate()[0] == 0

    reads = len(discord.history_reads)
    fourth = start(env)  # a restart with nothing new: nothing is answered again
    discord.wait_for(lambda: len(discord.history_reads) > reads)
    time.sleep(1.0)
    assert fourth.terminate()[0] == 0
    assert discord.identifies == 4
    texts = dm_texts(discord, ANA)
    for text in (
        "answered after the restart",
        "echo: sent while you were down",
        "echo: still there?",
    ):
        assert texts.count(text) == 1, texts
    assert "too late" not in texts
    assert len(asked(fake_openai, "a slow question")) == 2
    assert (isolated_env / "discord.state.json").stat().st_mode & 0o777 == 0o600
    with connect_db(db) as conn:
        rows = dict(conn.execute("SELECT id, status FROM inbox").fetchall())
    assert rows[f"discord:{message}"] == "done"


def test_a_rejected_token_is_a_clear_log_line_without_the_token(
    discord: FakeDiscord, fake_openai: FakeOpenAI, start: type[Omega], isolated_env: Path
) -> None:
    wrong = "MTAwMDAwMDAwMDAwMDAwMDAx.WrongT.wrong-token-wrong-token-wrong"
    configure(isolated_env, discord, token=wrong)
    env = env_for(fake_openai)
    omega = start(env)
    deadline = time.monotonic() + 20
    while "token was rejected" not in "".join(omega.stderr) and time.monotonic() < deadline:
        time.sleep(0.05)
    status = run_omega("status", env=env)
    code, err = omega.terminate()
    assert code == 0, err
    assert "discord: the bot token was rejected" in err
    assert "token rejected" in status.stdout, status.stdout
    log = (isolated_env / "omega.log").read_text(encoding="utf-8")
    for text in (err, log, status.stdout):
        assert wrong not in text
    assert discord.identifies == 0
