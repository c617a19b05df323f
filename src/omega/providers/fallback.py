"""A chain of providers: the first one that answers wins, the others are tried in order.

A member that is down (providers.base.DOWN_KINDS: refused, reset, DNS, TLS, 5xx, timeout) has
its breaker opened: later calls skip it and go to the next member at once, instead of paying the
failed attempt on every call (a planning call and then the reply would pay twice). Every
`breaker_secs` a cheap probe (a few tokens, no tools) asks it again in the background; the
breaker closes when the probe is answered. A 4xx is this request's fault and opens nothing; a
429 is the limiter's business: with `limiter_for`, every member's calls and probes go through
that member's own limiter, and a member waiting out a `retry-after` is skipped meanwhile. The
last member is never skipped.

A probe is a paid call like any other, so under `[limits] daily_usd` it goes through
`probe_via` (turn.ask.ask_probe, set by the runtime): admitted as background work (event
`probe`) and audited with its cost. Once the day's spending has stopped background work, no
probe is made: the member's breaker stays open and replies keep going to the members after it
(the last is never skipped, so a person is still answered, by a fallback); the next day's first
due probe closes the breaker if the member answers. Probing anyway would spend past the line
background work must stop at, and letting a reply try the member instead would make a person
wait out a provider that may still be down.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from omega.providers.base import DOWN_KINDS, Provider, ProviderError
from omega.providers.limiter import LOAD_RETRIES, LimiterFor, limited_call
from omega.types import ChatMessage, Context, Reply

log = logging.getLogger(__name__)

# How a probe is asked: given the member, the probe's context and the call itself, it makes the
# call (or refuses to: a ProviderError of kind `spending_cap`) and answers its Reply.
ProbeVia = Callable[[Provider, Context, Callable[[], Awaitable[Reply]]], Awaitable[Reply]]

BREAKER_SECS = 30.0  # how long a dead member is skipped before it is probed
PROBE_TIMEOUT_SECS = 15.0
# The cheapest question that proves a member answers: a few tokens out, no tools, no history.
PROBE = Context(
    "Answer with the single word OK.",
    [ChatMessage("user", "ping")],
    max_tokens=5,
    use_tools=False,
)


@dataclass
class _Breaker:
    """One member's breaker: open since when, and the next probe's time."""

    open_since: float | None = None
    next_probe: float = 0.0
    probe: asyncio.Task[None] | None = None


class FallbackProvider:
    """Tries each provider in order and returns the first Reply; raises the last error if all fail.

    `timeouts`, when given, bounds each member's attempt so a hanging provider still leaves time
    for the ones after it (the caller's overall timeout should be their sum). A `context.model`
    names one of the first provider's models, so the others get the context without it and
    answer with their own configured model. `limiter_for`, when given, is each member's own
    limiter by name (the chain then limits its calls itself: `limits_members`).
    """

    def __init__(
        self,
        providers: Sequence[Provider],
        timeouts: Sequence[float] | None = None,
        *,
        breaker_secs: float = BREAKER_SECS,
        clock: Callable[[], float] = time.monotonic,
        limiter_for: LimiterFor | None = None,
    ) -> None:
        if not providers:
            raise ValueError("FallbackProvider needs at least one provider")
        if timeouts is not None and len(timeouts) != len(providers):
            raise ValueError("FallbackProvider needs one timeout per provider")
        self.providers: tuple[Provider, ...] = tuple(providers)
        self.timeouts: tuple[float, ...] | None = None if timeouts is None else tuple(timeouts)
        self.breaker_secs = breaker_secs
        self._clock = clock
        self._breakers = [_Breaker() for _ in self.providers]
        self.limiter_for = limiter_for
        # Set by the runtime (turn.ask.ask_probe): probes within the daily spending cap.
        self.probe_via: ProbeVia | None = None

    @property
    def limits_members(self) -> bool:
        """Whether each member's calls go through its own limiter here (not the caller's)."""
        return self.limiter_for is not None

    def is_open(self, index: int) -> bool:
        """Whether member `index` is being skipped as dead."""
        return self._breakers[index].open_since is not None

    @property
    def name(self) -> str:
        """The first provider's name: the one the chain is configured around."""
        return self.providers[0].name

    def tool_names(self, context: Context | None = None) -> list[str]:
        """The first provider's tools (for this person, when a context is given)."""
        names = getattr(self.providers[0], "tool_names", None)
        return list(names(context)) if callable(names) else []

    def sees_images(self) -> bool:
        """Whether the first provider shows images to its model."""
        check = getattr(self.providers[0], "sees_images", None)
        return bool(check()) if callable(check) else False

    def availability(self) -> tuple[bool, str]:
        """Available if any member is; the reason lists each member's own."""
        results = [(p.name, *p.availability()) for p in self.providers]
        reasons = "; ".join(
            f"{name}: {'ok' if ok else 'unavailable'}, {why}" for name, ok, why in results
        )
        return any(ok for _, ok, _ in results), f"fallback chain ({reasons})"

    async def prepare(self) -> None:
        """Prepare every member; a failure is logged so the others can still serve."""
        results = await asyncio.gather(
            *(p.prepare() for p in self.providers), return_exceptions=True
        )
        for provider, result in zip(self.providers, results, strict=True):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                log.warning("could not prepare provider %s: %r", provider.name, result)

    async def complete(self, context: Context) -> Reply:
        """The first member's Reply that succeeds; the last member's error if none does."""
        last_error: ProviderError | None = None
        last = len(self.providers) - 1
        for index, provider in enumerate(self.providers):
            if index < last and self.is_open(index):
                self._maybe_probe(index)
                log.debug("provider %s skipped: its breaker is open", provider.name)
                continue
            if index < last and self.limiter_for and self.limiter_for(provider.name).paused():
                log.debug("provider %s skipped: it asked to wait (retry-after)", provider.name)
                continue
            # Another provider would reject the first one's model name (gpt-4o-mini on Anthropic).
            member_context = context if index == 0 else replace(context, model=None)
            try:
                reply = await self._attempt(index, provider, member_context)
            except ProviderError as exc:
                last_error = exc
            except Exception as exc:  # a member's bug must not stop the chain
                last_error = ProviderError(f"{provider.name} crashed: {exc!r}")
                last_error.__cause__ = exc
            else:
                self._close(index)
                return reply
            if index < last and last_error.kind in DOWN_KINDS:
                self._open(index)
            following = self.providers[index + 1].name if index + 1 < len(self.providers) else ""
            # ProviderError messages carry status codes and response bodies, never API keys.
            log.warning(
                "provider %s failed (%s): %s%s",
                provider.name,
                last_error.kind,
                last_error,
                f"; trying {following}" if following else "; no fallback left",
            )
        if last_error is None:  # unreachable: the last member is never skipped
            raise ProviderError("no provider could be asked", kind="unavailable")
        raise last_error

    def _open(self, index: int) -> None:
        breaker = self._breakers[index]
        if breaker.open_since is None:
            log.warning(
                "provider %s looks down: skipped for %gs, then probed",
                self.providers[index].name,
                self.breaker_secs,
            )
            breaker.open_since = self._clock()
        breaker.next_probe = self._clock() + self.breaker_secs

    def _close(self, index: int) -> None:
        breaker = self._breakers[index]
        if breaker.open_since is not None:
            log.info("provider %s answers again: breaker closed", self.providers[index].name)
        breaker.open_since = None

    def _maybe_probe(self, index: int) -> None:
        """Start the background probe of an open member when it is due (one at a time)."""
        breaker = self._breakers[index]
        if self._clock() < breaker.next_probe or (breaker.probe and not breaker.probe.done()):
            return
        breaker.next_probe = self._clock() + self.breaker_secs
        breaker.probe = asyncio.create_task(self._probe(index), name=f"probe:{index}")

    async def _probe(self, index: int) -> None:
        provider = self.providers[index]

        async def ask() -> Reply:
            if self.limiter_for is None:
                return await asyncio.wait_for(provider.complete(PROBE), PROBE_TIMEOUT_SECS)
            # Within the member's limit, after any retry-after it gave.
            limiter = self.limiter_for(provider.name)
            return await asyncio.wait_for(
                limited_call(limiter, provider, PROBE, retries=0), PROBE_TIMEOUT_SECS
            )

        try:
            await (ask() if self.probe_via is None else self.probe_via(provider, PROBE, ask))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, ProviderError) and exc.kind == "spending_cap":
                # Not made: the breaker stays open until a later probe may spend.
                log.debug("provider %s not probed: %s", provider.name, exc)
                return
            log.info("provider %s still down: %s", provider.name, exc)
            self._open(index)
        else:
            self._close(index)

    async def _attempt(self, index: int, provider: Provider, context: Context) -> Reply:
        timeout = None if self.timeouts is None else self.timeouts[index]
        try:
            if self.limiter_for is not None:
                # A member before the last one leaves a refusal for load to the next member.
                retries = 0 if index < len(self.providers) - 1 else LOAD_RETRIES
                limiter = self.limiter_for(provider.name)
                return await limited_call(
                    limiter, provider, context, attempt_secs=timeout, retries=retries
                )
            return await asyncio.wait_for(provider.complete(context), timeout)
        except TimeoutError as exc:
            if timeout is None:
                raise
            raise ProviderError(
                f"{provider.name} gave no answer within {timeout:g}s", kind="timeout"
            ) from exc
