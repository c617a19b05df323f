"""The one way to ask the provider: bounded by the timeout and the provider's adaptive
concurrency limit (providers/limiter.py), every failure a ProviderError, every tool call
recorded; and which model a provider uses for what."""

from __future__ import annotations

import asyncio
import functools
import logging
import time

from omega.config import Config
from omega.memory.audit import AuditEntry
from omega.providers.base import LOAD_KINDS, ProviderError
from omega.turn.deps import PipelineDeps
from omega.turn.records import db_call, elapsed_ms, record_audit, usage_fields
from omega.types import Context, Reply

log = logging.getLogger(__name__)


async def ask_provider(deps: PipelineDeps, context: Context, *, audit_as: str = "") -> Reply:
    """One provider call bounded by the configured timeout; every failure is a ProviderError.

    Every tool call the provider reports, whatever the call was for, goes into `tool_calls`.
    With `audit_as`, the call gets an audit row of its own (that event, its tokens and cost, or
    its error): for background calls (summaries, facts, plan summaries, introspection) whose
    spending no other row records."""
    started = time.perf_counter()
    try:
        reply = await _complete(deps, context)
    except ProviderError as exc:
        if audit_as:
            await _audit_call(deps, context, audit_as, started, None, str(exc))
        raise
    if audit_as:
        await _audit_call(deps, context, audit_as, started, reply, "")
    await _record_tool_calls(deps, context, reply)
    return reply


async def _audit_call(
    deps: PipelineDeps,
    context: Context,
    event: str,
    started: float,
    reply: Reply | None,
    error: str,
) -> None:
    """The audit row of one background provider call (who it was for, if anyone)."""
    await record_audit(
        deps,
        AuditEntry(
            channel=context.channel or "omega",
            sender_id=context.sender_id,
            status="error" if error else "ok",
            event=event,
            detail=error[:2000],
            processing_ms=elapsed_ms(started),
            **usage_fields(reply, provider=deps.provider.name),
        ),
    )


async def _complete(deps: PipelineDeps, context: Context) -> Reply:
    """The call itself, within the provider's limit and the timeout."""
    limiter = deps.state.provider_limiter(
        deps.provider.name, deps.config.limits.max_concurrent_provider_calls
    )
    try:
        async with limiter.call(context.sender_id) as ticket:
            try:
                reply = await asyncio.wait_for(
                    deps.provider.complete(context), deps.provider_timeout
                )
            except ProviderError as exc:
                if exc.kind in LOAD_KINDS:  # the provider asks for fewer calls at once
                    ticket.overloaded(exc.retry_after)
                raise
            ticket.ok()
    except TimeoutError:
        raise ProviderError(
            f"{deps.provider.name} gave no answer within {deps.provider_timeout:g}s", kind="timeout"
        ) from None
    except ProviderError:
        raise
    except Exception as exc:  # a provider bug is still only a friendly message for the user
        raise ProviderError(f"{deps.provider.name} crashed: {exc!r}") from exc
    return reply


async def _record_tool_calls(deps: PipelineDeps, context: Context, reply: Reply) -> None:
    """Every tool call the provider made goes into the tool_calls table."""
    if not reply.tool_calls:
        return
    if not context.use_tools:
        log.warning("%s called tools in a call that had none to offer", reply.provider)
    conversation = None
    if context.sender_id:
        conversation = await db_call(
            deps,
            "find conversation",
            None,
            deps.store.active_conversation_id,
            context.channel,
            context.sender_id,
        )
    record = functools.partial(
        deps.store.record_tool_calls,
        agent=reply.provider,
        channel=context.channel,
        sender_id=context.sender_id,
        conversation_id=conversation or "",
    )
    await db_call(deps, "record tool calls", 0, record, reply.tool_calls)


def models_for(provider: str, config: Config) -> tuple[str | None, str | None]:
    """(fast, complex) model names of a provider: direct answers vs multi-step plans."""
    p = config.provider
    if provider == "claude-code":
        return p.claude_code.model, p.claude_code.model_complex or p.claude_code.model
    section = {
        "anthropic": p.anthropic,
        "openai": p.openai,
        "ollama": p.ollama,
        "openrouter": p.openrouter,
        "gemini": p.gemini,
    }.get(provider)
    if section is None:
        return None, None
    return section.model or None, (section.model_complex or section.model) or None
