"""How each skill's MCP server is doing, in one line per server, for `omega status`, `/status`
and the web Health page (read from the record mcp_health keeps)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from omega.tools.mcp_health import ServerFailure, failures


@dataclass(frozen=True)
class ServerState:
    """One server's line: its name, what it is doing, and whether that is good news."""

    name: str
    text: str
    good: bool


def _clock(at: float) -> str:
    return time.strftime("%H:%M", time.localtime(at)) if at else "?"


def describe(server: ServerFailure) -> ServerState:
    """The line for one recorded server (reasons are the server's own output: quoted)."""
    running = f"running ({server.running} calls)" if server.running > 1 else "running"
    if server.state == "failed":
        return ServerState(server.name, f'did not start: "{server.reason}"', False)
    if server.state == "restarting":
        attempt = f"attempt {server.attempt} of {server.attempts}" if server.attempt else "starting"
        return ServerState(server.name, f'restarting ({attempt}) after "{server.reason}"', False)
    if server.state == "down":
        text = f'down: "{server.detail or server.reason}"'
        if server.detail and server.reason:
            text += f' (after "{server.reason}")'
        return ServerState(server.name, text, False)
    if server.state == "recovered":
        text = f'recovered at {_clock(server.at)} after "{server.reason}"'
        return ServerState(server.name, f"{text}; {running}" if server.running else text, True)
    return ServerState(server.name, running, True)


def server_states(home: Path) -> list[ServerState]:
    """Every server in trouble or running now, oldest change first."""
    return [describe(s) for s in failures(home) if s.trouble or s.running]


def status_lines(home: Path) -> list[tuple[str, str]]:
    """(`mcp <name>`, state) for status: each server in trouble or running, with its reason."""
    return [(f"mcp {s.name}", s.text) for s in server_states(home)]
