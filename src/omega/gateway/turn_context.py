"""The context of one reply: the person's situation, the prompt (its stable part first), what
memory adds in one trip to the database thread, matched skills and their MCP servers, and the
tools, folder and images of this turn.

Every block of the prompt carries its origin (omega.turn.prompt): the rules first, then the
data. A skill the gate approved from one person's gap reaches only that person's prompts, and
only in their own chat: a group room's prompt, read by the whole room's answer, holds no
person's personality, project, own skills, lessons or learnings."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

from omega.checklist import read_checklist
from omega.evolution.proposals import GLOBAL, ProposalStore, scope_of
from omega.evolution.reflection import room_scope, with_lessons
from omega.gateway import attachments
from omega.memory.context import ContextRequest, build_context, onboarding_hint
from omega.memory.conversations import thread_key
from omega.memory.store import Store
from omega.skills import Skill, match_triggers
from omega.turn import (
    PipelineDeps,
    PromptParts,
    PromptSituation,
    Turn,
    allowed_tools,
    compose_prompt_parts,
    origin_label,
    person_workspace,
)
from omega.types import (
    Context,
    IncomingMessage,
)

log = logging.getLogger(__name__)
MAX_SKILL_CHARS = 2000
T = TypeVar("T")


def _situation(deps: PipelineDeps, message: IncomingMessage, turn: Turn) -> PromptSituation:
    """The person's standing situation; the turn's skills and signals are added to it later."""
    facts, zone = turn.facts, turn.zone
    # What a person set for Omega in their own chat (how to talk to them, the project they
    # activated) shapes their answers only: a group room's answer is read by everyone in it.
    wishes: dict[str, str] = {} if message.is_group else facts
    active = wishes.get("active_project", "")
    project = deps.projects.get(active) if active else None
    return PromptSituation(
        channel=message.channel,
        platform_hint=deps.state.platform_hints.get(message.channel, ""),
        is_group=message.is_group,
        project_name=project.name if project else "",
        project_instructions=project.instructions if project else "",
        personality=wishes.get("personality", ""),
        # The heartbeat checklist is the owner's business, never in anyone else's prompt, nor
        # in a group room's, whose answer everyone in the room reads.
        checklist=read_checklist(deps.paths.heartbeat) if _owner_alone(message, turn) else "",
        sandbox_mode=deps.config.sandbox.mode,
        workspace=str(person_workspace(deps, message, turn.role)),
        timezone=zone,
        language=turn.language,
        onboarding=onboarding_hint(facts),
    )


def _owner_alone(message: IncomingMessage, turn: Turn) -> bool:
    """Whether only the owner reads this turn's answer: the owner, not in a group room."""
    return turn.role == "owner" and not message.is_group


def skill_reader(message: IncomingMessage) -> str:
    """Whose prompts the turn answering `message` is, for `Skill.visible_to`: the person
    (`person:<channel>:<person key>`) in their own chat; "" in a group room, which is no one
    person and so sees only the skills meant for everyone."""
    return "" if message.is_group else f"person:{scope_of(message.channel, message.sender_id)}"


def visible_skills(skills: Sequence[Skill], message: IncomingMessage) -> list[Skill]:
    """The skills the turn answering `message` may know of: a skill born of one person's gap
    (its audience) is theirs, its name and description too, so it is neither matched nor
    listed (the planner's catalog, `/skills`) for anyone else."""
    reader = skill_reader(message)
    return [skill for skill in skills if skill.visible_to(reader)]


def skill_texts(skills: list[Skill]) -> tuple[tuple[str, str, str], ...]:
    """Each matched skill's name, instructions (with its lessons) and origin label."""
    return tuple((s.name, s.body[:MAX_SKILL_CHARS], s.origin) for s in skills)


def _quant_advisory(store: Store) -> str:
    from omega.quant.settings import QuantStateStore

    return QuantStateStore(store).advisory()


def _guarded(what: str, default: T, fn: Callable[..., T], *args: object) -> T:
    """A memory read inside the turn's one database hop: on failure log it, use `default`."""
    try:
        return fn(*args)
    except Exception:
        log.exception("%s failed; carrying on without it", what)
        return default


