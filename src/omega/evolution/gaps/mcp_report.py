"""Telling the owner, once, about a skill's MCP server that did not start, or that exited or
stopped answering while a call used it.

The call that ran it (the API tool loop, which watches and restarts it, or the claude CLI's
init report) recorded the server and what happened in $OMEGA_HOME; here each new trouble
becomes an open limitation (owner alert and HEARTBEAT.md through the usual path), analysed into
a proposal like every gap (gap_analysis), and is marked reported: once per trouble, not per
restart attempt. The reason is the server's own output, so it is quoted and cut short, never
an instruction.
"""

from __future__ import annotations

import logging

from omega.evolution.gaps.gap_analysis import learn_gap
from omega.tools.mcp_health import ServerFailure, failures, mark_reported, one_line
from omega.turn import MarkerContext, Outbox, PipelineDeps

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


def trouble_text(server: ServerFailure) -> tuple[str, str]:
    """The limitation's title and description for a server in trouble, by its state."""
    if server.state == "failed":
        return failure_text(server.name, server.reason)
    title = f"MCP server {one_line(server.name, 40)} stops during use"
    what = f'While a call used it, "{one_line(server.reason, REASON_CHARS)}".'
    if server.state == "recovered":
        now = "Omega restarted it and it answers again."
    elif server.state == "down":
        now = (
            f'Omega could not restart it: "{one_line(server.detail, REASON_CHARS)}" (quoted '
            "from the server); its tools fail until a later call starts it."
        )
    else:
        now = "Omega is restarting it."
    return title, f"{what} {now} `omega status` shows how it is doing."


async def report_server_failures(deps: PipelineDeps, out: Outbox, ctx: MarkerContext) -> int:
    """Report every trouble not reported yet; returns how many were reported."""
    reported = 0
    for server in failures(ctx.paths.home):
        if not server.trouble or server.reported:
            continue
        if not mark_reported(ctx.paths.home, server.name):
            continue
        title, description = trouble_text(server)
        # A title already known (the same server failed before) is not alerted again.
        learned = await learn_gap(deps, out, ctx, (title, description, ""), "integrity")
        reported += learned is not None and learned[1]
    return reported
