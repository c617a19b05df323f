"""The daily spending cap (`[limits] daily_usd`): what today's audited provider calls cost, and
whether a call of one kind may still spend.

Today is the UTC day. Background work (introspection, limitation analysis, the critic,
summaries and facts, the heartbeat, a fallback chain's probes, and any call of a kind not
known) stops once today's spending reaches BACKGROUND_SHARE of the cap; calls that answer
someone now (replies, their planning, a voice note's transcription, `omega ask`) stop at the
cap itself. Each stop is told to the owner once a day (an owner alert, and an audit row
`spending_cap:background` or `spending_cap:replies`). A call's cost is known only once it has
answered, so the call that crosses a line still completes. Every billed token counts
(`costed`): a call that failed counts what it was billed for before it failed, and a model with
no known price costs `[limits] unknown_model_usd_per_mtok`; only free providers (the bundled
model, Ollama) count as 0. A transcription is priced by the minute or by the tokens its service
reports (prices.transcription_cost) and admitted with its own estimate (`admit_usd`).

Calls in flight count too (`admit`): with a cap set, each call holds a pessimistic estimate of
its price (`estimate`) from before it is made until it answers; then what it cost stays counted
here until its audit row is written (the store says so: AuditLog.cost_recorded). A call is made
only while today's audited spending, plus those answered costs, plus the other calls'
estimates, is under its line; it is checked again once the provider's concurrency limiter lets
it through. So within one process spending ends below the cap plus the cost of the one call
that crossed it, as long as no call costs more than its estimate. This is per process: replicas
sharing a PostgreSQL store see each other's spending only once audited, so each may go past the
cap by the calls it had in flight then.

A person refused is told why in their language: "after midnight" when what was spent (audited,
or answered and about to be) reached the line; "try again in a moment" when only the estimates
of the calls in flight would cross it (they settle within a call's time, often far below).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from omega.memory.audit import FOREGROUND_KINDS, AuditEntry, call_kind
from omega.memory.store import Store
from omega.owner import owner_alert
from omega.providers import prices
from omega.providers.base import ProviderError, Spent
from omega.turn.deps import PipelineDeps
from omega.turn.records import db_call
from omega.types import Context, Reply, Usage

log = logging.getLogger(__name__)

# Background work stops at this share of the cap, leaving the rest for answering people.
BACKGROUND_SHARE = 0.8
# A call's estimate: its prompt at this many characters a token (counted low, so the estimate
# errs high: English runs about four), each image at IMAGE_TOKENS, and its answer at its
# max_tokens, or ASSUMED_OUTPUT_TOKENS when it sets none.
CHARS_PER_TOKEN = 3
IMAGE_TOKENS = 1600
ASSUMED_OUTPUT_TOKENS = 4096


@dataclass(frozen=True)
class Allowance:
    """Where today's spending stands for one kind of call."""

    kind: str  # the call's kind of spending (memory.audit.CALL_KINDS)
    spent: float  # USD spent today, all calls together (audited, or answered and not yet)
    cap: float  # [limits] daily_usd (0: no cap)
    stops_at: float  # where calls of this kind stop
    held: float = 0.0  # the estimates of this process's calls in flight (held before the asker)

    @property
    def background(self) -> bool:
        """Whether calls of this kind are background work (they stop first)."""
        return self.kind not in FOREGROUND_KINDS

    @property
    def allowed(self) -> bool:
        """Whether a call of this kind may spend now (the calls in flight included)."""
        return self.cap <= 0 or self.spent + self.held < self.stops_at


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


