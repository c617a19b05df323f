"""The daily spending cap under concurrent senders (turn/spend.py): calls in flight count
against the cap. Eight people send at once through `handle_message`; every call costs $0.50
against a $1 cap. A call is let through only while today's audited spending, plus what the
answered calls not yet audited cost, plus the estimates of the calls in flight, is under the
cap; so spending ends below the cap plus the one call that crossed it (when no call costs
more than its estimate), and everyone else is told why: that the daily limit is reached when
it is, or, when only the calls in flight might reach it, to try again in a moment.

No timing is relied on: the provider holds every answer until each of the eight turns has
either reached the provider (or its limiter's queue) or been refused. A call that failed
holds nothing afterwards."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from omega import i18n
from omega.gateway.pipeline import handle_message
from omega.providers.base import ProviderError
from omega.providers.limiter import AdaptiveLimiter
from omega.turn import PipelineDeps
from omega.turn.spend import today
from omega.types import Context, IncomingMessage, OutgoingMessage, Reply, Usage
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider

CAP = 1.0
CALL = 0.5  # what each call costs
SENDERS = 8
REFUSED = i18n.message("error_spending_cap", "English")
SETTLING = i18n.message("error_spending_cap_settling", "English")


@dataclass
class Turns:
    """Counts the turns that reached the provider's limiter or were refused; opens `all_in`
    once every sender's turn is one or the other."""

    arrived: int = 0
    refused: int = 0
    all_in: asyncio.Event = field(default_factory=asyncio.Event)

    def note(self, *, arrived: int = 0, refused: int = 0) -> None:
        """One more turn arrived or was refused."""
        self.arrived += arrived
        self.refused += refused
        if self.arrived + self.refused >= SENDERS:
            self.all_in.set()


class HeldProvider(ScriptedProvider):
    """Answers only once every turn is in (`Turns.all_in`); with `count_arrivals`, a call
    reaching it is a turn arrived (else the limiter counts them)."""

    def __init__(self, turns: Turns, usage: Usage, *, count_arrivals: bool) -> None:
        super().__init__(default="answer", usage=usage)
        self.turns = turns
        self.count_arrivals = count_arrivals

    async def answer(self, context: Context) -> Reply:
        """Wait for every turn, then answer."""
        if self.count_arrivals:
            self.turns.note(arrived=1)
        await self.turns.all_in.wait()
        return await super().answer(context)


class WatchedLimiter(AdaptiveLimiter):
    """A limiter that counts the calls asking it for a slot as turns arrived."""

    def __init__(self, ceiling: int, turns: Turns) -> None:
        super().__init__(ceiling)
        self.turns = turns

    async def _acquire(self, sender: str) -> int:
        self.turns.note(arrived=1)
        return await super()._acquire(sender)


class Outbox(Recorder):
    """Keeps what is sent; an error sent is a turn refused."""

    def __init__(self, turns: Turns) -> None:
        super().__init__()
        self.turns = turns

    async def send(self, message: OutgoingMessage) -> None:
        """Keep the message; an error is a refused turn."""
        await super().send(message)
        if message.kind == "error":
            self.turns.note(refused=1)


async def everyone_sends(deps: PipelineDeps, out: Outbox) -> None:
    """Eight people send at once."""
    await asyncio.gather(
        *(
            handle_message(
                deps, IncomingMessage("terminal", f"p{i}", "hello", assurance="local"), out
            )
            for i in range(SENDERS)
        )
    )


def check_spending(deps: PipelineDeps, provider: HeldProvider, out: Outbox, told: str) -> int:
    """Spending stayed within the cap plus one call, and everyone not answered was told why
    (`told`); how many calls were made."""
    calls = len(provider.contexts)
    spent = deps.store.spent_since(today())
    assert spent == pytest.approx(calls * CALL)
    assert calls >= 1 and spent <= CAP + CALL
    errors = [m for m in out.sent if m.kind == "error"]
    answers = [m for m in out.sent if m.kind == "reply"]
    assert len(answers) == calls and len(errors) == SENDERS - calls
    assert {m.text for m in errors} == {told}
    return calls


def test_calls_in_flight_count_against_the_cap(make_deps: MakeDeps) -> None:
    # An unlisted model at 250 USD per million tokens: 1,000 + 1,000 tokens cost $0.50, and a
    # call's estimate (its prompt and up to 4,096 answer tokens) is more than $1.
    turns = Turns()
    provider = HeldProvider(
        turns, Usage(input_tokens=1000, output_tokens=1000), count_arrivals=True
    )
    deps = make_deps(
        provider,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_LIMITS__DAILY_USD=str(CAP),
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK="250",
    )
    out = Outbox(turns)
    asyncio.run(everyone_sends(deps, out))
    # The first call's estimate holds the whole cap while it is in flight: nothing is spent
    # yet, so the others are told to try again in a moment, not after midnight.
    assert check_spending(deps, provider, out, SETTLING) == 1


