"""A chain of providers: the first one that answers wins, the others are tried in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from omega.providers.base import Provider, ProviderError
from omega.types import Context, Reply

log = logging.getLogger(__name__)


class FallbackProvider:
    """Tries each provider in order and returns the first Reply; raises the last error if all fail.

    `timeouts`, when given, bounds each member's attempt so a hanging provider still leaves time
    for the ones after it (the caller's overall timeout should be their sum). A `context.model`
    names one of the first provider's models, so the others get the context without it and
    answer with their own configured model.
    """

    def __init__(
        self, providers: Sequence[Provider], timeouts: Sequence[float] | None = None
    ) -> None:
        if not providers:
            raise ValueError("FallbackProvider needs at least one provider")
        if timeouts is not None and len(timeouts) != len(providers):
            raise ValueError("FallbackProvider needs one timeout per provider")
        self.providers: tuple[Provider, ...] = tuple(providers)
        self.timeouts: tuple[float, ...] | None = None if timeouts is None else tuple(timeouts)

    @property
    def name(self) -> str:
        """The first provider's name: the one the chain is configured around."""
        return self.providers[0].name

    def tool_names(self) -> list[str]:
        """The first provider's tools (the pipeline's planner asks for them when present)."""
        names = getattr(self.providers[0], "tool_names", None)
        return list(names()) if callable(names) else []

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
        for index, provider in enumerate(self.providers):
            # Another provider would reject the first one's model name (gpt-4o-mini on Anthropic).
            member_context = context if index == 0 else replace(context, model=None)
            try:
                return await self._attempt(index, provider, member_context)
            except ProviderError as exc:
                last_error = exc
            except Exception as exc:  # a member's bug must not stop the chain
                last_error = ProviderError(f"{provider.name} crashed: {exc!r}")
                last_error.__cause__ = exc
            following = self.providers[index + 1].name if index + 1 < len(self.providers) else ""
            # ProviderError messages carry status codes and response bodies, never API keys.
            log.warning(
                "provider %s failed (%s): %s%s",
                provider.name,
                last_error.kind,
                last_error,
                f"; trying {following}" if following else "; no fallback left",
            )
        assert last_error is not None  # the loop ran at least once and every attempt failed
        raise last_error

    async def _attempt(self, index: int, provider: Provider, context: Context) -> Reply:
        if self.timeouts is None:
            return await provider.complete(context)
        timeout = self.timeouts[index]
        try:
            return await asyncio.wait_for(provider.complete(context), timeout)
        except TimeoutError as exc:
            raise ProviderError(
                f"{provider.name} gave no answer within {timeout:g}s", kind="timeout"
            ) from exc