async def allowance(deps: PipelineDeps, event: str, hold: Hold | None = None) -> Allowance:
    """Where today's spending stands for a provider call audited as `event`: the audited
    spending and this process's answered calls not audited yet, and the estimates of its calls
    in flight (those held before `hold`, the asking call's, when it holds one)."""
    kind = call_kind(event)
    cap = deps.config.limits.daily_usd
    stops_at = cap if kind in FOREGROUND_KINDS else cap * BACKGROUND_SHARE
    if cap <= 0:  # no cap: nothing to read
        return Allowance(kind, 0.0, cap, stops_at)
    # Before the rows are read: a cost whose row is written meanwhile counts twice, never 0.
    ledger = _LEDGERS.get(deps.store)
    held, unrecorded = (0.0, 0.0) if ledger is None else ledger.held(hold.seq if hold else None)
    spent = await db_call(deps, "today's spending", 0.0, deps.store.spent_since, today())
    return Allowance(kind, spent + unrecorded, cap, stops_at, held)


async def refusal(deps: PipelineDeps, event: str, hold: Hold | None = None) -> ProviderError | None:
    """None when a provider call audited as `event` may spend; else the error that refuses it
    (kind `spending_cap`), the owner told once a day when the money is spent. Its friendly
    message says the cap is reached (after midnight) when it is; when only the estimates of the
    calls in flight would cross the line, it says to try again in a moment (they settle)."""
    found = await allowance(deps, event, hold)
    if found.allowed:
        return None
    reached = found.spent >= found.stops_at
    if reached:
        await _tell_owner_once(deps, found)
    in_flight = f" and {found.held:.4f} USD held by calls in flight" if found.held else ""
    return ProviderError(
        f"daily spending cap: {found.spent:.4f} of {found.cap:g} USD spent today (UTC)"
        f"{in_flight}; {found.kind} calls stop at {found.stops_at:g} USD",
        kind="spending_cap",
        message_key="" if reached else "error_spending_cap_settling",
    )


