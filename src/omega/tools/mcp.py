"""The stdio MCP servers a matching skill declares, as pydantic-ai toolsets for one call.

The tool loop's servers are watched while the call uses them (mcp_watch): one that exits or
stops answering is restarted with backoff. Each server's tools are prefixed with its name
(`calc` + `add` -> `calc_add`), so two servers never offer the model the same tool name.
Servers start with the MCP SDK's minimal inherited environment plus what the skill declares,
so Omega's credentials do not reach them, and run under the OS sandbox like every command the
model can drive. The MCP SDK is the `mcp` extra (issue 41): without it a skill's servers are
recorded as not started, with the command that installs it.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths, default_home
from omega.sandbox import Sandbox
from omega.sandbox.servers import server_environment
from omega.tools.home_guard import guarded
from omega.tools.mcp_health import mark_running, mark_stopped, probe_server, record_failure
from omega.types import McpServer

if TYPE_CHECKING:
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.toolsets import AbstractToolset

log = logging.getLogger(__name__)

MCP_INIT_TIMEOUT_SECS = 30.0
MCP_INSTALL = "pip install 'omega-agent[mcp]'"
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_-]+")


def tool_prefix(name: str, taken: set[str]) -> str:
    """A prefix for a server's tools that is a valid tool-name part and not yet in `taken`."""
    base = _UNSAFE_RE.sub("_", name).strip("_")[:32] or "mcp"
    prefix, n = base, 2
    while prefix in taken:
        prefix, n = f"{base}{n}", n + 1
    taken.add(prefix)
    return prefix


@dataclass(frozen=True)
class Launch:
    """How one server is started: the sandboxed argv, its environment and folder."""

    server: McpServer
    argv: list[str]
    env: dict[str, str]
    cwd: str


def mcp_missing() -> str:
    """Why no MCP server can start here (the MCP SDK and pydantic-ai's client are the `mcp`
    extra); empty when they are installed."""
    for module in ("mcp", "fastmcp"):
        try:
            if importlib.util.find_spec(module) is None:
                break
        except (ImportError, ValueError):
            break
    else:
        return ""
    return f"MCP servers need the MCP SDK: {MCP_INSTALL}"


def launches(
    servers: Sequence[McpServer], sandbox: Sandbox, cwd: Path | None = None
) -> list[Launch]:
    """Each distinct server wrapped in the sandbox, run in `cwd` (by default the sandbox's
    workspace: for a person, their own folder)."""
    found = []
    for server in dict.fromkeys(servers):  # two matching skills may declare the same server
        argv = sandbox.command(
            [server.command, *server.args],
            extra_read=sandbox.server_paths(server.command, server.args),
        )
        # Added to the SDK's minimal environment: TMPDIR is the private temp dir.
        env = sandbox.environment(server_environment(dict(server.env)))
        found.append(Launch(server, argv, env, str(cwd or sandbox.workspace)))
    return found


def default_sandbox() -> Sandbox:
    """The default mode for $OMEGA_HOME (when a caller has no sandbox of its own)."""
    return Sandbox(SandboxSection(), OmegaPaths(default_home()))


def mcp_toolsets(
    servers: Sequence[McpServer],
    *,
    cwd: Path | None = None,
    init_timeout: float = MCP_INIT_TIMEOUT_SECS,
    sandbox: Sandbox | None = None,
) -> list[AbstractToolset[Any]]:
    """One prefixed toolset per distinct server, each started under the OS sandbox (by default
    the default mode for $OMEGA_HOME); a process lives only while a run uses it."""
    planned = launches(servers, sandbox or default_sandbox(), cwd) if servers else []
    return [t for _launch, t in _toolsets(planned, init_timeout)]


def _toolset(launch: Launch, init_timeout: float) -> MCPToolset[Any]:
    """One server's toolset; its process starts when it is entered and ends when it is left."""
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    transport = StdioTransport(
        command=launch.argv[0],
        args=launch.argv[1:],
        env=launch.env,
        cwd=launch.cwd,
        keep_alive=False,  # the process ends with the call
    )
    return MCPToolset(
        transport,
        # A server-side error is a failed tool result the model reads, not a retry prompt.
        tool_error_behavior="failed",
        init_timeout=init_timeout,
    )


