"""Store calls that never stop a reply: a failing call is logged and the turn goes on with a
default; audit rows are written the same way, in one vocabulary (`usage_fields`,
`audit_message`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypedDict, TypeVar

from typing_extensions import Unpack

from omega.memory.audit import AuditEntry, AuditStatus
from omega.providers.base import ProviderError
from omega.turn.deps import PipelineDeps
from omega.types import IncomingMessage, Reply

log = logging.getLogger(__name__)

T = TypeVar("T")


async def db_call(
    deps: PipelineDeps, what: str, default: T, fn: Callable[..., T], *args: object
) -> T:
    """A store call on the db thread; on failure log it and carry on with `default`."""
    try:
        return await deps.store.call(fn, *args)
    except Exception:
        log.exception("%s failed; carrying on without it", what)
        return default


async def record_audit(deps: PipelineDeps, entry: AuditEntry) -> None:
    """Write an audit row; a failing audit is logged, never raised."""
    await db_call(deps, "audit", None, deps.store.audit, entry)


class UsageFields(TypedDict):
    """The audit fields a model's answer fills: who answered, its tokens and cost."""

    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cached_tokens: int  # of input_tokens, read from the provider's prompt cache


def usage_fields(answer: Reply | ProviderError | None, *, provider: str = "") -> UsageFields:
    """What a provider call fills in an audit row (`AuditEntry(..., **usage_fields(reply))`):
    a reply's usage, or what a failed call (its ProviderError from `ask_provider`) was billed
    for before it failed; with neither, only the `provider` asked is named."""
    if isinstance(answer, ProviderError):
        spent = answer.spent
        if spent is None:
            return usage_fields(None, provider=provider)
        return UsageFields(
            provider=spent.provider or provider,
            model=spent.model,
            input_tokens=spent.usage.input_tokens,
            output_tokens=spent.usage.output_tokens,
            cost_usd=spent.usage.cost_usd,
            cached_tokens=spent.usage.cached_tokens,
        )
    if answer is None:
        return UsageFields(
            provider=provider,
            model="",
            input_tokens=0,
            output_tokens=0,
            cost_usd=None,
            cached_tokens=0,
        )
    return UsageFields(
        provider=answer.provider,
        model=answer.model,
        input_tokens=answer.usage.input_tokens,
        output_tokens=answer.usage.output_tokens,
        cost_usd=answer.usage.cost_usd,
        cached_tokens=answer.usage.cached_tokens,
    )


class MessageFields(TypedDict, total=False):
    """What an audit row of a message says besides who sent it and what (AuditEntry's own
    fields)."""

    event: str
    detail: str
    output_text: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cached_tokens: int
    processing_ms: int


async def audit_message(
    deps: PipelineDeps,
    message: IncomingMessage,
    *,
    status: AuditStatus,
    input_text: str | None = None,
    **fields: Unpack[MessageFields],
) -> None:
    """Audit what happened to `message` (`message_entry`'s row); never raises."""
    await record_audit(deps, message_entry(message, status=status, input_text=input_text, **fields))


def message_entry(
    message: IncomingMessage,
    *,
    status: AuditStatus,
    input_text: str | None = None,
    **fields: Unpack[MessageFields],
) -> AuditEntry:
    """The audit row of what happened to `message`: who sent it and (unless `input_text` says
    otherwise) what it said are filled in, the rest are AuditEntry's own fields."""
    return AuditEntry(
        channel=message.channel,
        sender_id=message.sender_id,
        sender_name=message.sender_name,
        input_text=message.text if input_text is None else input_text,
        status=status,
        **fields,
    )


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started` (a perf_counter reading)."""
    return int((time.perf_counter() - started) * 1000)
