"""The voice stage: audio attachments (voice notes) become text before the rest of the pipeline.

The transcript is what the pipeline sees, marked as voice, so memory, commands and the provider
treat it as the person's words. With no transcription configured the person gets an honest
answer, and the gap is a limitation raised once (the owner is alerted the first time; whoever
sent a voice note is a sighting), analysed into a proposal once the answer is out.
"""

from __future__ import annotations

import dataclasses
import logging
import time

from omega import i18n
from omega.evolution.gaps import analyse_gap, raise_limitation
from omega.gateway.delivery import conclude
from omega.memory.audit import AuditEntry
from omega.providers.transcription import TranscriptionError, transcribe, transcriber_for
from omega.turn import Outbox, PipelineDeps, Turn, marker_context, record_audit
from omega.types import IncomingMessage

log = logging.getLogger(__name__)

VOICE_MARK = "[Voice message]"
LIMITATION_TITLE = "Cannot transcribe voice messages"
LIMITATION_DESCRIPTION = (
    "Voice notes arrive but no transcription service is configured, so they cannot be understood."
)
LIMITATION_PLAN = (
    "Set [voice] base_url, api_key and model in config.toml to an OpenAI-compatible "
    "/audio/transcriptions endpoint (OpenAI, Groq or a local whisper server)."
)


def has_voice(message: IncomingMessage) -> bool:
    """Whether the message carries a voice note (an audio attachment)."""
    return any(a.kind == "audio" for a in message.attachments)


async def transcribe_voice(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox, started: float
) -> IncomingMessage | None:
    """The message with its voice notes as text; None when it has been answered here instead
    (no transcription configured, or the transcription failed)."""
    voices = [a for a in message.attachments if a.kind == "audio"]
    transcriber = transcriber_for(deps.config)
    if transcriber is None:
        new_id = None
        try:
            limitation, created = await raise_limitation(
                marker_context(deps, message, turn, out, cause="voice"),
                LIMITATION_TITLE,
                LIMITATION_DESCRIPTION,
                LIMITATION_PLAN,
                "voice",
            )
            new_id = limitation.id if created else None
        except PermissionError as exc:
            log.warning("the voice limitation was not recorded: %s", exc)
        except Exception:
            log.exception("recording the voice limitation failed")
        await conclude(
            deps,
            message,
            out,
            i18n.message("voice_unavailable", turn.language),
            started=started,
            event="voice_unavailable",
            detail="no [voice] transcription configured",
        )
        if new_id is not None:  # after the answer: analysis never delays it
            await analyse_gap(deps, out, new_id, "understand voice messages")
        return None
    texts: list[str] = []
    for voice in voices:
        began = time.perf_counter()
        try:
            texts.append(
                await transcribe(
                    transcriber, voice.data, voice.name or "voice.ogg", voice.mime_type
                )
            )
            await _audit_transcription(deps, message, transcriber.model, began, "")
        except TranscriptionError as exc:
            await _audit_transcription(deps, message, transcriber.model, began, str(exc))
            log.warning("voice note from %s not transcribed: %s", message.sender_id, exc)
            await conclude(
                deps,
                message,
                out,
                i18n.message("voice_failed", turn.language),
                started=started,
                event="voice_failed",
                detail=str(exc)[:500],
            )
            return None
    spoken = "\n".join(f"{VOICE_MARK} {text}" for text in texts)
    log.info("transcribed %d voice note(s) from %s", len(texts), message.sender_id)
    return dataclasses.replace(
        message,
        text=f"{spoken}\n{message.text}".strip(),
        attachments=[a for a in message.attachments if a.kind != "audio"],
    )


async def _audit_transcription(
    deps: PipelineDeps, message: IncomingMessage, model: str, began: float, error: str
) -> None:
    """Every call to the transcription endpoint has its audit row (it reports no cost)."""
    await record_audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            status="error" if error else "ok",
            provider="voice",
            model=model,
            processing_ms=int((time.perf_counter() - began) * 1000),
            detail=error[:500],
            event="transcription",
        ),
    )