async def turn_context(
    deps: PipelineDeps,
    message: IncomingMessage,
    turn: Turn,
    skills: Sequence[Skill] | None = None,
) -> Context:
    """The context of one reply: the prompt (stable part first), memory, matched skills and
    their MCP servers, the tools this person may use, their folder and images. `skills` is
    the catalog as listed for this message (listed now when not given)."""
    scope = scope_of(message.channel, message.sender_id)
    # What memory learned from this person's own turns (skill lessons, learnings of tool use)
    # may hold what they said in private: in a group room only the global ones are recalled,
    # and so only the skills meant for everyone (not one born of this person's own gap): a
    # room is no one person, and visible_to("") holds only for a skill without an audience.
    memory_scope = GLOBAL if message.is_group else scope
    # What a room's own tool calls taught is the room's: recalled there, never in a private
    # prompt (evolution.reflection.introspection), whoever spoke in the room.
    learned_scope = (
        room_scope(message.channel, thread_key(message.conversation)) if message.is_group else scope
    )
    listed = deps.skills.skills() if skills is None else skills
    found = [
        s for s in match_triggers(visible_skills(listed, message), message.text) if s.available
    ]
    owner = _owner_alone(message, turn)
    situation = _situation(deps, message, turn)

    def gather() -> tuple[list[Skill], PromptParts, Context]:
        """Everything memory adds to this turn, in one trip to the database thread."""
        store = deps.store
        matched = _guarded("load lessons", found, with_lessons, store, found, memory_scope)
        advisory = _guarded("quant advisory", "", _quant_advisory, store) if owner else ""
        parts = compose_prompt_parts(
            deps.prompts,
            dataclasses.replace(
                situation,
                skill_instructions=skill_texts(matched),
                # The quant signal is the owner's: never in anyone else's prompt (nor a room's).
                extra=(f"{origin_label('Omega, quant engine')} {advisory}",)
                if advisory and owner
                else (),
            ),
        )
        no_learnings: list[str] = []
        recent = ProposalStore(store).recent_learnings
        learnings = _guarded("load learnings", no_learnings, recent, learned_scope, 5)
        request = ContextRequest(
            message=message,
            system_prompt=parts.text,
            facts=turn.facts,
            language=turn.language,
            max_history=deps.config.memory.max_context_messages,
            max_history_chars=deps.config.limits.max_history_chars,
            timezone=turn.zone,
            learnings=tuple(learnings),
            guidance_in_prompt=True,
        )
        try:
            return matched, parts, build_context(store, request)
        except Exception:  # memory failing must not stop the reply
            log.exception("context build failed; answering without memory")
            return matched, parts, build_context(None, request)

    try:
        matched, parts, context = await deps.store.call(gather)
    except Exception:  # the database thread itself failing must not stop the reply either
        log.exception("memory unreachable; answering without it")
        matched = found
        parts = compose_prompt_parts(
            deps.prompts, dataclasses.replace(situation, skill_instructions=skill_texts(found))
        )
        context = build_context(
            None,
            ContextRequest(
                message, parts.text, turn.facts, turn.language, 0, guidance_in_prompt=True
            ),
        )
    # Skills whose triggers match bring their MCP servers to this call only (to people other
    # than the owner only when `[auth]` gives them "mcp").
    tools = allowed_tools(deps.config, turn.role)
    if tools is None or "mcp" in tools:
        context.mcp_servers = tuple(server for skill in matched for server in skill.mcp_servers)
    context.allowed_tools = tools
    # Someone who may call no tool (a guest; a person or group whose `[auth]` tools are empty)
    # gets a call without any: no provider's own tools either (the claude CLI's WebFetch could
    # carry what memory holds about them to anyone's server).
    context.use_tools = tools is None or bool(tools)
    # What comes after this prefix (the turn's part, facts, recall, history) changes per turn.
    if context.system_prompt.startswith(parts.stable):
        context.stable_prefix = parts.stable
    # Providers with tools of their own (the claude CLI) get the same line: read, or all.
    writes = tools is None or bool({"run_shell", "write_file"} & tools)
    context.tool_access = "full" if writes else "read_only"
    context.workspace = str(person_workspace(deps, message, turn.role))
    context.images = attachments.images_for_model(message.attachments)
    return context
