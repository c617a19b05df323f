"""What the pipeline, the loops and evolution share: the dependencies, the outbox, the turn (who
is answered, in which language and with which rights), store calls that never stop a reply, and
the one way to ask the provider. Nothing here imports the gateway, the loops or evolution."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any, Protocol, TypeVar

from omega.config import Config
from omega.memory.store import AuditEntry, Store
from omega.paths import OmegaPaths
from omega.prompts import Prompts
from omega.providers.base import Provider, ProviderError
from omega.schedule import resolve_timezone
from omega.skills import ProjectCatalog, SkillCatalog
from omega.turn.marker_context import MarkerContext
from omega.turn.privileges import Role, role_of, workspace_for
from omega.turn.state import RuntimeState
from omega.types import (
    Context,
    IncomingMessage,
    OutgoingMessage,
    Reply,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


class Outbox(Protocol):
    """Where the pipeline sends things: the gateway."""

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver a message on its channel."""
        ...

    async def typing(self, channel: str, target: str) -> None:
        """Show a typing indicator."""
        ...


class Responder(Protocol):
    """The pipeline's answer path (gateway.pipeline.respond), handed to the loops that answer
    on someone's behalf (the scheduler's action tasks) so they need not import the gateway."""

    async def __call__(
        self,
        deps: PipelineDeps,
        message: IncomingMessage,
        turn: Turn,
        out: Outbox,
        *,
        cause: str = ...,
        raise_errors: bool = ...,
    ) -> str | None:
        """Answer `message` for `turn` through the whole reply path; the text sent, if any."""
        ...


@dataclass
class PipelineDeps:
    """What the stages need; built once at start-up."""

    config: Config
    prompts: Prompts
    store: Store
    provider: Provider
    provider_timeout: float
    paths: OmegaPaths
    skills: SkillCatalog
    projects: ProjectCatalog
    state: RuntimeState


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


async def audit_message(deps: PipelineDeps, message: IncomingMessage, **fields: Any) -> None:
    """Audit what happened to `message`: who sent it and what it said are filled in, the rest
    (status, event, output, usage...) comes from `fields`; never raises."""
    entry = {
        "channel": message.channel,
        "sender_id": message.sender_id,
        "sender_name": message.sender_name,
        "input_text": message.text,
        **fields,
    }
    await record_audit(deps, AuditEntry(**entry))


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started` (a perf_counter reading)."""
    return int((time.perf_counter() - started) * 1000)


def person_workspace(deps: PipelineDeps, message: IncomingMessage, role: Role) -> Path:
    """The folder this person's tools and images live in (the owner's is the workspace)."""
    return workspace_for(deps.paths.workspace, role, message.channel, message.sender_id)


async def ask_provider(deps: PipelineDeps, context: Context) -> Reply:
    """One provider call bounded by the configured timeout; every failure is a ProviderError.

    Every tool call the provider reports, whatever the call was for, goes into `tool_calls`."""
    try:
        async with deps.state.provider_slots(deps.config.limits.max_concurrent_provider_calls):
            reply = await asyncio.wait_for(deps.provider.complete(context), deps.provider_timeout)
    except TimeoutError:
        raise ProviderError(
            f"{deps.provider.name} gave no answer within {deps.provider_timeout:g}s", kind="timeout"
        ) from None
    except ProviderError:
        raise
    except Exception as exc:  # a provider bug is still only a friendly message for the user
        raise ProviderError(f"{deps.provider.name} crashed: {exc!r}") from exc
    await _record_tool_calls(deps, context, reply)
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


def marker_context(
    deps: PipelineDeps, message: IncomingMessage, turn: Turn, out: Outbox, cause: str
) -> MarkerContext:
    """What markers of one reply act against, with the rights of the person answered."""
    return MarkerContext(
        store=deps.store,
        paths=deps.paths,
        config=deps.config,
        message=message,
        timezone=turn.zone,
        skills=deps.skills,
        projects=deps.projects,
        state=deps.state,
        notify=out.send,
        cause=cause,
        role=turn.role,
    )


@dataclass(frozen=True)
class Turn:
    """Who is being answered, in which language and timezone, and what is known of them."""

    facts: dict[str, str]
    language: str
    zone: tzinfo
    role: Role = "stranger"  # the rights the turn runs with (turn.privileges)


async def load_turn(deps: PipelineDeps, message: IncomingMessage) -> Turn:
    """The sender's facts, language and timezone (memory failing means empty facts)."""
    no_facts: dict[str, str] = {}
    facts = await db_call(deps, "load facts", no_facts, deps.store.facts, message.sender_id)
    return make_turn(deps, facts, role_of(deps.config, message))


def make_turn(deps: PipelineDeps, facts: dict[str, str], role: Role) -> Turn:
    """A turn from known facts: language and timezone from them, or the configured defaults."""
    return Turn(
        facts=facts,
        language=facts.get("preferred_language", "English"),
        zone=resolve_timezone(facts.get("timezone", ""), deps.config.omega.timezone),
        role=role,
    )


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
