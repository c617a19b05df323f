"""The owner's commands about who may talk to Omega: /pending, /approve_person CODE,
/deny_person CODE (the same rules as `omega people` and the web page: gateway/strangers.py)."""

from __future__ import annotations

from collections.abc import Callable

from omega.gateway import strangers
from omega.gateway.commands.context import CommandContext
from omega.gateway.strangers import enter_code, pending_lines


def _pending(ctx: CommandContext, args: str) -> str:
    lines = pending_lines(ctx.store.pairing_pending(strangers.utc_clock()))
    if not lines:
        return "Nobody is waiting to be approved."
    return "Waiting for your approval (ask them for their code):\n" + "\n".join(
        f"- {line}" for line in lines
    )


def _actor(ctx: CommandContext) -> str:
    return f"{ctx.message.channel}:{ctx.message.channel_id}"


def _approve_person(ctx: CommandContext, args: str) -> str:
    if not args:
        return "Usage: /approve_person CODE (the code they were given; /pending lists them)."
    return enter_code(ctx.store, args, True, _actor(ctx))[1]


def _deny_person(ctx: CommandContext, args: str) -> str:
    if not args:
        return "Usage: /deny_person CODE (the code they were given; /pending lists them)."
    return enter_code(ctx.store, args, False, _actor(ctx))[1]


ACCESS_HANDLERS: dict[str, Callable[[CommandContext, str], str]] = {
    "pending": _pending,
    "approve_person": _approve_person,
    "deny_person": _deny_person,
}
