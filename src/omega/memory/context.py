"""Build the provider context for one incoming message from what memory holds.

What memory adds goes after the system prompt's data header (omega.turn.prompt), each block
labelled with its origin: this person's words and facts, or lessons from Omega's tool use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, tzinfo

from omega.memory.store import Store
from omega.types import ChatMessage, Context, IncomingMessage

# Facts shown first in the profile: who the person is, then where and when they live.
IDENTITY_KEYS = ("preferred_name", "name", "pronouns", "age", "occupation")
CONTEXT_KEYS = ("timezone", "location", "city", "country", "preferred_language", "interests")
# Bookkeeping facts the model does not need to see as profile.
INTERNAL_KEYS = frozenset({"welcomed", "active_project", "personality"})
# What a group room's prompt may show of the speaker's profile: how to address them, in which
# language, at what hour. Every other fact (a diagnosis told in private, where they live, a key
# the summarizer made up) stays out of a prompt whose answer the whole room reads.
ROOM_KEYS = frozenset({"preferred_name", "name", "pronouns", "preferred_language", "timezone"})
MAX_RECALL_CHARS = 300


@dataclass(frozen=True)
class ContextRequest:
    """What build_context needs besides the store."""

    message: IncomingMessage
    system_prompt: str
    facts: dict[str, str]
    language: str
    max_history: int
    max_history_chars: int = 24_000  # the newest turns that fit; older ones are left out
    recall_limit: int = 5
    timezone: tzinfo = UTC
    learnings: tuple[str, ...] = ()  # from introspection of Omega's own tool use
    # The language and onboarding lines are already among the prompt's rules (the gateway
    # puts them there): not repeated after the data.
    guidance_in_prompt: bool = False


def profile_lines(facts: dict[str, str]) -> list[str]:
    """Facts as `key: value` lines, identity keys first, then context keys, then the rest."""
    shown = {k: v for k, v in facts.items() if k not in INTERNAL_KEYS}
    ordered = [k for k in IDENTITY_KEYS if k in shown]
    ordered += [k for k in CONTEXT_KEYS if k in shown]
    ordered += [k for k in shown if k not in ordered]
    return [f"- {key}: {shown[key]}" for key in ordered]


def room_facts(facts: dict[str, str]) -> dict[str, str]:
    """The facts a group room may see: only the ROOM_KEYS (any other key is left out)."""
    return {key: value for key, value in facts.items() if key in ROOM_KEYS}


def onboarding_hint(facts: dict[str, str]) -> str:
    """Graduated: nothing known, a little known, or enough known to say nothing."""
    known = len([k for k in facts if k not in INTERNAL_KEYS and k != "preferred_language"])
    if known == 0:
        return (
            "You know nothing about this person yet. Be welcoming; learn their name and "
            "what they need naturally, without an interrogation."
        )
    if known < 3:
        return "You know a little about this person; pick up more context naturally."
    return ""


def fit_history(history: list[ChatMessage], max_chars: int) -> list[ChatMessage]:
    """The newest turns whose text fits in `max_chars`; a turn too long on its own is cut."""
    kept: list[ChatMessage] = []
    left = max_chars
    for turn in reversed(history):
        if left <= 0:
            break
        if len(turn.content) > left:
            kept.append(ChatMessage(turn.role, turn.content[:left] + " [...cut]"))
            break
        kept.append(turn)
        left -= len(turn.content)
    return kept[::-1]


def build_context(store: Store | None, request: ContextRequest) -> Context:
    """System prompt enriched from memory, plus recent history and the new message.

    With no store (one-shot `omega ask`) the context holds only the new message.
    """
    message = request.message
    conversation = message.conversation
    # In a group room, what memory recalls stays in this room: what the person said in
    # private (or in another room) never reaches a prompt whose answer the room reads.
    within = (message.channel, conversation) if message.is_group else None
    history: list[ChatMessage] = []
    sections = [request.system_prompt]
    recalled_from: list[str] = []
    if store is not None:
        history = fit_history(
            store.recent_messages(
                message.channel, message.sender_id, request.max_history, conversation
            ),
            request.max_history_chars,
        )
        # In a room only who they are: what they told Omega in private stays private.
        profile = profile_lines(room_facts(request.facts) if message.is_group else request.facts)
        if profile:
            sections.append(
                "[from: memory, this person] What you know about them:\n" + "\n".join(profile)
            )
        summaries = store.recent_summaries_of(message.sender_id, 3, within)
        if summaries:
            sections.append(
                "[from: memory, this person] Earlier conversations:\n"
                + "\n".join(f"- {s}" for _, s in summaries)
            )
            recalled_from += [conversation_id for conversation_id, _ in summaries]
        current = store.active_conversation_id(message.channel, message.sender_id, conversation)
        recalled = store.search_messages(
            message.sender_id,
            message.text,
            limit=request.recall_limit,
            exclude_conversation=current or "",
            within=within,
        )
        if recalled:
            lines = [
                f"- [{r.created_at[:10]}] {r.role}: {r.content[:MAX_RECALL_CHARS]}"
                for r in recalled
            ]
            sections.append(
                "[from: memory, this person] Related things said before:\n" + "\n".join(lines)
            )
            recalled_from += [r.conversation_id for r in recalled]
        tasks = store.pending_tasks(message.sender_id)
        if message.is_group:  # only those made in this room, to be answered in it
            tasks = [t for t in tasks if t.answers_at(message.channel, message.target)]
        if tasks:
            lines = [
                f"- [{t.id[:8]}] {t.due_at.astimezone(request.timezone):%Y-%m-%d %H:%M %Z} "
                f"({t.repeat}, {t.task_type}): {t.description}"
                for t in tasks[:20]
            ]
            sections.append(
                "[from: memory, this person] Their pending scheduled tasks:\n" + "\n".join(lines)
            )
        if request.learnings:
            sections.append(
                "[from: lessons of your own tool use] What you learned:\n"
                + "\n".join(f"- {item}" for item in request.learnings)
            )
        hint = "" if request.guidance_in_prompt else onboarding_hint(request.facts)
        if hint:
            sections.append(hint)
    if not request.guidance_in_prompt and request.language and request.language != "English":
        sections.append(f"Always answer in {request.language}.")
    return Context(
        system_prompt="\n\n".join(sections),
        messages=[*history, ChatMessage(role="user", content=message.text)],
        sender_id=message.sender_id,
        channel=message.channel,
        thread=conversation,
        group=message.is_group,
        use_tools=True,  # a person is being answered (turn_context: unless they may call none)
        recalled_from=tuple(dict.fromkeys(recalled_from)),
    )