class _Ledger:
    """What one process counts against today's cap beyond the audit rows of its store: the
    estimates its calls in flight hold, in the order they were held, and what its answered
    calls cost until their audit rows are written (the store's thread says when, through
    AuditLog.cost_recorded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._day = ""
        self._next = 0
        self._holds: dict[int, float] = {}  # estimates by the order they were held in
        self._unrecorded: list[float] = []

    def held(self, before: int | None = None) -> tuple[float, float]:
        """(the estimates held before hold `before`, or all; the costs not audited yet)."""
        with self._lock:
            holds = self._holds.items()
            ahead = sum(usd for seq, usd in holds if before is None or seq < before)
            return ahead, sum(self._unrecorded)

    def hold(self, usd: float, day: str) -> int:
        """A call of `day` holds `usd` from now; its place in the order of holds."""
        with self._lock:
            if day != self._day:  # yesterday's calls count in yesterday's rows, or today's
                self._day, self._unrecorded = day, []
            self._next += 1
            self._holds[self._next] = usd
            return self._next

    def settle(self, seq: int, costs: Sequence[float]) -> None:
        """Hold `seq`'s call answered, failed or was refused: its estimate goes, and `costs`,
        what it cost, stay counted until their audit rows are written."""
        with self._lock:
            self._holds.pop(seq, None)
            self._unrecorded.extend(costs)

    def recorded(self, cost: float) -> None:
        """An audit row saying a call cost `cost` was written (on the store's thread)."""
        with self._lock:
            if cost in self._unrecorded:
                self._unrecorded.remove(cost)


# One ledger per store (a process has one); the store tells its ledger of each row written.
_LEDGERS: weakref.WeakKeyDictionary[Store, _Ledger] = weakref.WeakKeyDictionary()
# The list prices of the models estimated, USD a token (input, output); None: not listed.
_RATES: dict[tuple[str, str, str], tuple[float, float] | None] = {}


class Hold:
    """One call's claim on today's cap (`admit`): its estimate while it is in flight."""

    def __init__(self, ledger: _Ledger | None = None, seq: int = 0) -> None:
        self._ledger = ledger
        self.seq = seq  # its place in the order of holds

    @property
    def capped(self) -> bool:
        """Whether the call is made under a cap and still holds its estimate."""
        return self._ledger is not None

    def settle(self, *costs: float | None) -> None:
        """The call is over: its estimate goes and `costs`, what it cost (one per audit row it
        gets), count until their rows are written. Once; later calls do nothing."""
        ledger, self._ledger = self._ledger, None
        if ledger is not None:
            ledger.settle(self.seq, [cost for cost in costs if cost])

    async def recheck(self, deps: PipelineDeps, event: str) -> None:
        """Check again once the limiter let the call through (what it waited for, calls ahead
        of it may have spent); raise the refusal when it may no longer spend. Calls held after
        it counted it when they were checked, so only those held before count here."""
        if self._ledger is None:
            return
        refused = await refusal(deps, event, self)
        if refused is not None:
            raise refused


_UNCAPPED = Hold()


async def admit(
    deps: PipelineDeps, event: str, context: Context, provider: str | None = None
) -> Hold:
    """Let a provider call audited as `event` spend, holding its estimate against today's cap
    until it is settled (`Hold.settle`, by turn.ask); raise the spending cap's ProviderError
    when it may not. `provider`: the member of a chain it asks (a probe), else the chain's
    first. With no cap, nothing is estimated or held."""
    if deps.config.limits.daily_usd <= 0:
        return _UNCAPPED
    return await admit_usd(deps, event, await estimate(deps, context, provider))


async def admit_usd(deps: PipelineDeps, event: str, usd: float) -> Hold:
    """`admit` for a call its caller estimated itself (`usd`, what it may cost at most: a
    voice note's transcription, priced by the minute); with no cap, nothing is held."""
    if deps.config.limits.daily_usd <= 0:
        return _UNCAPPED
    ledger = _LEDGERS.get(deps.store)
    if ledger is None:
        ledger = _LEDGERS[deps.store] = _Ledger()
        deps.store.cost_recorded = ledger.recorded
    # Held, then checked against the holds before it (with no wait between): of two calls
    # checked at once, the later counts the earlier.
    hold = Hold(ledger, ledger.hold(usd, today()))
    try:
        refused = await refusal(deps, event, hold)
    except BaseException:
        hold.settle()
        raise
    if refused is not None:
        hold.settle()
        raise refused
    return hold


async def estimate(deps: PipelineDeps, context: Context, provider: str | None = None) -> float:
    """What a call may cost at most, in USD, before it is made: its prompt (CHARS_PER_TOKEN
    characters a token, IMAGE_TOKENS an image) and a whole answer of its max_tokens
    (ASSUMED_OUTPUT_TOKENS when it sets none), at its model's list price, or at `[limits]
    unknown_model_usd_per_mtok` when the model is not listed (as `costed` counts such a call);
    0 for a free provider. A chain is priced as its first member unless `provider` names the
    member asked; a call whose tools make several requests, or a provider's own price above
    the list, may cost more."""
    provider = provider or deps.provider.name
    if provider in prices.FREE_PROVIDERS:
        return 0.0
    chars = len(context.system_prompt) + sum(len(m.content) for m in context.messages)
    tokens_in = chars // CHARS_PER_TOKEN + 1 + IMAGE_TOKENS * len(context.images)
    tokens_out = context.max_tokens or ASSUMED_OUTPUT_TOKENS
    section = getattr(deps.config.provider, provider.replace("-", "_"), None)
    model = context.model or str(getattr(section, "model", "") or "")
    key = (provider, model, str(getattr(section, "base_url", "") or ""))
    if key not in _RATES:  # genai-prices is imported and searched off the loop, once
        _RATES[key] = await asyncio.to_thread(_list_rates, *key)
    rates = _RATES[key]
    if rates is None:
        return (tokens_in + tokens_out) * deps.config.limits.unknown_model_usd_per_mtok / 1e6
    return tokens_in * rates[0] + tokens_out * rates[1]


def _list_rates(provider: str, model: str, base_url: str) -> tuple[float, float] | None:
    """The list price of `model`'s input and output tokens, USD a token; None if not listed."""
    million = 1_000_000
    found_in = prices.list_price(provider, model, Usage(input_tokens=million), base_url)
    found_out = prices.list_price(provider, model, Usage(output_tokens=million), base_url)
    if found_in is None or found_out is None:
        return None
    return found_in / million, found_out / million


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
