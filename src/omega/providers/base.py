"""The Provider protocol every AI backend implements, and its error type."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from omega import i18n
from omega.errors import OmegaError
from omega.types import Context, Reply

ErrorKind = Literal["timeout", "unavailable", "rate_limit", "error"]


class ProviderError(OmegaError):
    """A provider could not answer; `kind` picks the friendly message shown to the user, and
    `hint`, when set, is one sentence saying what to do instead (shown as it is)."""

    def __init__(self, message: str, kind: ErrorKind = "error", *, hint: str = "") -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.hint = hint


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
    kind = error.kind if isinstance(error, ProviderError) else "error"
    key = {
        "timeout": "error_timeout",
        "unavailable": "error_unavailable",
        "rate_limit": "error_rate_limit",
    }.get(kind, "error_generic")
    return i18n.message(key, language)
