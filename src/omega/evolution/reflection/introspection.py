"""The introspection loop (spec 002): after every N recorded tool calls of an agent, a cheap
model reviews the timeline; its JSON passes the validation loop within a budget; learnings
are stored (and recalled into later contexts); in `active` mode a repeated pattern becomes a
skill proposal that goes through the gate.

What is learned is kept for whose calls they were: a person's own chat, or a group room (whoever
spoke there, the owner too: a room's prompt carries other members' words), whose lessons are
the room's, recalled only in that room, and whose suggested skill waits for the owner."""

from __future__ import annotations

import json
import logging
from typing import Any

from omega.evolution.gaps import submit
from omega.evolution.proposals import LoopResult, ProposalStore, scope_of, validated_json
from omega.evolution.reflection.critic import review_tools
from omega.evolution.reflection.lessons import room_scope
from omega.memory.db import utc_now
from omega.memory.provenance import read_name
from omega.memory.store import Store
from omega.replica import replica_name
from omega.turn import (
    Outbox,
    PipelineDeps,
    ask_provider,
    models_for,
    stored_owner,
)
from omega.types import ChatMessage, Context, Reply

log = logging.getLogger(__name__)
PREVIEW = 160
# How long a replica may take to evaluate a batch before another may (it is released at once).
INTROSPECTION_LEASE_SECS = 600.0

EVALUATION_PROMPT = """Analyse these actions of yours. What worked? What failed?
Are there patterns that keep repeating? Should a skill handle this better next time?

{timeline}

Answer with JSON only:
{{"learnings": ["<concrete lesson>", ...],
  "repeated_pattern": true | false,
  "pattern_description": "<the pattern, if any>",
  "suggested_skill": {{"operation": "create", "name": "<kebab-case>", "category": "other",
    "description": "<10-500 chars>", "trigger_phrases": ["..."],
    "content": "<Markdown instructions>"}} | null,
  "satisfaction": <0.0-1.0, how well these actions served the person>,
  "summary": "<one line>"}}"""


def timeline(rows: list[dict[str, Any]]) -> str:
    """Tool calls as a readable numbered timeline (✅ / ❌, arguments, result preview)."""
    lines = []
    for index, row in enumerate(rows, 1):
        mark = "✅" if row["ok"] else "❌"
        try:
            args = json.loads(row["arguments"])
            shown = ", ".join(f"{k}={json.dumps(v)[:60]}" for k, v in args.items())
        except (ValueError, AttributeError):
            shown = str(row["arguments"])[:120]
        result = row["error"] if not row["ok"] else row["result_preview"]
        lines.append(f"{index}. {mark} {row['tool']}({shown})\n   → {str(result)[:PREVIEW]}")
    return "\n".join(lines)


def check_evaluation(data: dict[str, Any], active: bool) -> list[str]:
    """Spec 002's checks on the model's evaluation."""
    errors = []
    learnings = data.get("learnings")
    if not isinstance(learnings, list) or not all(
        isinstance(item, str) and item.strip() for item in learnings
    ):
        errors.append("learnings must be a list of non-empty strings")
    if not isinstance(data.get("repeated_pattern"), bool):
        errors.append("repeated_pattern must be true or false")
    if not isinstance(data.get("summary"), str) or not data["summary"].strip():
        errors.append("summary is required")
    satisfaction = data.get("satisfaction")
    if satisfaction is not None and not (
        isinstance(satisfaction, int | float) and 0 <= satisfaction <= 1
    ):
        errors.append("satisfaction must be a number from 0 to 1")
    if active and data.get("repeated_pattern") is True:
        skill = data.get("suggested_skill")
        if not isinstance(skill, dict):
            errors.append("a repeated pattern needs a suggested_skill object")
        else:
            for key in ("name", "content", "operation"):
                if not isinstance(skill.get(key), str) or not skill[key].strip():
                    errors.append(f"suggested_skill.{key} must be a non-empty string")
    return errors


def pending_calls(store: Store, agent: str) -> list[dict[str, Any]]:
    """The agent's tool calls recorded since its last introspection cycle, each with `room`,
    its conversation's key (a group room's, where `is_group`; "" when it has none)."""
    rows = store.query(
        "SELECT COALESCE(MAX(last_tool_call_id), 0) AS last FROM introspection_cycles "
        "WHERE agent = ?",
        (agent,),
    )
    last = int(rows[0]["last"]) if rows else 0
    return [
        dict(row)
        for row in store.query(
            "SELECT t.*, COALESCE(c.thread, '') AS room FROM tool_calls t "
            "LEFT JOIN conversations c ON c.id = t.conversation_id "
            "WHERE t.agent = ? AND t.id > ? ORDER BY t.id LIMIT 200",
            (agent, last),
        )
    ]


