"""handle_message: the ordered stages one message goes through."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from omega import i18n
from omega.config import Config
from omega.memory.context import build_context
from omega.memory.store import AuditEntry, Store
from omega.prompts import Prompts
from omega.providers.base import Provider, ProviderError
from omega.types import Context, IncomingMessage, OutgoingMessage, Reply

log = logging.getLogger(__name__)

SendFn = Callable[[OutgoingMessage], Awaitable[None]]


@dataclass
class PipelineDeps:
    """What the stages need; built once at start-up."""

    config: Config
    prompts: Prompts
    store: Store
    provider: Provider
    provider_timeout: float


def friendly_error(error: ProviderError | Exception, language: str = "English") -> str:
    """The message a user sees instead of a raw provider error."""
    kind = error.kind if isinstance(error, ProviderError) else "error"
    key = {
        "timeout": "error_timeout",
        "unavailable": "error_unavailable",
        "rate_limit": "error_rate_limit",
    }.get(kind, "error_generic")
    return i18n.message(key, language)


async def _context(deps: PipelineDeps, message: IncomingMessage) -> Context:
    try:
        return await deps.store.call(build_context, deps.store, deps.prompts, deps.config, message)
    except Exception:  # memory failing must not stop the reply
        log.exception("context build failed; answering without history")
        return build_context(None, deps.prompts, deps.config, message)


async def _ask_provider(deps: PipelineDeps, context: Context) -> Reply:
    try:
        return await asyncio.wait_for(deps.provider.complete(context), deps.provider_timeout)
    except TimeoutError:
        raise ProviderError(
            f"{deps.provider.name} gave no answer within {deps.provider_timeout:g}s", kind="timeout"
        ) from None
    except ProviderError:
        raise
    except Exception as exc:  # a provider bug is still only a friendly message for the user
        raise ProviderError(f"{deps.provider.name} crashed: {exc!r}") from exc


async def _safely(what: str, store: Store, fn: Callable[..., object], *args: object) -> None:
    """Run a store write on the db thread; log and carry on if it fails."""
    try:
        await store.call(fn, *args)
    except Exception:
        log.exception("%s failed; the reply still goes out", what)


async def handle_message(deps: PipelineDeps, message: IncomingMessage, send: SendFn) -> None:
    """Answer one message: context -> provider -> store -> audit -> send."""
    started = time.perf_counter()
    context = await _context(deps, message)
    try:
        reply = await _ask_provider(deps, context)
    except ProviderError as exc:
        log.error("provider error for %s/%s: %s", message.channel, message.sender_id, exc)
        text = friendly_error(exc)
        await _safely(
            "audit",
            deps.store,
            deps.store.audit,
            AuditEntry(
                channel=message.channel,
                sender_id=message.sender_id,
                sender_name=message.sender_name,
                input_text=message.text,
                output_text=text,
                provider=deps.provider.name,
                status="error",
                detail=str(exc)[:2000],
                processing_ms=int((time.perf_counter() - started) * 1000),
            ),
        )
        await send(OutgoingMessage(message.channel, message.target, text, kind="error"))
        return
    text = reply.text or "…"
    await _safely(
        "store exchange",
        deps.store,
        deps.store.store_exchange,
        message.channel,
        message.sender_id,
        message.text,
        text,
    )
    await _safely(
        "audit",
        deps.store,
        deps.store.audit,
        AuditEntry(
            channel=message.channel,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            input_text=message.text,
            output_text=text,
            provider=reply.provider,
            model=reply.model,
            input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens,
            cost_usd=reply.usage.cost_usd,
            status="ok",
            processing_ms=int((time.perf_counter() - started) * 1000),
        ),
    )
    await send(OutgoingMessage(message.channel, message.target, text, kind="reply"))
