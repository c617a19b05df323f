"""A real stdio MCP server for tests (mcp SDK v2): `python tests/fakes/mcp_echo_server.py`.

In its folder (the person's workspace), a file `count-starts` makes it add a line to
`starts.log` each time it starts (its pid and the monotonic clock), and a file
`refuse-to-start` makes it exit at once.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("echo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
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


@server.tool()
async def freeze(seconds: float) -> str:
    """Block the whole server (it answers nothing meanwhile), as a hung server does."""
    time.sleep(seconds)  # noqa: ASYNC251 - blocking the loop is the point
    return f"froze {seconds}s"


@server.tool()
def crash(status: int) -> str:
    """Exit the server at once, in the middle of this call."""
    os._exit(status)


if __name__ == "__main__":
    if Path("count-starts").exists():
        with open("starts.log", "a") as log:
            log.write(f"{os.getpid()} {time.monotonic()}\n")
    if Path("refuse-to-start").exists():
        sys.exit("cannot start: refuse-to-start is here")
    server.run("stdio")
