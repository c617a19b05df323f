"""Files through the Matrix channel, `omega start` against a real Synapse: a picture reaches a
vision model and a file the model, an image Omega makes comes back as `m.image`, and a voice
message is transcribed and answered as words."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.synapse import Synapse, wait_until
from tests.fakes.whisper_server import FakeWhisper
from tests.integration.test_matrix_channel import cast, configure, room_with_omega, said, start
from tests.integration.test_tool_loop import tool_call

# Each runs `omega start` against Synapse (and the first starts Synapse): several seconds.
pytestmark = pytest.mark.slow

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def test_a_picture_reaches_the_model_and_an_image_made_comes_back_as_a_photo(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people)
    fake_openai.script = [
        Step(text="A test pattern.", match="what is this"),
        Step(text="Got your notes.", match="Attached file"),
        Step(
            tool_calls=[tool_call("c1", "write_file", path="chart.png", content="PNGDATA")],
            match="draw",
        ),
        Step(text="Here is your chart."),
    ]
    env = openai_env(
        fake_openai,
        OMEGA_MEMORY__IDLE_MINUTES="600",
        OMEGA_PROVIDER__OPENAI__VISION="true",
        OMEGA_AUTH__OWNERS=f'["matrix:{people.ana.user_id}"]',
    )
    omega = start(env, isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega)
        mxc = people.ana.upload(PNG, "image/png", "pattern.png")
        people.ana.send(
            room,
            {
                "msgtype": "m.image",
                "body": "what is this?",
                "filename": "pattern.png",
                "url": mxc,
                "info": {"mimetype": "image/png", "size": len(PNG)},
            },
        )
        said(people.ana, room, people.omega, "A test pattern.")
        asked = next(r for r in fake_openai.requests if "what is this" in r.last_user_text)
        assert "[Attached file:" in asked.last_user_text
        assert "image_url" in json.dumps(asked.body)  # the picture itself, for a vision model

        # A file, with no caption: it reaches the model as a saved file it can read.
        notes = people.ana.upload(b"a,b\n1,2\n", "text/plain", "notes.txt")
        people.ana.send(
            room,
            {
                "msgtype": "m.file",
                "body": "notes.txt",
                "url": notes,
                "info": {"size": 8, "mimetype": "text/plain"},
            },
        )
        said(people.ana, room, people.omega, "Got your notes.")
        file_turns = [
            r
            for r in fake_openai.requests
            if "[Attached file:" in r.last_user_text and "what is this" not in r.last_user_text
        ]
        assert file_turns and "image_url" not in json.dumps(file_turns[0].body)
        assert file_turns[0].last_user_text.endswith(".txt]")  # its declared type kept

        people.ana.say(room, "draw a chart")
        said(people.ana, room, people.omega, "Here is your chart.")

        def images() -> list[dict[str, Any]]:
            return [
                e["content"]
                for e in people.ana.messages(room, people.omega.user_id)
                if e["content"].get("msgtype") == "m.image"
            ]

        wait_until(images, what="the photo")
        time.sleep(0.5)
        (image,) = images()
        assert image["info"]["size"] == len(b"PNGDATA")
        assert people.ana.download(image["url"]) == b"PNGDATA"
    finally:
        code, err = omega.terminate()
    assert code == 0, err


def test_a_voice_message_is_transcribed_and_an_audio_file_is_kept_as_a_file(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people)
    fake_openai.script = [
        Step(text="It is sunny.", match="weather"),
        Step(text="A song.", match="Attached file"),
    ]
    with FakeWhisper() as whisper:
        whisper.transcripts[b"OggS-voice"] = "what's the weather like?"
        env = openai_env(
            fake_openai,
            OMEGA_MEMORY__IDLE_MINUTES="600",
            OMEGA_VOICE__BASE_URL=whisper.base_url,
            OMEGA_VOICE__API_KEY="gsk-voice-key-123456",
            OMEGA_VOICE__MODEL="whisper-large-v3",
        )
        omega = start(env, isolated_env)
        try:
            room = room_with_omega(people.ana, people.omega)
            voice = people.ana.upload(b"OggS-voice", "audio/ogg", "Voice message.ogg")
            people.ana.send(
                room,
                {
                    "msgtype": "m.audio",
                    "body": "Voice message.ogg",
                    "url": voice,
                    "info": {"mimetype": "audio/ogg", "size": 10},
                    "org.matrix.msc3245.voice": {},
                },
            )
            said(people.ana, room, people.omega, "It is sunny.")
            song = people.ana.upload(b"OggS-song", "audio/ogg", "song.ogg")
            people.ana.send(
                room,
                {"msgtype": "m.audio", "body": "song.ogg", "url": song, "info": {"size": 9}},
            )
            said(people.ana, room, people.omega, "A song.")
        finally:
            code, err = omega.terminate()
        assert code == 0, err
    (request,) = whisper.requests  # the song was not transcribed
    assert request.audio == b"OggS-voice"
    asked = next(r for r in fake_openai.requests if "weather" in r.last_user_text)
    assert "[Voice message] what's the weather like?" in asked.last_user_text
    song_turns = [
        r.last_user_text
        for r in fake_openai.requests
        if "[Attached file:" in r.last_user_text and "weather" not in r.last_user_text
    ]
    assert song_turns and not any("[Voice message]" in text for text in song_turns)
    with connect_db(isolated_env / "memory.db") as conn:
        rows = conn.execute("SELECT status FROM audit_log WHERE event = 'transcription'")
        assert rows.fetchall() == [("ok",)]
