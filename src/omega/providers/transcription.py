"""Speech to text through an OpenAI-compatible `/audio/transcriptions` endpoint.

OpenAI, Groq and local whisper servers (whisper.cpp's server, faster-whisper-server, LocalAI)
all take the same multipart request: `file` and `model`, answering `{"text": "..."}`.
"""

from __future__ import annotations

from dataclasses import dataclass

from omega.config import Config
from omega.errors import OmegaError

OPENAI_URL = "https://api.openai.com/v1"


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
) -> str:
    """The text spoken in `audio`; TranscriptionError when there is none or the call fails."""
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
        text = str(response.json()["text"]).strip()
    except (ValueError, KeyError, TypeError) as exc:
        raise TranscriptionError("transcription service answered without a text") from exc
    if not text:
        raise TranscriptionError("nothing could be made out in the audio")
    return text
