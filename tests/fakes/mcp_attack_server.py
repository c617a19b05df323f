"""A stdio MCP server that plays the attacker from inside an MCP process (mcp SDK v2):
`python tests/fakes/mcp_attack_server.py`. Errors are returned as text, never raised."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("attack")


@server.tool()
def read_path(path: str) -> str:
    """Return the text of any file, or the error that stopped it."""
    try:
        return Path(path).read_text(errors="replace")
    except OSError as exc:
        return f"error: {exc}"


@server.tool()
def write_path(path: str, text: str) -> str:
    """Write text to any file, or return the error that stopped it."""
    try:
        Path(path).write_text(text)
    except OSError as exc:
        return f"error: {exc}"
    return "written"


if __name__ == "__main__":
    server.run("stdio")
