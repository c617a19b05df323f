"""What marker effects run against: the context of one reply and the outcome they report."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Literal

from omega.config import Config
from omega.memory.audit import AuditEntry
from omega.memory.provenance import ATTACHED, read_name
from omega.memory.provenance import ATTACHMENT_NOTE as ATTACHMENT_NOTE
from omega.memory.provenance import OWN_TEXT_TOOLS as OWN_TEXT_TOOLS
from omega.memory.provenance import ROOM_WORDS as ROOM_WORDS
from omega.memory.provenance import UNCHECKED as UNCHECKED
from omega.memory.provenance import reads_in as reads_in
from omega.memory.provenance import rooms_in as rooms_in
from omega.memory.store import Store
from omega.owner import owner_alert
from omega.paths import OmegaPaths
from omega.skills import ProjectCatalog, SkillCatalog
from omega.turn.deps import Outbox, PipelineDeps, Turn
from omega.turn.privileges import Role
from omega.turn.state import RuntimeState
from omega.types import IncomingMessage, OutgoingKind, OutgoingMessage, Priority, ToolCall

log = logging.getLogger(__name__)

Notify = Callable[[OutgoingMessage], Awaitable[None]]

UNREADABLE = "earlier turns (memory unreadable)"
RECALLED = "(in an earlier conversation memory recalled)"
RECALLED_ROOMS = f"{ROOM_WORDS} (memory recalled)"


def external_reads(
    calls: Iterable[ToolCall], message: IncomingMessage | None = None, earlier: str = ""
) -> str:
    """What external content a turn read ("" when none): the names of its tool calls that
    may have returned text nobody here wrote, and an attached file; with `earlier`, what the
    earlier turns its history carries read (`conversation_reads`). Fails closed: a tool it
    does not know counts."""
    names = [name for name in earlier.split(", ") if name]
    names += [read_name(call.name, call.result_preview) for call in calls]
    if message is not None and message.attachments:
        names.append(ATTACHED)
    return ", ".join(dict.fromkeys(name for name in names if name))


def conversation_reads(
    store: Store,
    channel: str,
    sender_id: str,
    thread: str = "",
    recalled: tuple[str, ...] = (),
    room: bool = False,
) -> str:
    """What external content the conversation a message continues has read in its earlier
    turns (`reads_in`; "" when there is none yet): its history carries what they returned into
    this turn's prompt. Every tool call of a turn answering someone is recorded in the
    conversation its exchange is kept in (turn.ask). With `recalled`, the earlier
    conversations whose summary or messages memory put in the prompt (Context.recalled_from):
    what they read is carried too, and, unless the turn is a `room`'s own (it recalls only that
    room's, with the room's rights), a group room's words (RECALLED_ROOMS: a private turn
    recalling the person's room conversations). Call on the store's thread."""
    conversation = store.active_conversation_id(channel, sender_id, thread)
    here = reads_in(store, conversation) if conversation else ""
    others = [c for c in recalled if c != conversation]
    before = reads_in(store, *others)
    named = [f"{name} {RECALLED}" for name in before.split(", ") if name]
    if not room and rooms_in(store, *others):
        named.insert(0, RECALLED_ROOMS)
    return ", ".join(part for part in (here, *named) if part)


async def earlier_reads(
    deps: PipelineDeps, message: IncomingMessage, recalled: tuple[str, ...] = ()
) -> str:
    """`conversation_reads` of the conversation `message` continues and of those its prompt
    recalled, asked before its turn calls the provider. Fails closed: memory it cannot read
    counts as external (UNREADABLE)."""
    try:
        return await deps.store.call(
            conversation_reads,
            deps.store,
            message.channel,
            message.sender_id,
            message.conversation,
            recalled,
            message.is_group,
        )
    except Exception:
        log.exception("could not read what the conversation read; counted as external")
        return UNREADABLE


@dataclass
class MarkerContext:
    """Everything marker effects may touch, for one reply."""

    store: Store
    paths: OmegaPaths
    config: Config
    message: IncomingMessage
    timezone: tzinfo
    skills: SkillCatalog
    projects: ProjectCatalog
    state: RuntimeState
    notify: Notify
    cause: str = "reply"  # what produced the markers: reply, step, action task, heartbeat
    # The rights of the person the reply answers (turn.privileges.role_of); least by default.
    role: Role = "stranger"
    # The pipeline, for what needs a provider (the gate's model judge of lesson proposals).
    deps: PipelineDeps | None = None
    # What external content the reply's prompt carried (external_reads: this turn's reads and
    # its conversation's; the heartbeat's: others' words): "" when none. Such a reply's lessons
    # and gaps are not the owner's words (issue 37), and markers whose effect outlives it are
    # refused (markers.provenance.EXTERNAL_BARRED).
    external: str = ""

    @property
    def owner(self) -> bool:
        """Whether the reply answers the owner."""
        return self.role == "owner"


@dataclass
class MarkerOutcome:
    """What the markers changed, for the caller and the log."""

    applied: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    # (marker name, what it was about) of markers that did not act: the person is told.
    unmet: list[tuple[str, str]] = field(default_factory=list)
    project_changed: bool = False
    # Ids of limitations recorded for the first time: the caller has them analysed into
    # proposals once the reply is out (evolution.gap_analysis).
    new_limitations: list[int] = field(default_factory=list)


def owner_message(
    ctx: MarkerContext, text: str, kind: OutgoingKind = "alert", priority: Priority = "normal"
) -> OutgoingMessage:
    """A message for the owner, wherever they can be reached (never whoever is talking); like
    every object of a turn it names the turn's message and has a stable id."""
    stamped = ctx.message.answer(text, kind)
    return dataclasses.replace(
        owner_alert(text, kind=kind, priority=priority), id=stamped.id, reply_to=stamped.reply_to
    )


async def audit_change(
    ctx: MarkerContext, event: str, what: str, diff: str, status: Literal["ok", "denied"] = "ok"
) -> None:
    """A self-modification (or a refused one) in the audit log with its cause and diff; a
    failing audit never blocks the change."""
    try:
        await ctx.store.call(
            ctx.store.audit,
            AuditEntry(
                channel=ctx.message.channel,
                sender_id=ctx.message.sender_id,
                sender_name=ctx.message.sender_name,
                status=status,
                event=event,
                input_text=what[:2000],
                detail=f"cause: {ctx.cause}\n{diff}"[:8000],
            ),
        )
    except Exception:
        log.exception("audit of %s failed", event)


def marker_context(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    out: Outbox,
    cause: str,
    external: str = "",
) -> MarkerContext:
    """What markers of one reply act against, with the rights of the person answered and
    what external content the reply read (`external_reads`)."""
    return MarkerContext(
        store=deps.store,
        paths=deps.paths,
        config=deps.config,
        message=message,
        timezone=turn.zone,
        skills=deps.skills,
        projects=deps.projects,
        state=deps.state,
        notify=out.send,
        cause=cause,
        role=turn.role,
        deps=deps,
        external=external,
    )
