"""The voice stage: audio attachments (voice notes) become text before the rest of the pipeline.

The transcript is what the pipeline sees, marked as voice, so memory, commands and the provider
treat it as the person's words. With no transcription configured the person gets an honest
answer, and the gap is a limitation raised once (the owner is alerted the first time; whoever
sent a voice note is a sighting), analysed into a proposal once the answer is out.

Each transcription is a call that answers someone now: under `[limits] daily_usd` it is
admitted as a reply's call is (turn/spend.py, holding its estimate: the audio's length at the
model's price), and past the cap the person gets the message a reply refused by the cap gets,
the message kept and audited as any answer. Its audit row carries what it cost
(prices.transcription_cost: what the service reported, else the audio's length, priced by the
minute, or at `[limits] unknown_model_usd_per_mtok` for a model with no list price).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time

from omega import i18n
from omega.evolution.gaps import analyse_gap, raise_limitation
from omega.gateway.delivery import conclude
from omega.memory.audit import AuditEntry, AuditStatus
from omega.providers import prices
from omega.providers.base import ProviderError, friendly_error
from omega.providers.transcription import (
    Transcriber,
    Transcript,
    TranscriptionError,
    audio_seconds,
    transcribe,
    transcriber_for,
)
from omega.turn import Outbox, PipelineDeps, Turn, admit_usd, marker_context, record_audit
from omega.types import Attachment, IncomingMessage

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
        try:
            texts.append(await _heard(deps, message, transcriber, voice))
        except ProviderError as refused:  # the daily spending cap: nothing was sent
            await conclude(
                deps,
                message,
                out,
                friendly_error(refused, turn.language),
                started=started,
                kind="error",
                event="voice_refused",
                detail=str(refused)[:500],
            )
            return None
        except TranscriptionError as exc:
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


async def _heard(
    deps: PipelineDeps, message: IncomingMessage, transcriber: Transcriber, voice: Attachment
) -> str:
    """One voice note's text, its call admitted under today's spending cap and audited with
    what it cost; ProviderError (kind `spending_cap`) when the cap refuses it, before anything
    is sent; TranscriptionError when the call fails."""
    began = time.perf_counter()
    price = functools.partial(
        prices.transcription_cost,
        transcriber.model,
        transcriber.base_url,
        deps.config.limits.unknown_model_usd_per_mtok,
    )
    # With no cap nothing is estimated (genai-prices is searched on a worker thread).
    capped = deps.config.limits.daily_usd > 0
    most = await asyncio.to_thread(price, seconds=audio_seconds(voice.data)) if capped else 0.0
    try:
        hold = await admit_usd(deps, "transcription", most)
    except ProviderError as refused:
        await _audit_transcription(deps, message, transcriber.model, began, "denied", refused)
        raise
    cost: float | None = None
    try:
        heard = await transcribe(
            transcriber, voice.data, voice.name or "voice.ogg", voice.mime_type
        )
        cost = await asyncio.to_thread(_cost, price, heard, voice.data)
    except TranscriptionError as exc:
        await _audit_transcription(deps, message, transcriber.model, began, "error", exc)
        raise
    finally:  # answered, failed or cut short: its estimate goes, its cost counts till audited
        hold.settle(cost)
    await _audit_transcription(
        deps, message, transcriber.model, began, "ok", heard=heard, cost=cost
    )
    return heard.text


def _cost(price: functools.partial[float], heard: Transcript, audio: bytes) -> float:
    """What the transcription cost: by the tokens or seconds the service reported, else by
    the audio's own length."""
    seconds = heard.seconds if heard.seconds is not None else audio_seconds(audio)
    return price(
        seconds=seconds,
        input_tokens=heard.input_tokens,
        audio_tokens=heard.audio_tokens,
        output_tokens=heard.output_tokens,
    )


async def _audit_transcription(
    deps: PipelineDeps,
    message: IncomingMessage,
    model: str,
    began: float,
    status: AuditStatus,
    error: Exception | None = None,
    *,
    heard: Transcript | None = None,
    cost: float | None = None,
) -> None:
    """Every call to the transcription endpoint has its audit row: what it cost and the tokens
    it reported, or its error (`denied`: the spending cap refused it, nothing was sent)."""
    await record_audit(
        deps,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            status=status,
            provider="voice",
            model=model,
            input_tokens=heard.input_tokens if heard else 0,
            output_tokens=heard.output_tokens if heard else 0,
            cost_usd=cost,
            processing_ms=int((time.perf_counter() - began) * 1000),
            detail=str(error or "")[:500],
            event="transcription",
        ),
    )
