"""A voice note's transcription under the daily spending cap (gateway/voice.py), through the
pipeline with the scripted transcription server: it is admitted as a reply's call is (made
past the background line, refused at the cap with the message a refused reply gets, the
message still kept and audited), and its audit row carries what it cost: what the service
reported (seconds or tokens) at the model's list price, else the audio's own length at
`[limits] unknown_model_usd_per_mtok` (0: free)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from omega import i18n
from omega.gateway.pipeline import handle_message
from omega.memory.audit import AuditEntry
from omega.turn import PipelineDeps
from omega.turn.spend import today
from omega.types import Attachment, IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider
from tests.fakes.whisper_server import FakeWhisper

CAP = 1.0
SPOKEN = "what's the weather like?"


def ogg(seconds: float) -> bytes:
    """An Ogg Opus stream `seconds` long: its header page, then a last page whose granule
    position counts the 48 kHz samples played by its end."""

    def page(granule: int, body: bytes) -> bytes:
        return b"OggS\x00\x00" + granule.to_bytes(8, "little") + bytes(13) + body

    return page(0, b"OpusHead\x01\x01") + page(int(seconds * 48000), b"audio")


@pytest.fixture
def whisper() -> Iterator[FakeWhisper]:
    with FakeWhisper() as server:
        yield server


def voice_deps(
    make_deps: MakeDeps, whisper: FakeWhisper, provider: ScriptedProvider, **extra: str
) -> PipelineDeps:
    """The pipeline under a $1 cap, voice notes transcribed by the scripted server."""
    return make_deps(
        provider,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_LIMITS__DAILY_USD=str(CAP),
        OMEGA_VOICE__BASE_URL=whisper.base_url,
        OMEGA_VOICE__API_KEY="sk-voice-key-0123456789",
        **extra,
    )


def spent_already(deps: PipelineDeps, usd: float) -> None:
    """Today's earlier calls cost `usd` (one audited answer)."""
    deps.store.audit(
        AuditEntry(
            channel="terminal", sender_id="owner", status="ok", provider="openai", cost_usd=usd
        )
    )


def send_voice(deps: PipelineDeps, sender: str, audio: bytes) -> Recorder:
    """`sender` sends one voice note; what was sent back."""
    out = Recorder()
    voice = Attachment("audio", audio, "voice.ogg", "audio/ogg")
    message = IncomingMessage("terminal", sender, "", attachments=[voice], assurance="local")
    asyncio.run(handle_message(deps, message, out))
    return out


def rows(deps: PipelineDeps, event: str) -> list[dict[str, Any]]:
    return [r for r in deps.store.audit_entries(100) if r["event"] == event]


@pytest.mark.parametrize(
    ("model", "reported", "rate", "seconds", "cost"),
    [
        # whisper-1 reports the seconds it billed: $0.006 a minute.
        ("whisper-1", {"usage": {"type": "duration", "seconds": 90}}, "15", 60, 0.009),
        # gpt-4o-transcribe reports tokens: audio $6, text $2.50 in, $10 out per million.
        (
            "gpt-4o-transcribe",
            {
                "usage": {
                    "type": "tokens",
                    "input_tokens": 1200,
                    "input_token_details": {"audio_tokens": 1000, "text_tokens": 200},
                    "output_tokens": 300,
                }
            },
            "15",
            60,
            (1000 * 6 + 200 * 2.5 + 300 * 10) / 1e6,
        ),
        # A model with no list price: the three minutes the server reported, or, nothing
        # reported, the Ogg's two minutes, each 1,000 tokens at the unknown-model rate; 0
        # makes it free (a server of your own).
        ("whisper-local", {"duration": 180.0}, "15", 120, 3 * 1000 * 15 / 1e6),
        ("whisper-local", {}, "15", 120, 2 * 1000 * 15 / 1e6),
        ("whisper-local", {}, "0", 120, 0.0),
    ],
)
def test_a_transcription_is_made_past_the_background_line_and_its_cost_counts(
    make_deps: MakeDeps,
    whisper: FakeWhisper,
    model: str,
    reported: dict[str, Any],
    rate: str,
    seconds: float,
    cost: float,
) -> None:
    provider = ScriptedProvider(default="It is sunny.")
    deps = voice_deps(
        make_deps,
        whisper,
        provider,
        OMEGA_VOICE__MODEL=model,
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK=rate,
    )
    spent_already(deps, 0.8 * CAP)  # background work has stopped; answering people has not
    audio = ogg(seconds)
    whisper.transcripts[audio] = SPOKEN
    whisper.extra = reported
    out = send_voice(deps, "ana", audio)
    assert [m.text for m in out.sent if m.kind == "reply"] == ["It is sunny."]
    assert f"[Voice message] {SPOKEN}" in provider.contexts[-1].messages[-1].content
    (row,) = rows(deps, "transcription")
    assert (row["status"], row["provider"], row["model"]) == ("ok", "voice", model)
    assert row["cost_usd"] is not None and row["cost_usd"] == pytest.approx(cost)
    usage = reported.get("usage", {})
    assert row["input_tokens"] == usage.get("input_tokens", 0)
    assert row["output_tokens"] == usage.get("output_tokens", 0)
    assert deps.store.spent_since(today()) == pytest.approx(0.8 * CAP + cost)


def test_past_the_cap_a_voice_note_is_refused_in_the_persons_language_and_kept(
    make_deps: MakeDeps, whisper: FakeWhisper
) -> None:
    provider = ScriptedProvider(default="It is sunny.")
    deps = voice_deps(make_deps, whisper, provider, OMEGA_VOICE__MODEL="whisper-1")
    spent_already(deps, CAP)
    deps.store.set_fact("lena", "preferred_language", "German")
    audio = ogg(30)
    whisper.transcripts[audio] = SPOKEN
    out = send_voice(deps, "lena", audio)
    told = i18n.message("error_spending_cap", "German")
    assert [(m.kind, m.text) for m in out.sent if m.kind in ("reply", "error")] == [("error", told)]
    assert whisper.requests == [] and provider.contexts == []  # nothing was sent anywhere
    (refused,) = rows(deps, "transcription")
    assert (refused["status"], refused["provider"], refused["cost_usd"]) == (
        "denied",
        "voice",
        None,
    )
    assert "daily spending cap" in str(refused["detail"])
    # The message is kept and audited like any answer, and the owner is told once.
    (kept,) = rows(deps, "voice_refused")
    assert kept["output_text"] == told and kept["sender_id"] == "lena"
    assert [m.content for m in deps.store.recent_messages("terminal", "lena", 5)][-1] == told
    assert len(rows(deps, "spending_cap:replies")) == 1
    assert deps.store.spent_since(today()) == pytest.approx(CAP)
