"""What the stages share: the dependencies built once at start-up, the outbox they send through,
the answer path handed to the loops, and the turn (who is answered, in which language, with
which rights)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import Protocol

from omega.config import Config
from omega.memory.store import Store
from omega.paths import OmegaPaths
from omega.prompts import Prompts
from omega.providers.base import Provider
from omega.skills import ProjectCatalog, SkillCatalog
from omega.turn.privileges import Role
from omega.turn.state import RuntimeState
from omega.types import IncomingMessage, OutgoingMessage


class Outbox(Protocol):
    """Where the pipeline sends things: the gateway."""

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver a message on its channel."""
        ...

    async def typing(self, channel: str, target: str) -> None:
        """Show a typing indicator."""
        ...


class Responder(Protocol):
    """The pipeline's answer path (gateway.pipeline.respond), handed to the loops that answer
    on someone's behalf (the scheduler's action tasks) so they need not import the gateway."""

    async def __call__(
        self,
        deps: PipelineDeps,
        message: IncomingMessage,
        turn: Turn,
        out: Outbox,
        *,
        cause: str = ...,
        raise_errors: bool = ...,
    ) -> str | None:
        """Answer `message` for `turn` through the whole reply path; the text sent, if any."""
        ...


@dataclass
class PipelineDeps:
    """What the stages need; built once at start-up."""

    config: Config
    prompts: Prompts
    store: Store
    provider: Provider
    provider_timeout: float
    paths: OmegaPaths
    skills: SkillCatalog
    projects: ProjectCatalog
    state: RuntimeState


@dataclass(frozen=True)
class Turn:
    """Who is being answered, in which language and timezone, and what is known of them."""

    facts: dict[str, str]
    language: str
    zone: tzinfo
    role: Role = "stranger"  # the rights the turn runs with (turn.privileges)
