"""A skill's MCP server watched while a call uses it: one that exits or stops answering is
restarted with exponential backoff, and its tools keep working when it comes back.

A server lives for one call (the API tool loop's run). It is checked when it is used, and costs
a healthy server nothing: before a tool call, whether its connection has already closed (a local
look, no request); during a call slower than PROBE_AFTER_SECS, whether it still lists its tools
within PROBE_TIMEOUT_SECS (a slow tool is fine: the server answers beside it), both shortened
to a quarter of the tool loop's deadline for one call when that is shorter. A server that
exited is restarted, then the call is made; one that exits during a call is restarted, and the
call repeated only when the tool says it is read-only or idempotent, else the model hears that
it may not have finished. One that stops answering has that call failed, and is restarted.
Restarts are bounded (RESTART_ATTEMPTS, waits doubling from BACKOFF_FIRST_SECS up to
BACKOFF_MAX_SECS); after the last the server is "down" for the rest of the call, and its tools
fail at once with the reason. Each trouble is recorded (mcp_health) for status and reported once
to the owner. This module imports pydantic-ai at import time; import it only where a run is
being built.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import anyio
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from omega.errors import OmegaError
from omega.tools.mcp_health import (
    probe_server,
    record_attempt,
    record_down,
    record_recovered,
    record_trouble,
)

log = logging.getLogger(__name__)

PROBE_AFTER_SECS = 10.0  # a call slower than this has its server probed, and again as often
PROBE_TIMEOUT_SECS = 5.0  # a server that does not list its tools within this stopped answering
PROBE_SHARE = 0.25  # each at most this share of the tool deadline: a hang is found before it
RESTART_ATTEMPTS = 4
BACKOFF_FIRST_SECS = 0.5  # the wait after the first failed restart; doubled after each
BACKOFF_MAX_SECS = 8.0
EXITED = "it exited during use"
STOPPED_ANSWERING = "it stopped answering (no answer to a liveness probe within {secs:g} s)"


class _StoppedAnsweringError(OmegaError):
    """The server did not answer the liveness probe during a call."""


@dataclass
class ServerWatch:
    """What every copy of one server's watched toolset shares (pydantic-ai copies wrappers):
    the server's toolset now (a restart makes a new one with `make`), how often it is
    entered, its generation, the restart under way, its tools as last listed."""

    make: Callable[[], MCPToolset[Any]] = field(repr=False)
    name: str
    home: Path
    argv: list[str] = field(repr=False)
    env: dict[str, str] = field(repr=False)  # may hold a secret the skill hands its server
    cwd: str
    deadline: float | None = None  # how long the tool loop lets one call run
    server: MCPToolset[Any] = field(init=False, repr=False)
    entered: int = 0
    live: bool = False  # the server's session is open
    generation: int = 0  # +1 on every restart that worked
    restart: asyncio.Task[None] | None = None
    down: str = ""  # why the restarts failed: its tools fail at once
    tools: dict[str, ToolsetTool[Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.server = self.make()

    def probe_times(self) -> tuple[float, float]:
        """How long a call runs before its server is probed, and how long the probe waits."""
        if self.deadline is None:
            return PROBE_AFTER_SECS, PROBE_TIMEOUT_SECS
        share = self.deadline * PROBE_SHARE
        return min(PROBE_AFTER_SECS, share), min(PROBE_TIMEOUT_SECS, share)


@dataclass
class WatchedToolset(WrapperToolset[Any]):
    """An MCP server's toolset that restarts the server when it exits or stops answering.
    `wrapped` is the first server's toolset; calls go to `watch.server`, the one running now."""

    watch: ServerWatch = field(kw_only=True, repr=False)

    async def __aenter__(self) -> Self:
        watch = self.watch
        watch.entered += 1
        if watch.entered == 1:
            try:
                await watch.server.__aenter__()
            except BaseException:
                watch.entered -= 1
                raise
            watch.live = True
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        watch = self.watch
        watch.entered -= 1
        if watch.entered > 0:
            return None
        restart, watch.restart = watch.restart, None
        if restart is not None and not restart.done():
            restart.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await restart
        if watch.live:
            watch.live = False
            await watch.server.__aexit__(*args)
            if watch.generation:  # entered by a restart's task: make sure its process ends
                await _close(watch.server)
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The server's tools; while it is being restarted or is down, those it listed last
        (a call to one then waits for the restart, or hears that it is down)."""
        watch = self.watch
        if watch.down or (watch.restart is not None and not watch.restart.done()):
            return dict(watch.tools)
        try:
            watch.tools = await watch.server.get_tools(ctx)
        except Exception as exc:
            if not connection_closed(exc) or not watch.tools:
                raise
        return dict(watch.tools)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        watch = self.watch
        if watch.restart is not None and not watch.restart.done():
            await self._recover("")  # another call is restarting it: wait for that
        elif not watch.down and _session_closed(watch.server):
            await self._recover(EXITED)  # gone before this call: restart, then call
        if watch.down:
            raise ToolFailed(f"the MCP server {watch.name} is down: {watch.down}")
        generation = watch.generation
        try:
            return await self._answered(watch.server.call_tool(name, tool_args, ctx, tool))
        except _StoppedAnsweringError as exc:
            await self._recover(str(exc), generation)
            raise ToolFailed(
                f"the MCP server {watch.name}: {exc}; it was restarted and this call did not finish"
            ) from None
        except Exception as exc:
            if not connection_closed(exc):
                raise
            await self._recover(EXITED, generation)
        if safe_to_repeat(tool):
            return await self._answered(watch.server.call_tool(name, tool_args, ctx, tool))
        raise ToolFailed(
            f"the MCP server {watch.name} exited during this call and was restarted: the call "
            "may not have finished; call it again only if that is safe"
        )

    async def _answered(self, call: Coroutine[Any, Any, Any]) -> Any:
        """The call's result; _StoppedAnsweringError when, while it runs, the server stops
        listing its tools in time (see ServerWatch.probe_times)."""
        after, wait = self.watch.probe_times()
        task = asyncio.ensure_future(call)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=after)
                if done:
                    return task.result()
                if not await self._answers(wait) and not task.done():
                    task.cancel()
                    task.add_done_callback(_forget)
                    raise _StoppedAnsweringError(STOPPED_ANSWERING.format(secs=wait))
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def _answers(self, wait: float) -> bool:
        """Whether the server answers a cheap request within `wait` seconds (an error is an
        answer too)."""
        try:
            await asyncio.wait_for(self.watch.server.client.list_tools(), wait)
        except TimeoutError:
            return False
        except Exception:  # a closed connection: the call itself ends with it
            return True
        return True

    async def _recover(self, reason: str, generation: int | None = None) -> None:
        """Restart the server for `reason`, unless a restart is under way (then wait for it)
        or one already replaced the session the caller used (`generation`). The restart is
        not the caller's: a call that gives up waiting leaves it running for the next."""
        watch = self.watch
        idle = watch.restart is None or watch.restart.done()
        if idle and reason and (generation is None or generation == watch.generation):
            watch.restart = asyncio.ensure_future(self._restart(reason))
        if watch.restart is not None and not watch.restart.done():
            await asyncio.shield(watch.restart)
        if watch.down:
            raise ToolFailed(f"the MCP server {watch.name} is down: {watch.down}")

    async def _restart(self, reason: str) -> None:
        """End what is left of the server and start a new one, with backoff between tries."""
        watch = self.watch
        record_trouble(watch.home, watch.name, reason, RESTART_ATTEMPTS)
        try:
            if watch.live:  # calls in flight hold it open: it is closed, not just left
                watch.live = False
                await _close(watch.server)
            delay, error = BACKOFF_FIRST_SECS, ""
            for attempt in range(1, RESTART_ATTEMPTS + 1):
                record_attempt(watch.home, watch.name, attempt)
                server = watch.make()
                try:
                    await server.__aenter__()
                except Exception as exc:  # it does not start (yet): wait, then try again
                    error = str(exc) or type(exc).__name__
                    if attempt < RESTART_ATTEMPTS:
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, BACKOFF_MAX_SECS)
                    continue
                watch.server, watch.live = server, True
                watch.generation += 1
                record_recovered(watch.home, watch.name, attempt)
                return
            why = await probe_server(watch.argv, watch.env, watch.cwd)
            watch.down = why or error or reason
        except asyncio.CancelledError:
            watch.down = f"{reason}; the call ended while it was being restarted"
            record_down(watch.home, watch.name, watch.down)
            raise
        record_down(watch.home, watch.name, watch.down)


