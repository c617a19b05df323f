"""A real stdio MCP server for tests (mcp SDK v2): `python tests/fakes/mcp_echo_server.py`."""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("echo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
async def nap(seconds: float) -> str:
    """Sleep, then say so (a slow tool, for timeout tests)."""
    await anyio.sleep(seconds)
    return f"slept {seconds}s"


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, as a deliberate tool error."""
    raise ToolError(f"refused: {reason}")


if __name__ == "__main__":
    server.run("stdio")
