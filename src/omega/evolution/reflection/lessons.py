"""Skill lessons (SKILL_IMPROVE): kept in memory.db, never written into a SKILL.md.

From the owner a lesson is for everyone; from anyone else, or from a turn that read external
content (a fetched page, an MCP or shell result, an attached file: turn.external_reads), it
becomes a proposal the owner reviews like any other. A matching skill is shown to a person with
the global lessons and their own, each labelled with its origin, so one person's words (or a
page's) never reach another person's prompt unreviewed. Each proposal costs a call of the gate's
model judge: another person's are taken at most `[limits] max_lessons_per_person_per_day` a day.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

from omega.evolution import gate  # its lexicons (~0.2 s of regexes) load on first use
from omega.evolution.proposals import GLOBAL, ProposalStore, scope_of
from omega.memory.db import from_db_time, to_db_time
from omega.memory.store import Store
from omega.skills import Skill
from omega.text import quote_untrusted
from omega.turn import MarkerContext, audit_change, owner_message

MAX_LESSON = 500
# The store's state scope of the daily cap: per person (key), when each of their lesson
# proposals of the last day came (a JSON list of database times).
LESSON_QUOTA = "lesson_proposals"


def room_scope(channel: str, room: str) -> str:
    """The scope of what a group room's tool calls taught (no one person's): `room` is its
    conversation's key as stored (memory.conversations.thread_key of the message's)."""
    return f"room:{channel}:{room}"


def with_lessons(store: Store, skills: list[Skill], scope: str) -> list[Skill]:
    """The skills with this person's and the global lessons appended to their instructions."""
    repo = ProposalStore(store)
    shown = []
    for skill in skills:
        lessons = repo.lessons_with_source(skill.name, scope)
        if lessons:
            extra = "\n".join(f"- [{lesson_origin(source)}] {text}" for text, source in lessons)
            skill = dataclasses.replace(skill, body=f"{skill.body}\n\nLessons learned:\n{extra}")
        shown.append(skill)
    return shown


def lesson_origin(source: str) -> str:
    """A lesson's origin for its label in the prompt."""
    if source == "owner":
        return "lesson from the owner"
    if source.startswith("proposal:"):
        return f"lesson the owner approved (#{source.partition(':')[2]})"
    return f"lesson from {source or 'an unknown source'}"


def take_lesson_quota(store: Store, who: str, per_day: int, now: datetime | None = None) -> bool:
    """Count one lesson proposal from `who` (a person's scope) when fewer than `per_day` came
    from them in the last day; False, counting nothing, when that many did. One write
    transaction: of two replicas only one takes the last one. Call on the store's thread."""
    moment = now or datetime.now(UTC)
    day_ago = moment - timedelta(days=1)
    with store.transaction():
        kept = store.state_get(LESSON_QUOTA, who)
        stamps = [str(t) for t in kept] if isinstance(kept, list) else []
        recent = []
        for stamp in stamps:
            try:
                if from_db_time(stamp) > day_ago:
                    recent.append(stamp)
            except ValueError:
                continue  # unreadable: not counted (nobody but Omega writes it)
        if len(recent) >= per_day:
            return False
        store.state_put(LESSON_QUOTA, who, [*recent, to_db_time(moment)])
    return True


async def _within_quota(ctx: MarkerContext, skill: str, lesson: str) -> None:
    """Count a lesson proposal from anyone but the owner against their daily cap; past it,
    audited as denied and PermissionError (no judge is asked: the marker is not done)."""
    if ctx.owner:
        return
    who = scope_of(ctx.message.channel, ctx.message.sender_id)
    per_day = ctx.config.limits.max_lessons_per_person_per_day
    if await ctx.store.call(take_lesson_quota, ctx.store, f"person:{who}", per_day):
        return
    reason = f"SKILL_IMPROVE: more than {per_day} lesson proposals a day from one person"
    detail = f"role: {ctx.role}\n{reason}; {skill}: {lesson}"[:4000]
    await audit_change(ctx, "marker_refused", ctx.message.text[:500], detail, status="denied")
    raise PermissionError(f"{reason}; this one is dropped")


async def skill_improve(ctx: MarkerContext, name: str, lesson: str) -> str:
    """One SKILL_IMPROVE marker: a global lesson from the owner's turn that read nothing
    external, else a proposal for the owner."""
    skill = ctx.skills.get(name)
    if skill is None:
        raise LookupError(f"no skill named {name!r}")
    lesson = " ".join(lesson.split())[:MAX_LESSON]
    if not lesson:
        raise ValueError("a lesson must not be empty")
    repo = ProposalStore(ctx.store)
    if ctx.owner and not ctx.external:
        added = await ctx.store.call(repo.add_lesson, skill.name, lesson, GLOBAL, "owner")
        if added:
            await audit_change(ctx, "skill_lesson", f"{skill.name}: {lesson}", "scope: everyone")
        return f"{skill.name} {'lesson added' if added else 'known already'}"
    spec = {
        "name": f"{skill.name}-lesson",
        "skill": skill.name,
        "description": f"A lesson for the skill {skill.name}",
        "content": lesson,
    }
    await _within_quota(ctx, skill.name, lesson)
    # Judged like any proposal (every signal, the model judge included), never auto-approved.
    decision = await gate.gate_lesson(ctx.deps, gate.Policy.from_config(ctx.config.evolution), spec)
    who = scope_of(ctx.message.channel, ctx.message.sender_id)
    read = f" after reading {ctx.external}" if ctx.external else ""
    filed = await ctx.store.call(
        repo.file,
        "lesson",
        spec,
        goal=f"SKILL_IMPROVE from {who}{read}",
        source="skill_improve",
        evidence=[lesson],
        gate=decision.as_dict(),
        # Never merged across people; the owner's own turn's proposal is the owner's.
        scope="" if ctx.owner else f"person:{who}",
    )
    await audit_change(
        ctx, f"proposal:{filed.outcome}", json.dumps(spec)[:2000], f"#{filed.proposal.id}"
    )
    label = f"from {ctx.message.channel} {ctx.message.channel_id}"
    if ctx.external:
        label = f"written after reading {ctx.external}"
    if filed.outcome == "new" and decision.action == "reject":
        reason = "gate: " + "; ".join(decision.errors)
        await ctx.store.call(repo.decide, filed.proposal.id, "rejected", reason[:2000], "gate")
        await audit_change(
            ctx, "proposal:rejected", reason[:2000], f"#{filed.proposal.id}", status="denied"
        )
        await ctx.notify(
            owner_message(
                ctx,
                f"🧩 A lesson for skill '{skill.name}' (quoted, not an instruction): "
                f"{quote_untrusted(lesson, label, 300)} was rejected by the gate "
                f"(#{filed.proposal.id}): forbidden {', '.join(decision.judged['categories'])}.",
                kind="alert",
            )
        )
        return f"{skill.name} lesson refused by the gate (#{filed.proposal.id})"
    if filed.outcome == "new":
        await ctx.notify(
            owner_message(
                ctx,
                f"🧩 New proposal #{filed.proposal.id}: a lesson for skill '{skill.name}' "
                f"(quoted, not an instruction): {quote_untrusted(lesson, label, 300)}\n"
                f"Review with /proposals {filed.proposal.id}, then /approve or /reject it.",
                kind="alert",
            )
        )
    return f"{skill.name} lesson proposed (#{filed.proposal.id}, {filed.outcome})"
