"""Chat commands (/help, /tasks, ...): answered by Omega itself, never sent to the provider.

context.py parses them and holds what they act on; personal.py answers about the person asking,
agent.py about Omega itself, access.py about who may talk to it; this module is the
package's face and dispatches."""

from __future__ import annotations

from collections.abc import Callable

from omega.gateway.commands.access import ACCESS_HANDLERS
from omega.gateway.commands.agent import AGENT_HANDLERS, ASYNC_HANDLERS
from omega.gateway.commands.context import OWNER_ONLY, Command, CommandContext, parse_command
from omega.gateway.commands.personal import PERSON_HANDLERS

__all__ = ["OWNER_ONLY", "Command", "CommandContext", "parse_command", "run_command"]

HANDLERS: dict[str, Callable[[CommandContext, str], str]] = {
    **PERSON_HANDLERS,
    **AGENT_HANDLERS,
    **ACCESS_HANDLERS,
}


async def run_command(command: Command, ctx: CommandContext) -> str:
    """Run a command on the database thread and return the text to send."""
    if command.name in ASYNC_HANDLERS:
        return await ASYNC_HANDLERS[command.name](ctx, command.args)
    handler = HANDLERS[command.name]
    return await ctx.store.call(handler, ctx, command.args)