async def _close(server: MCPToolset[Any]) -> None:
    """End a server's session and process whoever still holds it (a dead or hung server ends
    too: the SDK closes its stdin, then signals it, each step bounded)."""
    with contextlib.suppress(Exception):
        await server.client.close()  # type: ignore[no-untyped-call]


def _session_closed(server: MCPToolset[Any]) -> bool:
    """Whether the server's connection has closed (its process ended): read from the stdio
    transport's own state, without a request. False when that cannot be told."""
    dead = getattr(getattr(server.client, "transport", None), "_is_session_dead", None)
    try:
        return bool(dead()) if callable(dead) else False
    except Exception:
        return False


def connection_closed(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) says the server's connection closed."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, MCPError) and current.code == CONNECTION_CLOSED:
            return True
        if isinstance(current, anyio.ClosedResourceError | anyio.BrokenResourceError):
            return True
        current = current.__cause__ or current.__context__
    return False


def safe_to_repeat(tool: ToolsetTool[Any]) -> bool:
    """Whether the tool says a second call does no harm (MCP's readOnly/idempotent hints)."""
    annotations = (tool.tool_def.metadata or {}).get("annotations") or {}
    return bool(annotations.get("readOnlyHint") or annotations.get("idempotentHint"))


def _forget(task: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned call's outcome so that nothing is reported about it later."""
    if not task.cancelled():
        task.exception()
