"""Loading a turn: the sender's facts, language, timezone and rights, and the folder their tools
work in."""

from __future__ import annotations

from pathlib import Path

from omega.memory.access import GrantRole
from omega.schedule import resolve_timezone
from omega.turn.auth import granted_role
from omega.turn.deps import PipelineDeps, Turn
from omega.turn.privileges import Role, role_of, turn_workspace
from omega.turn.records import db_call
from omega.types import IncomingMessage


async def load_turn(deps: PipelineDeps, message: IncomingMessage) -> Turn:
    """The sender's facts, language and timezone (memory failing means empty facts), and their
    role from the grants read now (a revocation holds at once)."""
    return await load_granted_turn(deps, message, await granted_role(deps.store, message))


async def load_granted_turn(
    deps: PipelineDeps, message: IncomingMessage, granted: GrantRole | None
) -> Turn:
    """`load_turn` with the grants the caller has just read (not read twice in one step)."""
    no_facts: dict[str, str] = {}
    facts = await db_call(deps, "load facts", no_facts, deps.store.facts, message.sender_id)
    return make_turn(deps, facts, role_of(deps.config, message, granted))


def make_turn(deps: PipelineDeps, facts: dict[str, str], role: Role) -> Turn:
    """A turn from known facts: language and timezone from them, or the configured defaults."""
    return Turn(
        facts=facts,
        language=facts.get("preferred_language", "English"),
        zone=resolve_timezone(facts.get("timezone", ""), deps.config.omega.timezone),
        role=role,
    )


def person_workspace(deps: PipelineDeps, message: IncomingMessage, role: Role) -> Path:
    """The folder this turn's tools and images live in: the owner's is the workspace, a
    person's their own folder, a group room's the room's own (turn.privileges.turn_workspace)."""
    return turn_workspace(deps.paths.workspace, role, message)
