"""What every chat command shares: parsing `/name args`, and the context a command reads and
changes."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import tzinfo

from omega.channels.base import PairingChannel
from omega.commands_table import NAMES
from omega.config import Config
from omega.memory.store import Store
from omega.paths import OmegaPaths
from omega.skills import ProjectCatalog, SkillCatalog
from omega.turn import Role
from omega.types import IncomingMessage

OWNER_ONLY = "Only my owner can do that."
_COMMAND = re.compile(r"^/(?P<name>[A-Za-z_]+)(?:@(?P<bot>[\w.]+))?(?:\s+(?P<args>.*))?$", re.S)


@dataclass(frozen=True)
class Command:
    """A parsed chat command."""

    name: str
    args: str


def parse_command(text: str) -> Command | None:
    """`/name args` or `/name@botname args` for a known command; anything else is None."""
    match = _COMMAND.match(text.strip())
    if not match:
        return None
    name = match.group("name").lower()
    if name not in NAMES:
        return None
    return Command("language" if name == "lang" else name, (match.group("args") or "").strip())


@dataclass
class CommandContext:
    """What commands may read and change."""

    store: Store
    config: Config
    paths: OmegaPaths
    message: IncomingMessage
    provider_name: str
    started_at: float
    skills: SkillCatalog
    projects: ProjectCatalog
    timezone: tzinfo
    # Running channels that pair themselves (gateway state), for /whatsapp.
    pairing: Mapping[str, PairingChannel] = field(default_factory=dict)
    # The sender's own role (turn.privileges.role_of: from their channel id, never a link's).
    role: Role = "stranger"
    # Set when a command changes when a task is due (the scheduler plans its sleep again).
    tasks_changed: asyncio.Event | None = None
