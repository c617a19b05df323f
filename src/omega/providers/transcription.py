"""Speech to text through an OpenAI-compatible `/audio/transcriptions` endpoint.

OpenAI, Groq and local whisper servers (whisper.cpp's server, faster-whisper-server, LocalAI)
all take the same multipart request: `file` and `model`, answering `{"text": "..."}`; OpenAI
adds what the call used (`usage`: the audio's seconds, or tokens), some servers the audio's
`duration`. What a call used prices it (prices.transcription_cost); where the service does not
say, the audio's own length does (`audio_seconds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omega.config import Config
from omega.errors import OmegaError

OPENAI_URL = "https://api.openai.com/v1"
# Audio whose length its headers do not give (not Ogg) is taken to play this many seconds a
# byte's worth: a low voice-note bitrate (16 kbit/s), so its length comes out long, not short.
ASSUMED_BYTES_PER_SECOND = 2000


class TranscriptionError(OmegaError):
    """The audio could not be transcribed (service unreachable, refused, or no text)."""


@dataclass(frozen=True)
class Transcriber:
    """Where and how voice is transcribed."""

    base_url: str
    api_key: str
    model: str
    timeout_secs: float = 60.0

    def describe(self) -> str:
        """One line for status: the endpoint and model, never the key."""
        return f"{self.base_url} ({self.model})"


@dataclass(frozen=True)
class Transcript:
    """What the service heard, and what it said the call used (0 and None: it did not say)."""

    text: str
    seconds: float | None = None  # the audio's length (billed by the minute: whisper-1)
    input_tokens: int = 0  # billed by the token (gpt-4o-transcribe): the prompt and audio
    audio_tokens: int = 0  # of input_tokens, the audio's
    output_tokens: int = 0


def transcriber_for(config: Config) -> Transcriber | None:
    """The configured transcriber: `[voice]`, else OpenAI with the original's
    `whisper_api_key` of `[channel.telegram]` or `[channel.whatsapp]`; None when none is set."""
    voice = config.voice
    if voice.base_url:
        return Transcriber(
            voice.base_url, voice.api_key.get_secret_value(), voice.model, voice.timeout_secs
        )
    whisper = (
        config.channel.telegram.whisper_api_key.get_secret_value()
        or config.channel.whatsapp.whisper_api_key.get_secret_value()
    )
    if whisper:
        return Transcriber(OPENAI_URL, whisper, "whisper-1", voice.timeout_secs)
    return None


async def transcribe(
    transcriber: Transcriber, audio: bytes, filename: str = "voice.ogg", mime: str = ""
) -> Transcript:
    """The text spoken in `audio`, with what the call used as the service reported it;
    TranscriptionError when there is no text or the call fails."""
    import httpx  # only a voice message needs it (~0.1 s to import)

    headers = {"Authorization": f"Bearer {transcriber.api_key}"} if transcriber.api_key else {}
    files = {"file": (filename, audio, mime or "application/octet-stream")}
    try:
        async with httpx.AsyncClient(timeout=transcriber.timeout_secs) as client:
            response = await client.post(
                f"{transcriber.base_url}/audio/transcriptions",
                headers=headers,
                data={"model": transcriber.model, "response_format": "json"},
                files=files,
            )
    except httpx.HTTPError as exc:
        raise TranscriptionError(f"transcription service unreachable: {exc}") from exc
    if response.status_code != 200:
        raise TranscriptionError(
            f"transcription service answered {response.status_code}: {response.text[:200]}"
        )
    try:
        payload = response.json()
        text = str(payload["text"]).strip()
    except (ValueError, KeyError, TypeError) as exc:
        raise TranscriptionError("transcription service answered without a text") from exc
    if not text:
        raise TranscriptionError("nothing could be made out in the audio")
    return _with_usage(text, payload)


def _with_usage(text: str, payload: dict[str, Any]) -> Transcript:
    """The transcript with the usage the answer reports: OpenAI's `usage` (`{"type":
    "duration", "seconds"}` or `{"type": "tokens", ...}`), or a server's `duration`."""
    usage = payload.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("input_token_details")
    details = details if isinstance(details, dict) else {}
    seconds = _number(usage.get("seconds"))
    return Transcript(
        text,
        seconds=seconds if seconds is not None else _number(payload.get("duration")),
        input_tokens=int(_number(usage.get("input_tokens")) or 0),
        audio_tokens=int(_number(details.get("audio_tokens")) or 0),
        output_tokens=int(_number(usage.get("output_tokens")) or 0),
    )


def _number(value: object) -> float | None:
    """A reported count as a number; None when it is missing or not a number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def audio_seconds(audio: bytes) -> float:
    """How long `audio` plays: read from an Ogg file's pages (Opus or Vorbis: the voice notes
    of Telegram, WhatsApp, Matrix, Discord), else its size at ASSUMED_BYTES_PER_SECOND."""
    found = _ogg_seconds(audio) if audio.startswith(b"OggS") else None
    return found if found is not None else len(audio) / ASSUMED_BYTES_PER_SECOND


def _ogg_seconds(audio: bytes) -> float | None:
    """The granule position of an Ogg stream's last page (the samples played by its end) over
    its sample rate; None when the stream is not Opus or Vorbis or has no such page."""
    head = audio[:512]
    if head.find(b"OpusHead") >= 0:
        rate = 48000  # Opus counts granules at 48 kHz whatever the input's rate
    elif (at := head.find(b"\x01vorbis")) >= 0:
        rate = int.from_bytes(head[at + 12 : at + 16], "little")  # the identification header's
    else:
        return None
    page = audio.rfind(b"OggS")
    while page >= 0 and rate > 0:
        granule = int.from_bytes(audio[page + 6 : page + 14], "little", signed=True)
        if audio[page + 4 : page + 5] == b"\x00" and granule > 0:  # version 0; -1: no end
            return granule / rate
        page = audio.rfind(b"OggS", 0, page)
    return None