def record_cycle(
    store: Store,
    agent: str,
    last_id: int,
    result: LoopResult,
    summary: str,
    satisfaction: float | None,
) -> None:
    """Remember that a cycle ran, what it cost and where it stopped."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO introspection_cycles (agent, last_tool_call_id, status, attempts, "
            "input_tokens, output_tokens, cost_usd, summary, satisfaction, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                agent,
                last_id,
                result.status,
                result.attempts,
                result.input_tokens,
                result.output_tokens,
                result.cost_usd,
                summary[:500],
                satisfaction,
                utc_now(),
            ),
        )


def read_external(rows: list[dict[str, Any]]) -> bool:
    """Whether a timeline's calls may have read text nobody here wrote (memory.provenance
    `read_name`): the gate then never approves a skill it suggests by itself (issue 37)."""
    return any(read_name(str(row["tool"]), str(row.get("result_preview") or "")) for row in rows)


async def maybe_introspect(deps: PipelineDeps, out: Outbox, agent: str) -> LoopResult | None:
    """Run one cycle when `introspect_interval` new tool calls of `agent` were recorded: one
    evaluation per person (or group room) whose calls they were, so what is learned stays
    theirs."""
    evo = deps.config.evolution
    if evo.self_learn == "off":
        return None
    store = deps.store
    rows = await store.call(pending_calls, store, agent)
    if len(rows) < evo.introspect_interval:
        return None
    # Once across the replicas sharing the store: the one holding this lease evaluates these
    # calls; another that counted the same calls leaves them (they wait for the next cycle).
    lease, holder = f"job:introspection:{agent}", replica_name()
    if not await store.call(store.lease_acquire, lease, holder, INTROSPECTION_LEASE_SECS):
        return None
    try:
        rows = await store.call(pending_calls, store, agent)  # what is still pending, now
        if len(rows) < evo.introspect_interval:
            return None
        return await _evaluate_all(deps, out, agent, rows)
    finally:
        await store.call(store.lease_release, lease, holder)


async def _evaluate_all(
    deps: PipelineDeps, out: Outbox, agent: str, rows: list[dict[str, Any]]
) -> LoopResult | None:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(whose(row), []).append(row)
    result: LoopResult | None = None
    for scope, group in groups.items():
        result = await _evaluate(deps, out, agent, scope, group, int(rows[-1]["id"]))
    await review_tools(deps, out)
    return result


def whose(row: dict[str, Any]) -> str:
    """The scope what a tool call teaches is kept under: its group room's (no one person's,
    the speaker's words there are mixed with other members'), else its person's."""
    if row.get("is_group"):
        return room_scope(str(row["channel"]), str(row.get("room") or ""))
    return scope_of(str(row["channel"]), str(row["sender_id"]))


async def _the_owners(deps: PipelineDeps, row: dict[str, Any]) -> bool:
    """Whether these tool calls were made answering the owner (proven when the turn ran, by
    their own channel id), or by Omega itself; not when that cannot be read (fails closed)."""
    channel, person = str(row["channel"] or ""), str(row["sender_id"] or "")
    try:
        return await deps.store.call(stored_owner, deps.store, deps.config, channel, person)
    except Exception:
        log.exception("could not tell whose tool calls these were (%s)", scope_of(channel, person))
        return False


async def _evaluate(
    deps: PipelineDeps,
    out: Outbox,
    agent: str,
    scope: str,
    rows: list[dict[str, Any]],
    last_id: int,
) -> LoopResult:
    """One evaluation of one person's (or group room's) tool calls; learnings are kept for
    them. A room's suggested skill is the room's: held for the owner, whoever spoke there."""
    evo = deps.config.evolution
    store = deps.store
    repo = ProposalStore(store)
    active = evo.self_learn == "active"
    room = any(row.get("is_group") for row in rows)  # grouped by whose(): all or none
    prompt = EVALUATION_PROMPT.format(timeline=timeline(rows))
    fragments = await store.call(repo.fragments, "introspection_evaluation")
    if fragments:
        prompt += "\n\nGuidance from earlier reviews:\n" + "\n".join(f"- {f}" for f in fragments)
    fast, _ = models_for(deps.provider.name, deps.config)  # the cheapest configured model

    async def ask(text: str) -> Reply:
        return await ask_provider(
            deps,
            Context(
                system_prompt="", model=fast, use_tools=False, messages=[ChatMessage("user", text)]
            ),
            audit_as="introspection",
        )

    result = await validated_json(
        ask,
        prompt,
        lambda d: check_evaluation(d, active),
        max_retries=evo.max_retries,
        budget_usd=evo.budget_usd,
        budget_tokens=evo.budget_tokens,
    )
    data = result.data or {}
    satisfaction = data.get("satisfaction")
    await store.call(
        record_cycle,
        store,
        agent,
        last_id,
        result,
        str(data.get("summary", "")),
        float(satisfaction) if isinstance(satisfaction, int | float) else None,
    )
    if result.data is None:
        log.warning(
            "introspection cycle for %s dropped (%s): %s",
            agent,
            result.status,
            "; ".join(result.errors),
        )
        return result
    await store.call(repo.add_learnings, agent, [str(x) for x in data["learnings"]], scope)
    log.info(
        "introspection for %s: %d learnings (%s tokens)",
        agent,
        len(data["learnings"]),
        result.input_tokens + result.output_tokens,
    )
    if active and data["repeated_pattern"] and isinstance(data.get("suggested_skill"), dict):
        skill = dict(data["suggested_skill"])
        # No risk is assumed: the gate judges it from the content, like any proposal.
        spec = {
            "kind": "skill",
            "name": skill.get("name"),
            "description": skill.get("description") or data.get("pattern_description", ""),
            "category": skill.get("category", "other"),
            "inputs": {"type": "object", "properties": {}},
            "risk_level": skill.get("risk_level", "medium"),
            "trigger_phrases": skill.get("trigger_phrases", []),
            "content": skill.get("content", ""),
            "rationale": data.get("pattern_description", ""),
        }
        await submit(
            deps,
            out,
            spec,
            goal=str(data.get("pattern_description", "")),
            source="introspection",
            evidence=timeline(rows[-6:]).splitlines(),
            # A pattern in someone else's tool calls is theirs, one in a room's calls the
            # room's (the owner's there too): never approved by the gate.
            scope="" if not room and await _the_owners(deps, rows[0]) else scope,
            # Nor one from calls that read external content (issue 37).
            hold=room or read_external(rows),
        )
    return result