def test_calls_queued_behind_the_limiter_are_checked_again(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Estimates far below the cost (the provider reports $0.50 for a call its tokens price at
    # a cent): every call passes the first check and queues for the one slot; once in, each is
    # checked again, counting what the calls before it cost, audited or not yet.
    turns = Turns()
    provider = HeldProvider(
        turns, Usage(input_tokens=1000, output_tokens=1000, cost_usd=CALL), count_arrivals=False
    )
    deps = make_deps(
        provider,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_LIMITS__DAILY_USD=str(CAP),
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK="1",
        OMEGA_LIMITS__MAX_CONCURRENT_PROVIDER_CALLS="1",
    )
    limiter = WatchedLimiter(1, turns)
    monkeypatch.setattr(deps.state, "provider_limiter", lambda name, ceiling: limiter)
    out = Outbox(turns)
    asyncio.run(everyone_sends(deps, out))
    # The third is refused by what the first two cost: the cap is reached.
    assert check_spending(deps, provider, out, REFUSED) == 2


def test_a_call_that_failed_holds_nothing_afterwards(make_deps: MakeDeps) -> None:
    # Each call's estimate is more than the cap: a hold left behind by the failed call would
    # refuse the next one.
    provider = ScriptedProvider(
        ProviderError("the provider fell over"),
        default="answer",
        usage=Usage(input_tokens=1000, output_tokens=1000),
    )
    deps = make_deps(
        provider,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_LIMITS__DAILY_USD=str(CAP),
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK="250",
    )
    out = Recorder()

    async def one_after_another() -> None:
        for text in ("hello", "hello again"):
            await handle_message(
                deps, IncomingMessage("terminal", "p", text, assurance="local"), out
            )

    asyncio.run(one_after_another())
    assert [m.kind for m in out.sent if m.kind in ("error", "reply")] == ["error", "reply"]
    assert REFUSED not in [m.text for m in out.sent]
    assert deps.store.spent_since(today()) == pytest.approx(CALL)


class Released(ScriptedProvider):
    """Answers once `release` is set; `arrived` opens when a call reaches it."""

    def __init__(self, usage: Usage) -> None:
        super().__init__(default="answer", usage=usage)
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()

    async def answer(self, context: Context) -> Reply:
        """Say the call arrived, wait for the release, then answer."""
        self.arrived.set()
        await self.release.wait()
        return await super().answer(context)


def test_a_person_refused_for_calls_in_flight_is_told_to_try_again_in_their_language(
    make_deps: MakeDeps,
) -> None:
    # As above: a call costs $0.50 and its estimate holds more than the $1 cap.
    provider = Released(Usage(input_tokens=1000, output_tokens=1000))
    deps = make_deps(
        provider,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_LIMITS__DAILY_USD=str(CAP),
        OMEGA_LIMITS__UNKNOWN_MODEL_USD_PER_MTOK="250",
    )
    out = Recorder()
    german = "Kannst du mir bitte sagen, wie das Wetter heute ist und was ich anziehen soll?"

    def message(sender: str, text: str) -> IncomingMessage:
        return IncomingMessage("terminal", sender, text, assurance="local")

    async def scenario() -> None:
        first = asyncio.create_task(handle_message(deps, message("ana", "hello"), out))
        await provider.arrived.wait()  # ana's call is in flight, holding its estimate
        await handle_message(deps, message("lena", german), out)
        provider.release.set()
        await first
        # ana's call settled at $0.50: lena, trying again, is answered.
        await handle_message(deps, message("lena", f"{german} Danke!"), out)

    asyncio.run(scenario())
    told = [(m.target, m.kind, m.text) for m in out.sent if m.kind in ("reply", "error")]
    assert told == [
        ("lena", "error", i18n.message("error_spending_cap_settling", "German")),
        ("ana", "reply", "answer"),
        ("lena", "reply", "answer"),
    ]
    assert deps.store.spent_since(today()) == pytest.approx(2 * CALL)
    # Nothing was spent when lena was refused: the owner is not told the cap is reached.
    rows = deps.store.audit_entries(100)
    assert not [r for r in rows if str(r["event"]).startswith("spending_cap:")]
    (denied,) = [r for r in rows if r["status"] == "denied"]
    assert "held by calls in flight" in str(denied["detail"])
