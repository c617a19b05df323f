"""The summarizer: idle conversations become a short summary plus validated facts, then close.

A summary the provider cannot make now leaves its conversation open: that is the queue (in the
store, so another replica or the next start makes it), never a placeholder in its place.
Facts are a person's for good and carry no origin: of a conversation that read a page or a
tool's result, they come from the person's own lines alone (ARCHITECTURE §12a), and none come
from a group room's, whose words are other members' too (a quote or a forward in the person's
own line), whoever spoke there. Its summary keeps its conversation, whose reads (and room) a
later prompt recalling it carries (turn.earlier_reads)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re

from omega.errors import OmegaError
from omega.providers.base import RETRY_LATER_KINDS, ProviderError
from omega.turn import PipelineDeps, ask_provider, reads_in, rooms_in
from omega.types import ChatMessage, Context

log = logging.getLogger(__name__)

SUMMARIZE_PROMPT = (
    "Summarize this conversation in one or two sentences: what the person wanted and what "
    "was decided or done. Plain text, no preamble."
)
FACTS_PROMPT = (
    "From this conversation, extract lasting facts about the person (not about the assistant), "
    "one per line as `key: value`, using keys such as preferred_name, pronouns, timezone, "
    "location, occupation, interests. Only facts they stated. "
    "If there are none, answer exactly: none"
)
MAX_TRANSCRIPT_CHARS = 12_000
SHUTDOWN_CONCURRENCY = 4  # summaries asked at once at shutdown (each waits on the provider)
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_PRICE_OR_NUMBER = re.compile(r"^[\s$€£¥+-]*[\d.,\s%]+$")


def is_valid_fact(key: str, value: str) -> bool:
    """The spec's rules: sane key and value lengths, no numeric keys, no prices or table rows."""
    if not key or not value or len(key) > 50 or len(value) > 200:
        return False
    if key.isdigit() or not _KEY.match(key):
        return False
    if value.startswith("$") or value.count("|") >= 2:
        return False
    return not _PRICE_OR_NUMBER.match(value)


def parse_facts(text: str) -> dict[str, str]:
    """`key: value` lines from the model, normalized and validated; 'none' means no facts."""
    facts: dict[str, str] = {}
    if text.strip().strip(".").lower() == "none":
        return facts
    for line in text.splitlines():
        line = line.strip().lstrip("-*• ").strip()
        if ":" not in line:
            continue
        raw_key, raw_value = line.split(":", 1)
        key = re.sub(r"[\s-]+", "_", raw_key.strip().strip("*`").lower())
        value = raw_value.strip().strip("*`").strip()
        if is_valid_fact(key, value):
            facts[key] = value
    return facts


def transcript(messages: list[ChatMessage]) -> str:
    """The conversation as `User:` / `Assistant:` lines, keeping the end when too long."""
    lines = [f"{'User' if m.role == 'user' else 'Assistant'}: {m.content}" for m in messages]
    text = "\n".join(lines)
    return text[-MAX_TRANSCRIPT_CHARS:]


async def _ask(deps: PipelineDeps, instruction: str, text: str, event: str) -> str:
    context = Context(
        system_prompt=instruction, messages=[ChatMessage("user", f"{instruction}\n\n{text}")]
    )
    reply = await ask_provider(deps, context, audit_as=event)
    return reply.text.strip()


