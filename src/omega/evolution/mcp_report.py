"""Telling the owner, once, about a skill's MCP server that did not start.

The call that tried to start it (the API tool loop, or the claude CLI's init report) recorded
the server and its stderr's end in $OMEGA_HOME; here each new failure becomes an open
limitation (owner alert and HEARTBEAT.md through the usual path) and is marked reported. The
reason is the server's own output, so it is quoted and cut short, never an instruction.
"""

from __future__ import annotations

import logging

from omega.evolution.limitations import raise_limitation
from omega.tools.mcp_health import failures, mark_reported, one_line
from omega.turn import MarkerContext

log = logging.getLogger(__name__)
REASON_CHARS = 200


def failure_text(name: str, reason: str) -> tuple[str, str]:
    """The limitation's title and description for a server that did not start."""
    title = f"MCP server {one_line(name, 40)} does not start"
    description = (
        f'Its error output ends with: "{one_line(reason, REASON_CHARS)}" (quoted from the '
        "server). Its skill's tools are missing until it starts; `omega status` shows it."
    )
    return title, description


async def report_server_failures(ctx: MarkerContext) -> int:
    """Report every failure not reported yet; returns how many were reported."""
    reported = 0
    for failure in failures(ctx.paths.home):
        if failure.reported or not mark_reported(ctx.paths.home, failure.name):
            continue
        title, description = failure_text(failure.name, failure.reason)
        # A title already known (the same server failed before) is not alerted again.
        _, created = await raise_limitation(ctx, title, description, "", "integrity")
        reported += created
    return reported
