"""The stdio MCP servers a matching skill declares, as pydantic-ai toolsets for one call.

Each server's tools are prefixed with its name (`calc` + `add` -> `calc_add`), so two servers
never offer the model the same tool name. Servers start with the MCP SDK's minimal inherited
environment plus what the skill declares, so Omega's credentials do not reach them, and run
under the OS sandbox like every command the model can drive.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths, default_home
from omega.sandbox import Sandbox
from omega.sandbox.servers import server_environment
from omega.tools.mcp_health import probe_server, record_failure, record_started
from omega.types import McpServer

if TYPE_CHECKING:
    from pydantic_ai.toolsets import AbstractToolset

log = logging.getLogger(__name__)

MCP_INIT_TIMEOUT_SECS = 30.0
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


def _toolsets(
    planned: Sequence[Launch], init_timeout: float
) -> list[tuple[Launch, AbstractToolset[Any]]]:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    found: list[tuple[Launch, AbstractToolset[Any]]] = []
    taken: set[str] = set()
    for launch in planned:
        transport = StdioTransport(
            command=launch.argv[0],
            args=launch.argv[1:],
            env=launch.env,
            cwd=launch.cwd,
            keep_alive=False,  # the process ends with the call
        )
        toolset: MCPToolset[Any] = MCPToolset(
            transport,
            # A server-side error is a failed tool result the model reads, not a retry prompt.
            tool_error_behavior="failed",
            init_timeout=init_timeout,
        )
        found.append((launch, toolset.prefixed(tool_prefix(launch.server.name, taken))))
    return found


async def start_servers(
    stack: AsyncExitStack,
    servers: Sequence[McpServer],
    sandbox: Sandbox,
    *,
    cwd: Path | None = None,
    init_timeout: float = MCP_INIT_TIMEOUT_SECS,
) -> list[AbstractToolset[Any]]:
    """Start each server on `stack` under `sandbox`; one that does not start costs its tools,
    not the reply, and is recorded with the reason (its stderr) for status and the owner."""
    started: list[AbstractToolset[Any]] = []
    ok: list[str] = []
    if not servers:
        return started
    for launch, toolset in _toolsets(launches(servers, sandbox, cwd), init_timeout):
        try:  # a hang on start-up ends at the toolset's init_timeout
            await stack.enter_async_context(toolset)
        except Exception as exc:  # a missing command, a crash, a timeout
            reason = await probe_server(launch.argv, _full_env(launch.env), launch.cwd)
            record_failure(sandbox.paths.home, launch.server.name, reason or str(exc))
            continue
        started.append(toolset)
        ok.append(launch.server.name)
    record_started(sandbox.paths.home, ok)
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