def _toolsets(
    planned: Sequence[Launch],
    init_timeout: float,
    home: Path | None = None,
    deadline: float | None = None,
) -> list[tuple[Launch, AbstractToolset[Any]]]:
    """The prefixed toolsets, each watched (restarted when it exits or stops answering, its
    state recorded in `home`, a hang found within `deadline`) when `home` is given."""
    from omega.tools.mcp_watch import ServerWatch, WatchedToolset

    found: list[tuple[Launch, AbstractToolset[Any]]] = []
    taken: set[str] = set()
    for launch in planned:
        shown: AbstractToolset[Any]
        if home is None:
            shown = _toolset(launch, init_timeout)
        else:
            watch = ServerWatch(
                partial(_toolset, launch, init_timeout),
                launch.server.name,
                home,
                launch.argv,
                _full_env(launch.env),
                launch.cwd,
                deadline,
            )
            shown = WatchedToolset(watch.server, watch=watch)
        found.append((launch, shown.prefixed(tool_prefix(launch.server.name, taken))))
    return found


async def start_servers(
    stack: AsyncExitStack,
    servers: Sequence[McpServer],
    sandbox: Sandbox,
    tool_deadline: float | None = None,
    *,
    cwd: Path | None = None,
    init_timeout: float = MCP_INIT_TIMEOUT_SECS,
) -> list[AbstractToolset[Any]]:
    """Start each server on `stack` under `sandbox`, watched while the call uses it (a hang
    found within `tool_deadline`, the time one tool call may take); one that does not start
    costs its tools, not the reply, and is recorded with the reason (its stderr) for status
    and the owner."""
    started: list[AbstractToolset[Any]] = []
    ok: list[str] = []
    if not servers:
        return started
    home = sandbox.paths.home
    if missing := mcp_missing():  # each server costs its tools, and says why
        for server in dict.fromkeys(servers):
            record_failure(home, server.name, missing)
        return started
    planned = launches(servers, sandbox, cwd)
    # Left last, once the servers stopped: the modes of Omega's files checked (home_guard).
    names = ", ".join(dict.fromkeys(launch.server.name for launch in planned))
    await stack.enter_async_context(guarded(sandbox, None, f"the MCP server(s) {names}"))
    for launch, toolset in _toolsets(planned, init_timeout, home, tool_deadline):
        try:  # a hang on start-up ends at the toolset's init_timeout
            await stack.enter_async_context(toolset)
        except Exception as exc:  # a missing command, a crash, a timeout
            reason = await probe_server(launch.argv, _full_env(launch.env), launch.cwd)
            record_failure(home, launch.server.name, reason or str(exc))
            continue
        started.append(toolset)
        ok.append(launch.server.name)
    if ok:  # running while this call lasts (a failure before is forgotten)
        mark_running(home, ok)
        stack.callback(mark_stopped, home, ok)
    return started


def _full_env(env: dict[str, str]) -> dict[str, str]:
    """The environment the SDK gives a server: its minimal inherited one plus `env`."""
    from mcp.client.stdio import get_default_environment

    return {**get_default_environment(), **env}


async def enter_available(
    stack: AsyncExitStack, toolsets: Sequence[AbstractToolset[Any]]
) -> list[AbstractToolset[Any]]:
    """Start each toolset on `stack`; one that fails to start is logged and left out, so a
    broken server costs its tools, not the reply."""
    started: list[AbstractToolset[Any]] = []
    for toolset in toolsets:
        try:  # a hang on start-up ends at the toolset's init_timeout
            await stack.enter_async_context(toolset)
        except Exception as exc:  # a missing command, a crash, a timeout
            log.warning("MCP toolset %s did not start: %s", toolset.label, exc)
            continue
        started.append(toolset)
    return started
