"""Telling the owner, once, about a skill's MCP server that did not start.

The call that tried to start it (the API tool loop, or the claude CLI's init report) recorded
the server and its stderr's end in $OMEGA_HOME; here each new failure becomes an open
limitation (owner alert and HEARTBEAT.md through the usual path), analysed into a proposal
like every gap (gap_analysis), and is marked reported. The
reason is the server's own output, so it is quoted and cut short, never an instruction.
"""

from __future__ import annotations

import logging

from omega.evolution.gap_analysis import learn_gap
from omega.tools.mcp_health import failures, mark_reported, one_line
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


async def report_server_failures(deps: PipelineDeps, out: Outbox, ctx: MarkerContext) -> int:
    """Report every failure not reported yet; returns how many were reported."""
    reported = 0
    for failure in failures(ctx.paths.home):
        if failure.reported or not mark_reported(ctx.paths.home, failure.name):
            continue
        title, description = failure_text(failure.name, failure.reason)
        # A title already known (the same server failed before) is not alerted again.
        learned = await learn_gap(deps, out, ctx, (title, description, ""), "integrity")
        reported += learned is not None and learned[1]
    return reported
