"""The one way to ask the provider: within today's spending cap (turn/spend.py), bounded by the
timeout and the provider's adaptive concurrency limit (providers/limiter.py), every failure a
ProviderError, every tool call recorded and every billed token costed (those of a call that
failed part-way too); and which model a provider uses for what."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from omega.config import Config
from omega.memory.audit import AuditEntry, AuditStatus
from omega.providers.base import Provider, ProviderError, Spent, salvaged
from omega.providers.limiter import LOAD_RETRIES, MAX_RETRY_AFTER_SECS, limited_call
from omega.turn.deps import PipelineDeps
from omega.turn.records import db_call, elapsed_ms, record_audit, usage_fields
from omega.turn.spend import Hold, admit, costed, costed_spent
from omega.types import Context, Reply, ToolCall

log = logging.getLogger(__name__)


async def ask_provider(
    deps: PipelineDeps, context: Context, *, audit_as: str = "", purpose: str = ""
) -> Reply:
    """One provider call within today's spending cap, bounded by the configured timeout;
    every failure (a refusal by the cap too) is a ProviderError.

    `purpose` is the audit event the call's spending is counted under (memory.audit.CALL_KINDS:
    "classify", "heartbeat", ...); by default `audit_as`, else "exchange" (a reply). Every tool
    call the provider reports, whatever the call was for, goes into `tool_calls`. With
    `audit_as`, the call gets an audit row of its own (that event, its tokens and cost, or its
    error): for calls whose spending no other row records; without it the caller audits, with
    `usage_fields(reply)` or, when it failed, `usage_fields(error)`: a failed call's error
    carries what it was billed for before it failed (`error.spent`). A fallback member that
    failed after being billed, before another answered, gets an audit row here."""
    event = purpose or audit_as or "exchange"
    try:
        hold = await admit(deps, event, context)  # its estimate held against the cap
    except ProviderError as refused:
        if audit_as:
            await _audit_call(deps, context, audit_as, time.perf_counter(), None, refused)
        raise
    try:
        return await _ask(deps, context, audit_as, event, hold)
    finally:
        hold.settle()  # cut short (cancelled) before it settled: the estimate goes


async def ask_probe(
    deps: PipelineDeps, member: Provider, context: Context, call: Callable[[], Awaitable[Reply]]
) -> Reply:
    """A fallback chain's probe of `member`, a member that was down (providers.fallback
    `probe_via`; `call` makes it): admitted under today's spending cap as background work
    (event `probe`; refused, it is not made and the cap's ProviderError is raised), and audited
    with its cost once it answered, or failed after being billed. A probe refused, or failed
    unbilled, has no row: one is due every `breaker_secs` while the member is down."""
    hold = await admit(deps, "probe", context, member.name)
    started = time.perf_counter()
    try:
        with salvaged() as cut_short:  # its own: not the reply's whose call started it
            try:
                reply = costed(deps, await call())
            except Exception:
                spent = costed_spent(deps, cut_short.spent)
                if spent is not None:
                    hold.settle(spent.usage.cost_usd)
                    error = ProviderError(f"the probe of {member.name} failed after being billed")
                    error.spent = spent
                    await _audit_call(deps, context, "probe", started, None, error)
                raise
        hold.settle(reply.usage.cost_usd)
        await _audit_call(deps, context, "probe", started, reply, None)
        return reply
    finally:
        hold.settle()  # failed unbilled, or cut short: the estimate goes


async def _ask(
    deps: PipelineDeps, context: Context, audit_as: str, event: str, hold: Hold
) -> Reply:
    """`ask_provider` once the call may spend: the call, its costs settled with the cap (each
    counted until its audit row, here or the caller's, is written), its rows and tool calls."""
    started = time.perf_counter()
    with salvaged() as cut_short:  # what a call (or fallback member) that failed left
        try:
            reply = costed(deps, await _complete(deps, context, hold, event))
        except ProviderError as exc:
            exc.spent = exc.spent or costed_spent(deps, cut_short.spent)
            hold.settle(exc.spent.usage.cost_usd if exc.spent else None)
            if audit_as:
                await _audit_call(deps, context, audit_as, started, None, exc)
            await _record_tool_calls(deps, context, deps.provider.name, cut_short.tool_calls)
            raise
    # A fallback member billed before it failed has an audit row of its own.
    members = [costed_spent(deps, [spent]) for spent in cut_short.spent]
    hold.settle(reply.usage.cost_usd, *(m.usage.cost_usd for m in members if m is not None))
    if audit_as:
        await _audit_call(deps, context, audit_as, started, reply, None)
    for member in members:
        await _audit_spent(deps, context, event, member, reply)
    # A fallback member that failed after running tools, then the member that answered.
    await _record_tool_calls(deps, context, deps.provider.name, cut_short.tool_calls)
    await _record_tool_calls(deps, context, reply.provider, reply.tool_calls)
    return reply


async def _audit_spent(
    deps: PipelineDeps, context: Context, event: str, spent: Spent | None, reply: Reply
) -> None:
    """The audit row of a fallback member that failed after being billed (its tokens and cost
    count like any call's), before `reply`'s member answered."""
    if spent is None:
        return
    error = ProviderError(f"{spent.provider} failed after being billed; {reply.provider} answered")
    error.spent = spent
    await record_audit(
        deps,
        AuditEntry(
            channel=context.channel or "omega",
            sender_id=context.sender_id,
            status="error",
            event=event,
            detail=str(error),
            **usage_fields(error, provider=spent.provider),
        ),
    )


async def _audit_call(
    deps: PipelineDeps,
    context: Context,
    event: str,
    started: float,
    reply: Reply | None,
    error: ProviderError | None,
) -> None:
    """The audit row of one provider call (who it was for, if anyone): its usage, or its error
    (`denied` when the spending cap refused it)."""
    status: AuditStatus = "ok"
    if error is not None:
        status = "denied" if error.kind == "spending_cap" else "error"
    await record_audit(
        deps,
        AuditEntry(
            channel=context.channel or "omega",
            sender_id=context.sender_id,
            status=status,
            event=event,
            detail=str(error or "")[:2000],
            processing_ms=elapsed_ms(started),
            **usage_fields(reply or error, provider=deps.provider.name),
        ),
    )


async def _complete(deps: PipelineDeps, context: Context, hold: Hold, event: str) -> Reply:
    """The call itself, within the limit of the provider actually called and the timeout (a
    fallback chain limits each member it calls with that member's limiter); under a spending
    cap, checked again once its limiter lets it through (not a chain's: its members queue)."""
    provider = deps.provider
    try:
        if getattr(provider, "limits_members", False):
            reply = await asyncio.wait_for(provider.complete(context), _chain_bound(deps))
        else:
            limiter = deps.state.provider_limiter(
                provider.name, deps.config.limits.max_concurrent_provider_calls
            )
            asked: Provider = _Rechecked(provider, deps, hold, event) if hold.capped else provider
            reply = await limited_call(limiter, asked, context, attempt_secs=deps.provider_timeout)
    except TimeoutError:
        raise ProviderError(
            f"{provider.name} gave no answer within {deps.provider_timeout:g}s", kind="timeout"
        ) from None
    except ProviderError:
        raise
    except Exception as exc:  # a provider bug is still only a friendly message for the user
        raise ProviderError(f"{provider.name} crashed: {exc!r}") from exc
    return reply


class _Rechecked:
    """The provider, asked only once the call may still spend (`Hold.recheck`): what it waited
    in its limiter's queue for, other calls may have spent."""

    def __init__(self, provider: Provider, deps: PipelineDeps, hold: Hold, event: str) -> None:
        self._provider = provider
        self._deps = deps
        self._hold = hold
        self._event = event

    @property
    def name(self) -> str:
        """The provider's name."""
        return self._provider.name

    def availability(self) -> tuple[bool, str]:
        """The provider's availability."""
        return self._provider.availability()

    async def prepare(self) -> None:
        """The provider's preparation."""
        await self._provider.prepare()

    async def complete(self, context: Context) -> Reply:
        """Check the cap again, then ask the provider."""
        await self._hold.recheck(self._deps, self._event)
        return await self._provider.complete(context)


def _chain_bound(deps: PipelineDeps) -> float:
    """The longest a chain's answer may take: its members' timeouts, plus the waits for a
    `retry-after` its last member may honour (the members bound each of their attempts)."""
    return deps.provider_timeout + LOAD_RETRIES * MAX_RETRY_AFTER_SECS


async def _record_tool_calls(
    deps: PipelineDeps, context: Context, agent: str, calls: Sequence[ToolCall]
) -> None:
    """Every tool call the provider made goes into the tool_calls table; one answering a person
    is recorded in the conversation their exchange is kept in (opened now on a first turn), so
    later turns, whose history carries what it read, know it (turn.effects.reads_in); one made
    in a group room is marked the room's."""
    if not calls:
        return
    if not context.use_tools:
        log.warning("%s called tools in a call that had none to offer", agent)
    conversation = None
    if context.sender_id:
        find = (
            functools.partial(deps.store.active_conversation, room=context.group)
            if context.use_tools
            else deps.store.active_conversation_id
        )
        conversation = await db_call(
            deps,
            "find conversation",
            None,
            find,
            context.channel,
            context.sender_id,
            context.thread,
        )
    record = functools.partial(
        deps.store.record_tool_calls,
        agent=agent,
        channel=context.channel,
        sender_id=context.sender_id,
        conversation_id=conversation or "",
        room=context.group,
    )
    await db_call(deps, "record tool calls", 0, record, calls)


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