async def summarize_conversation(deps: PipelineDeps, conversation_id: str) -> str | None:
    """Summarize one conversation, store its facts, close it; return the summary kept.

    When the provider is down, slow or refusing for load (a kind that opens the fallback
    breaker, or a rate limit), the conversation stays open, queued for a later pass of the
    summarizer (on this replica, another one or the next start), and None is returned: a
    summary is made later, never replaced by a placeholder. Another failure (the request's
    own fault) keeps "(N messages, summary unavailable)" and closes it."""
    store = deps.store
    messages = await store.call(store.conversation_messages, conversation_id)
    owner = await store.call(store.conversation_sender, conversation_id)
    if not messages or owner is None:
        await store.call(store.close_conversation, conversation_id, "(empty conversation)")
        return "(empty conversation)"
    text = transcript(messages)
    try:
        summary = await _ask(deps, SUMMARIZE_PROMPT, text, "summary") or ""
    except ProviderError as exc:
        if exc.kind in RETRY_LATER_KINDS:
            log.warning("summary of %s deferred (%s): %s", conversation_id[:8], exc.kind, exc)
            raise SummaryDeferredError(exc) from exc
        log.warning("summary of %s failed: %s", conversation_id[:8], exc)
        summary = ""
    if not summary:
        summary = f"({len(messages)} messages, summary unavailable)"
    try:
        room = await store.call(rooms_in, store, conversation_id)
        read = await store.call(reads_in, store, conversation_id)
    except Exception:
        log.exception("could not read what %s read; counted as a room's", conversation_id[:8])
        room, read = True, "unknown"
    if room:  # a member's quoted words in the speaker's line are no fact about the speaker
        log.info("no facts from %s: a group room's conversation", conversation_id[:8])
        text = ""
    elif read:  # text nobody here wrote states no fact about the person
        log.info("facts of %s from the person's lines only (read %s)", conversation_id[:8], read)
        text = transcript([m for m in messages if m.role == "user"])
    try:
        facts = parse_facts(await _ask(deps, FACTS_PROMPT, text, "facts")) if text else {}
    except ProviderError as exc:
        log.warning("fact extraction for %s failed: %s", conversation_id[:8], exc)
        facts = {}
    for key, value in facts.items():
        if not await store.call(store.set_learned_fact, owner[1], key, value):
            log.warning("fact extraction tried to set Omega's own state %r; ignored", key)
    await store.call(store.close_conversation, conversation_id, summary[:1000])
    log.info("conversation %s summarized (%d facts)", conversation_id[:8], len(facts))
    return summary


class SummaryDeferredError(OmegaError):
    """A summary the provider could not make now: its conversation stays open (queued)."""

    def __init__(self, cause: ProviderError) -> None:
        super().__init__(str(cause))
        self.cause = cause


async def _summarize_or_defer(deps: PipelineDeps, conversation_id: str) -> str | None:
    """summarize_conversation, None when the summary was deferred (the conversation queued)."""
    try:
        return await summarize_conversation(deps, conversation_id)
    except SummaryDeferredError:
        return None


async def summarize_idle(deps: PipelineDeps) -> int:
    """Summarize every conversation idle for `memory.idle_minutes`; return how many.

    A pass ends at the first summary deferred because the provider is down: the rest stay
    queued for the next pass instead of each waiting out the same failure."""
    idle = await deps.store.call(deps.store.idle_conversations, deps.config.memory.idle_minutes)
    done = 0
    for conversation_id, _, _ in idle:
        try:
            if await _summarize_or_defer(deps, conversation_id) is None:
                log.info("%d idle conversations wait for the provider", len(idle) - done)
                break
            done += 1
        except Exception:
            log.exception("summarizing %s failed", conversation_id[:8])
    return done


async def summarize_all_active(deps: PipelineDeps, *, within: float | None = None) -> int:
    """At shutdown: summarize every open conversation, a few at a time, within `within`
    seconds (None: no limit); return how many were summarized.

    What is not done in time, or not while the provider is down, stays open: queued in the
    store for the summarizer (another replica's, or this one's at the next start)."""
    active = await deps.store.call(deps.store.active_conversations)
    if not active:
        return 0
    gate = asyncio.Semaphore(SHUTDOWN_CONCURRENCY)
    provider_down = asyncio.Event()
    done: list[str] = []

    async def one(conversation_id: str) -> None:
        async with gate:
            if provider_down.is_set():
                return
            try:
                if await _summarize_or_defer(deps, conversation_id) is None:
                    provider_down.set()  # the others would wait out the same failure
                else:
                    done.append(conversation_id)
            except Exception:
                log.exception("summarizing %s at shutdown failed", conversation_id[:8])

    tasks = [asyncio.create_task(one(cid), name=f"summary:{cid[:8]}") for cid, _, _ in active]
    _, pending = await asyncio.wait(tasks, timeout=within)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    left = len(active) - len(done)
    if left:
        why = "the provider is unavailable" if provider_down.is_set() else "no time was left"
        log.warning(
            "%d open conversations were not summarized at shutdown (%s): they stay queued "
            "for the summarizer",
            left,
            why,
        )
    return len(done)


async def summarizer_loop(deps: PipelineDeps, stop: asyncio.Event) -> None:
    """Look for idle conversations every `memory.summarize_check_secs` until stopped."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), deps.config.memory.summarize_check_secs)
        if stop.is_set():
            return
        try:
            await summarize_idle(deps)
        except Exception:
            log.exception("summarizer pass failed")
