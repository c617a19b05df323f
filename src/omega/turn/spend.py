"""The daily spending cap (`[limits] daily_usd`): what today's audited provider calls cost, and
whether a call of one kind may still spend.

Today is the UTC day. Background work (introspection, limitation analysis, the critic,
summaries and facts, the heartbeat, and any call of a kind not known) stops once today's
spending reaches BACKGROUND_SHARE of the cap; calls that answer someone now (replies, their
planning, `omega ask`) stop at the cap itself. Each stop is told to the owner once a day (an
owner alert, and an audit row `spending_cap:background` or `spending_cap:replies`). A call's
cost is known only once it has answered, so the call that crosses a line still completes.
Every billed token counts (`costed`): a call that failed counts what it was billed for before
it failed, and a model with no known price costs `[limits] unknown_model_usd_per_mtok`; only
free providers (the bundled model, Ollama) count as 0.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from omega.memory.audit import FOREGROUND_KINDS, AuditEntry, call_kind
from omega.owner import owner_alert
from omega.providers import prices
from omega.providers.base import ProviderError, Spent
from omega.turn.deps import PipelineDeps
from omega.turn.records import db_call
from omega.types import Reply, Usage

log = logging.getLogger(__name__)

# Background work stops at this share of the cap, leaving the rest for answering people.
BACKGROUND_SHARE = 0.8


@dataclass(frozen=True)
class Allowance:
    """Where today's spending stands for one kind of call."""

    kind: str  # the call's kind of spending (memory.audit.CALL_KINDS)
    spent: float  # USD spent today, all calls together
    cap: float  # [limits] daily_usd (0: no cap)
    stops_at: float  # where calls of this kind stop

    @property
    def background(self) -> bool:
        """Whether calls of this kind are background work (they stop first)."""
        return self.kind not in FOREGROUND_KINDS

    @property
    def allowed(self) -> bool:
        """Whether a call of this kind may spend now."""
        return self.cap <= 0 or self.spent < self.stops_at


def today() -> str:
    """Today's UTC day, "YYYY-MM-DD" (it compares with the database's times as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%d")


def costed(deps: PipelineDeps, reply: Reply) -> Reply:
    """`reply` with a cost the cap counts (prices.with_cost): the reported one, else its tokens
    at `[limits] unknown_model_usd_per_mtok`."""
    usage = prices.with_cost(
        reply.usage, reply.provider, deps.config.limits.unknown_model_usd_per_mtok
    )
    return reply if usage is reply.usage else replace(reply, usage=usage)


def costed_spent(deps: PipelineDeps, spent: Sequence[Spent]) -> Spent | None:
    """What failed provider calls were billed for, costed as `costed` does, in one: their
    provider and model when all share them (else the chain's name and none); None if nothing."""
    if not spent:
        return None
    rate = deps.config.limits.unknown_model_usd_per_mtok
    usages = [prices.with_cost(s.usage, s.provider, rate) for s in spent]
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    providers = {s.provider for s in spent}
    models = {s.model for s in spent}
    return Spent(
        provider=providers.pop() if len(providers) == 1 else deps.provider.name,
        model=models.pop() if len(models) == 1 else "",
        usage=Usage(
            input_tokens=sum(u.input_tokens for u in usages),
            output_tokens=sum(u.output_tokens for u in usages),
            cost_usd=sum(costs) if costs else None,
            cached_tokens=sum(u.cached_tokens for u in usages),
        ),
    )


async def allowance(deps: PipelineDeps, event: str) -> Allowance:
    """Where today's spending stands for a provider call audited as `event`."""
    kind = call_kind(event)
    cap = deps.config.limits.daily_usd
    stops_at = cap if kind in FOREGROUND_KINDS else cap * BACKGROUND_SHARE
    if cap <= 0:  # no cap: nothing to read
        return Allowance(kind, 0.0, cap, stops_at)
    spent = await db_call(deps, "today's spending", 0.0, deps.store.spent_since, today())
    return Allowance(kind, spent, cap, stops_at)


async def refusal(deps: PipelineDeps, event: str) -> ProviderError | None:
    """None when a provider call audited as `event` may spend; else the error that refuses it
    (kind `spending_cap`, whose friendly message says so), the owner told once a day."""
    found = await allowance(deps, event)
    if found.allowed:
        return None
    await _tell_owner_once(deps, found)
    return ProviderError(
        f"daily spending cap: {found.spent:.4f} of {found.cap:g} USD spent today (UTC); "
        f"{found.kind} calls stop at {found.stops_at:g} USD",
        kind="spending_cap",
    )


async def _tell_owner_once(deps: PipelineDeps, found: Allowance) -> None:
    """The first refusal of the day at each line writes its audit row and alerts the owner."""
    stage = "background" if found.background else "replies"
    what = (
        "background work (introspection, analysis, critic, summaries, heartbeat) is paused"
        if found.background
        else "replies to people are paused too; they are told why"
    )
    text = (
        f"💸 Today's spending has reached {found.spent:.2f} of the {found.cap:g} USD daily cap "
        f"([limits] daily_usd): {what} until midnight UTC."
    )
    entry = AuditEntry(
        channel="omega",
        sender_id="",
        status="denied",
        event=f"spending_cap:{stage}",
        output_text=text,
        detail=f"spent {found.spent:.4f} USD; {stage} stop at {found.stops_at:g} USD",
    )
    store = deps.store
    if not await db_call(deps, "note the spending cap", False, store.audit_once, entry, today()):
        return  # told already today
    log.warning("%s", text)
    tell = deps.state.tell_owner
    if tell is not None:
        await tell(owner_alert(text, priority="urgent"))
    else:  # no running service: kept for the owner's next visit
        await db_call(deps, "keep the owner alert", 0, store.keep_owner_alert, text, "alert")
