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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omega.config import SandboxSection
from omega.paths import OmegaPaths, default_home
from omega.sandbox import Sandbox
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


def mcp_toolsets(
    servers: Sequence[McpServer],
    *,
    cwd: Path | None = None,
    init_timeout: float = MCP_INIT_TIMEOUT_SECS,
    sandbox: Sandbox | None = None,
) -> list[AbstractToolset[Any]]:
    """One prefixed toolset per distinct server, each started under the OS sandbox (by default
    the default mode for $OMEGA_HOME); a process lives only while a run uses it."""
    if not servers:
        return []
    sandbox = sandbox or Sandbox(SandboxSection(), OmegaPaths(default_home()))
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    toolsets: list[AbstractToolset[Any]] = []
    taken: set[str] = set()
    for server in dict.fromkeys(servers):  # two matching skills may declare the same server
        argv = sandbox.command(
            [server.command, *server.args],
            extra_read=sandbox.server_paths(server.command, server.args),
        )
        transport = StdioTransport(
            command=argv[0],
            args=argv[1:],
            # Added to the SDK's minimal environment: TMPDIR is the private temp dir.
            env=sandbox.environment(dict(server.env)),
            cwd=str(cwd or sandbox.paths.workspace),
            keep_alive=False,  # the process ends with the call
        )
        toolset: MCPToolset[Any] = MCPToolset(
            transport,
            # A server-side error is a failed tool result the model reads, not a retry prompt.
            tool_error_behavior="failed",
            init_timeout=init_timeout,
        )
        toolsets.append(toolset.prefixed(tool_prefix(server.name, taken)))
    return toolsets


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
