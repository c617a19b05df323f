"""pydantic-ai toolset wrappers: run Omega's tools with the run's deps, record every call.

This module imports pydantic-ai at import time; import it only where a run is being built.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from omega.errors import OmegaError
from omega.logs import redact
from omega.tools.context import (
    FailedOutput,
    ToolDeps,
    ToolError,
    reset_current_deps,
    set_current_deps,
)
from omega.types import ToolCall

log = logging.getLogger(__name__)

PREVIEW_CHARS = 300


@dataclass
class RegistryToolset(WrapperToolset[ToolDeps]):
    """Omega's function tools: deps made current for the call, ToolError told to the model."""

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[ToolDeps],
        tool: ToolsetTool[ToolDeps],
    ) -> Any:
        deps = ctx.deps if isinstance(ctx.deps, ToolDeps) else ToolDeps()
        token = set_current_deps(replace(deps, call_id=ctx.tool_call_id or ""))
        try:
            return await super().call_tool(name, tool_args, ctx, tool)
        except ToolError as exc:
            raise ToolFailed(str(exc)) from exc
        except OSError as exc:  # a file or process problem is the model's to hear about
            raise ToolFailed(f"{type(exc).__name__}: {exc}") from exc
        finally:
            reset_current_deps(token)


@dataclass
class RecordingToolset(WrapperToolset[Any]):
    """Times and records every call it runs, turns crashes into failed tool results the model
    sees, stops a call after `timeout_secs` (a failed result too, so the model can still
    answer in time), and refuses calls after `max_rounds` model requests so the model has to
    answer. A call cut short by the whole answer's end (cancelled) is recorded as failed.
    One model response may ask for at most `max_calls_per_round` calls; those past it are
    refused unrun (a failed result each), so one reply cannot start hundreds of commands at
    once nor send their results back in every later request (bench/tool_round.py)."""

    max_rounds: int = 6
    timeout_secs: float | None = None
    max_calls_per_round: int | None = None
    records: dict[str, ToolCall] = field(default_factory=dict)
    # Calls asked for so far by each model response (its round): counted when a call starts,
    # before any await, so the calls of one round run concurrently still count one by one.
    _asked: dict[int, int] = field(default_factory=dict)

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[Any],
        tool: ToolsetTool[Any],
    ) -> Any:
        call_id = ctx.tool_call_id or f"{name}#{len(self.records)}"
        started = time.perf_counter()
        round_ = self.round_of(ctx)
        asked = self._asked[round_] = self._asked.get(round_, 0) + 1
        try:
            if round_ > self.max_rounds:
                raise ToolFailed(
                    f"tool-call limit reached ({self.max_rounds} rounds); answer with what you have"
                )
            if self.max_calls_per_round is not None and asked > self.max_calls_per_round:
                raise ToolFailed(
                    f"tool-call limit reached ({self.max_calls_per_round} calls in one round): "
                    "this call did not run; ask for fewer at once, or answer with what you have"
                )
            result = await self._within_deadline(super().call_tool(name, tool_args, ctx, tool))
        except (CallDeferred, ApprovalRequired):
            raise  # control flow, not failures
        except (ToolFailed, ModelRetry) as exc:
            self._record(call_id, name, tool_args, started, error=exc.message)
            raise
        except _ToolTimeoutError:
            message = f"timed out after {self.timeout_secs:g}s; the tool was stopped"
            self._record(call_id, name, tool_args, started, error=message)
            raise ToolFailed(message) from None
        except asyncio.CancelledError:  # the answer ran out of time (or is being stopped)
            self._record(call_id, name, tool_args, started, error="interrupted: no result")
            raise
        except Exception as exc:  # a crashing tool is reported to the model; the turn goes on
            raise ToolFailed(self._crashed(call_id, name, tool_args, started, exc)) from exc
        if isinstance(result, FailedOutput):  # answered, but what it ran failed
            self._record(call_id, name, tool_args, started, error=str(result))
            return str(result)
        self._record(call_id, name, tool_args, started, result=result)
        return result

    @staticmethod
    def round_of(ctx: RunContext[Any]) -> int:
        """Which model response (1 for the first) asked for the call being run: the responses
        the answer has had so far, a first one got outside the agent (providers/direct.py,
        counted in the usage the agent goes on with) included; the agent's own step count
        starts again from the response it continues from."""
        return ctx.usage.requests

    async def definitions(self, ctx: RunContext[Any]) -> list[ToolDefinition] | None:
        """The tools offered to the model at `ctx`'s step, as the agent's tool manager gets
        them (the run's toolset, then the step's, then its tools); None when one is more than a
        plain function tool (deferred, native, of a kind): only the agent offers those."""
        toolset = await (await self.for_run(ctx)).for_run_step(ctx)
        defs = [tool.tool_def for tool in (await toolset.get_tools(ctx)).values()]
        return defs if all(_plain(tool) for tool in defs) else None

    async def _within_deadline(self, call: Coroutine[Any, Any, Any]) -> Any:
        """The call's result, or _ToolTimeoutError once `timeout_secs` have passed. The call is then
        cancelled but not waited for: an MCP server busy with it, or a function on a thread,
        may take its time to stop, and the model should not wait for that."""
        task = asyncio.ensure_future(call)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout_secs)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not done:
            task.cancel()
            task.add_done_callback(_forget)
            raise _ToolTimeoutError
        return task.result()

    def _crashed(
        self, call_id: str, name: str, arguments: dict[str, Any], started: float, exc: Exception
    ) -> str:
        """Record a tool that raised; the message the model is told."""
        log.warning("tool %s crashed: %s", name, exc, exc_info=True)
        message = f"{type(exc).__name__}: {exc}"
        self._record(call_id, name, arguments, started, error=message)
        return message

    def recorded(self) -> tuple[ToolCall, ...]:
        """The calls run so far, finished or cut short (for an answer that failed part-way)."""
        return tuple(self.records.values())

    def _record(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        started: float,
        *,
        result: Any = None,
        error: str = "",
    ) -> None:
        self.records[call_id] = ToolCall(
            name=name,
            arguments=dict(arguments),
            ok=not error,
            result_preview="" if error else preview(result),
            duration_ms=int((time.perf_counter() - started) * 1000),
            error=redact(error)[:PREVIEW_CHARS],  # redacted whole, then cut
        )

    def tool_calls(self, messages: Sequence[ModelMessage]) -> tuple[ToolCall, ...]:
        """Every tool call the model made in `messages`, in order: those this wrapper ran, and
        those refused before running (unknown tool, invalid arguments) from their results."""
        returns: dict[str, Any] = {}
        for message in messages:
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if getattr(part, "part_kind", "") in ("tool-return", "retry-prompt"):
                        returns[str(getattr(part, "tool_call_id", ""))] = part
        calls: list[ToolCall] = []
        for message in messages:
            if not isinstance(message, ModelResponse):
                continue
            for call in message.tool_calls:
                recorded = self.records.get(call.tool_call_id)
                if recorded is not None:
                    calls.append(recorded)
                    continue
                answer = returns.get(call.tool_call_id)
                if answer is None:
                    continue  # the run ended before this call was answered
                calls.append(
                    ToolCall(
                        name=call.tool_name,
                        arguments=call.args_as_dict(),
                        ok=getattr(answer, "outcome", "failed") == "success",
                        error=preview(getattr(answer, "content", "")),
                    )
                )
        return tuple(calls)


class _ToolTimeoutError(OmegaError):
    """A tool call outlasted the toolset's `timeout_secs`."""


def _plain(tool: ToolDefinition) -> bool:
    """Whether a tool is an ordinary function the model may call, with nothing the agent adds."""
    return (
        tool.kind == "function"
        and not tool.defer_loading
        and tool.with_native is None
        and getattr(tool, "unless_native", None) is None
        and getattr(tool, "tool_kind", None) is None
        and tool.capability_id is None
    )


def _forget(task: asyncio.Future[Any]) -> None:
    """Retrieve a stopped call's outcome so that nothing is reported about it later."""
    if not task.cancelled():
        task.exception()


def preview(value: Any) -> str:
    """A short one-string view of a tool result for the record: redacted whole, then cut (a
    secret the cut would split is still hidden)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    text = redact(text)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 3] + "..."
