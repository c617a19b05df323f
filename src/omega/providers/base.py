"""The Provider protocol every AI backend implements, its error type, and where a failing call
leaves the tool calls it made and the tokens it was billed for."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from omega import i18n
from omega.errors import OmegaError
from omega.types import Context, Reply, ToolCall, Usage

# rate_limit: HTTP 429; overloaded: the provider is busy for everyone (HTTP 503, 529);
# spending_cap: Omega itself refused the call, today's spending cap is reached (turn/spend.py).
ErrorKind = Literal["timeout", "unavailable", "rate_limit", "overloaded", "spending_cap", "error"]
LOAD_KINDS = frozenset({"rate_limit", "overloaded"})  # answers that say: ask less at once
# The provider is down, not this request at fault: refused, reset, DNS, TLS, HTTP 5xx
# ("unavailable"; 503/529 "overloaded"), no answer in time ("timeout"). These open a fallback
# chain's breaker; a 4xx is the request's or the configuration's fault and a 429 is the
# limiter's business (providers/limiter.py), so neither does.
DOWN_KINDS = frozenset({"timeout", "unavailable", "overloaded"})
# Failures worth trying again later rather than giving up on the work (queued summaries).
RETRY_LATER_KINDS = DOWN_KINDS | {"rate_limit"}


def http_error_kind(status: int) -> ErrorKind:
    """The error kind of an HTTP status: 429 a rate limit, 503 and 529 an overload, 408 and 504
    a timeout, any other 5xx the provider down; any other 4xx this request's fault (a bad
    request, a wrong key or model name)."""
    if status == 429:
        return "rate_limit"
    if status in (503, 529):
        return "overloaded"
    if status in (408, 504):
        return "timeout"
    return "unavailable" if status >= 500 else "error"


class ProviderError(OmegaError):
    """A provider could not answer; `kind` picks the friendly message shown to the user, and
    `hint`, when set, is one sentence saying what to do instead (shown as it is);
    `retry_after`, the seconds the provider asked to wait (its `retry-after`), when it said;
    `message_key`, when set, the omega.i18n message shown instead of the kind's (in the
    person's language: a refusal by the spending cap that only waits for calls in flight)."""

    def __init__(
        self,
        message: str,
        kind: ErrorKind = "error",
        *,
        hint: str = "",
        retry_after: float | None = None,
        message_key: str = "",
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.hint = hint
        self.retry_after = retry_after
        self.message_key = message_key
        # What the failed call was billed for before it failed (set by turn.ask_provider, which
        # collects it from the providers; None: nothing), for the caller's audit row.
        self.spent: Spent | None = None


@dataclass(frozen=True)
class Spent:
    """Tokens a provider was billed for by a call that then failed (a tool loop that erred, a
    provider error or timeout after some requests): `provider` and `model` as an audit row
    names them."""

    provider: str
    model: str
    usage: Usage


@dataclass
class Salvage:
    """What the provider calls within `salvaged()` left behind when they failed."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    spent: list[Spent] = field(default_factory=list)


@runtime_checkable
class Provider(Protocol):
    """An AI backend: turns a Context into a Reply."""

    @property
    def name(self) -> str:
        """Short provider name, as in config (`openai`, `local`, ...)."""
        ...

    def availability(self) -> tuple[bool, str]:
        """Whether the provider can be used now, and a one-line reason (no secrets)."""
        ...

    async def prepare(self) -> None:
        """Load what the first call would otherwise load (libraries, weights), off the loop."""
        ...

    async def complete(self, context: Context) -> Reply:
        """Answer the context's conversation; raise ProviderError on failure."""
        ...


def friendly_error(error: Exception, language: str = "English") -> str:
    """The message a user sees instead of a raw provider error (the provider's own one-sentence
    hint when it has one, e.g. "run `claude` once to log in")."""
    if isinstance(error, ProviderError) and error.hint:
        return error.hint
    if isinstance(error, ProviderError) and error.message_key:
        return i18n.message(error.message_key, language)
    kind = error.kind if isinstance(error, ProviderError) else "error"
    key = {
        "timeout": "error_timeout",
        "unavailable": "error_unavailable",
        "rate_limit": "error_rate_limit",
        "overloaded": "error_rate_limit",
        "spending_cap": "error_spending_cap",
    }.get(kind, "error_generic")
    return i18n.message(key, language)


# What provider calls that failed part-way (timed out, cancelled, or erred after some requests
# or tools) leave: the provider hands its tool calls and its billed usage here before raising,
# so they are still recorded.
_SALVAGED: ContextVar[Salvage | None] = ContextVar("omega_salvaged", default=None)


def salvage_tool_calls(calls: Iterable[ToolCall]) -> None:
    """Keep the tool calls of a provider call that is failing, for whoever asked (`salvaged`)."""
    found = _SALVAGED.get()
    if found is not None:
        found.tool_calls.extend(calls)


def salvage_usage(provider: str, model: str, usage: Usage) -> None:
    """Keep what a provider call that is failing was billed for, for whoever asked
    (`salvaged`); a call that used no tokens and cost nothing leaves nothing."""
    found = _SALVAGED.get()
    billed = usage.input_tokens or usage.output_tokens or usage.cost_usd
    if found is not None and billed:
        found.spent.append(Spent(provider, model, usage))


@contextmanager
def salvaged() -> Iterator[Salvage]:
    """Collect the tool calls and billed usage of every provider call within that fails
    (a fallback chain's failed members included); the calls that succeed report theirs in
    their Reply."""
    found = Salvage()
    token = _SALVAGED.set(found)
    try:
        yield found
    finally:
        _SALVAGED.reset(token)
