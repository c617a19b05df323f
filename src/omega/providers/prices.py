"""What a provider call costs when the provider does not say: the list price of its model
(genai-prices, the table pydantic-ai prices API answers with), else `[limits]
unknown_model_usd_per_mtok`, so the daily cap sees every billed token.

The bundled local model and Ollama (a server of your own) are free; Claude Code reports its
own cost. A voice note's transcription is priced by the tokens its service reports or by the
minute of audio (`transcription_cost`). genai-prices is imported lazily (about 0.15 s and
pydantic): the lean path loads it on a worker thread while its request is in flight.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from omega.types import Usage

if TYPE_CHECKING:
    from pydantic_ai.usage import RunUsage

# Providers whose calls cost nothing per token: the bundled model and an Ollama server.
FREE_PROVIDERS = frozenset({"local", "ollama"})
# Providers that report each call's cost themselves (so no price table is needed).
SELF_REPORTING = frozenset({"claude-code"})
# Omega's provider names that genai-prices knows by another id.
_PRICE_IDS = {"gemini": "google"}
# A minute of speech as tokens, for a transcription model with no list price: OpenAI bills
# about this many audio tokens a minute (gpt-4o-transcribe: $6 per million, ~$0.006 a minute).
AUDIO_TOKENS_PER_MINUTE = 1000
# The services genai-prices lists transcription models of (whisper-1; whisper-large-v3).
_TRANSCRIBERS = ("openai", "groq")


def load() -> None:
    """Import genai-prices and load its table (on a worker thread, before it is needed)."""
    from genai_prices.data_snapshot import get_snapshot

    get_snapshot()


def list_price(provider: str, model: str, usage: Usage, base_url: str = "") -> float | None:
    """What `usage` of `model` costs in USD by genai-prices (matched on the endpoint's URL
    first, then on the provider, as pydantic-ai does); None when the model is not listed."""
    found = _calculation(provider, model, usage, base_url)
    return None if found is None else float(found.total_price)


def calculation(provider: str, model: str, base_url: str = "") -> Any | None:
    """genai-prices' calculation for a million input tokens of `model` (its model and the
    prices used, for omega.providers.price_memo); None when the model is not listed."""
    return _calculation(provider, model, Usage(input_tokens=1_000_000), base_url)


def _calculation(provider: str, model: str, usage: Usage, base_url: str) -> Any | None:
    """genai-prices' PriceCalculation for `usage`, by endpoint URL then provider; or None."""
    if not model or provider in FREE_PROVIDERS:
        return None
    from genai_prices import Usage as PriceUsage

    tokens = PriceUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cached_tokens or None,
    )
    # The endpoint's URL first (several providers resell the same models), then the name.
    found = _price(tokens, model, url=base_url) if base_url else None
    if found is None:
        found = _price(tokens, model, provider_id=_PRICE_IDS.get(provider, provider))
    return found


def _price(tokens: Any, model: str, *, url: str = "", provider_id: str = "") -> Any | None:
    """One genai-prices look-up by endpoint URL or provider id; None when it finds no price."""
    from genai_prices import calc_price

    try:
        if url:
            found = calc_price(tokens, model, provider_api_url=url)
        else:
            found = calc_price(tokens, model, provider_id=provider_id)
        float(found.total_price)  # a price it cannot express as a number is no price
        return found
    except Exception:  # not listed (LookupError), or usage it cannot price: never fails a call
        return None


def is_listed(provider: str, model: str, base_url: str = "") -> bool:
    """Whether genai-prices has a price for `model` at this provider."""
    return list_price(provider, model, Usage(input_tokens=1_000_000), base_url) is not None


def with_cost(usage: Usage, provider: str, unknown_usd_per_mtok: float) -> Usage:
    """`usage` with a cost the cap can count: the one reported, else (for a provider that
    charges per token) its tokens at `unknown_usd_per_mtok` USD per million, input and output
    alike; a free provider's, or a call with no tokens, stays as it is."""
    if usage.cost_usd is not None or provider in FREE_PROVIDERS:
        return usage
    tokens = usage.input_tokens + usage.output_tokens
    if not tokens:
        return usage
    return replace(usage, cost_usd=tokens * unknown_usd_per_mtok / 1_000_000)


def transcription_cost(
    model: str,
    base_url: str,
    unknown_usd_per_mtok: float,
    *,
    seconds: float,
    input_tokens: int = 0,
    audio_tokens: int = 0,
    output_tokens: int = 0,
) -> float:
    """What one transcription (omega.providers.transcription) costs in USD: the tokens the
    service reported, at `model`'s list price; else `seconds` of audio at its list price by the
    minute (whisper-1, Groq's whisper models); else, its model not listed, its tokens (or
    AUDIO_TOKENS_PER_MINUTE a minute of audio) at `unknown_usd_per_mtok`, as an unpriced chat
    model's (0: a server of your own, free)."""
    from genai_prices import Usage as PriceUsage

    if input_tokens or output_tokens:
        tokens = PriceUsage(
            input_tokens=max(input_tokens, audio_tokens),
            input_audio_tokens=audio_tokens or None,
            output_tokens=output_tokens,
        )
        unpriced = float(input_tokens + output_tokens)
    else:
        tokens = PriceUsage(audio_seconds=seconds)
        unpriced = seconds / 60 * AUDIO_TOKENS_PER_MINUTE
    found = _transcription_price(tokens, model, base_url)
    return found if found is not None else unpriced * unknown_usd_per_mtok / 1_000_000


def _transcription_price(tokens: Any, model: str, base_url: str) -> float | None:
    """genai-prices' price of a transcription, by the endpoint's URL then by the services that
    list transcription models; None when none prices it (a model priced otherwise, by the token
    or by the minute, comes out at 0: no price for this usage either)."""
    if not model:
        return None
    looks = [{"url": base_url}] if base_url else []
    looks += [{"provider_id": name} for name in _TRANSCRIBERS]
    for look in looks:
        found = _price(tokens, model, **look)
        if found is not None and float(found.total_price) > 0:
            return float(found.total_price)
    return None


def transcription_listed(model: str, base_url: str = "") -> bool:
    """Whether a price table prices `model`'s transcriptions, by the minute of audio or by
    the token (else each is costed at `[limits] unknown_model_usd_per_mtok`)."""
    from genai_prices import Usage as PriceUsage

    by_minute = PriceUsage(audio_seconds=60)
    by_token = PriceUsage(input_tokens=1000, input_audio_tokens=1000, output_tokens=100)
    return any(
        _transcription_price(use, model, base_url) is not None for use in (by_minute, by_token)
    )


def self_hosted(base_url: str) -> bool:
    """Whether an OpenAI-compatible endpoint is on this machine or a private network."""
    host = (urlsplit(base_url).hostname or "").strip("[]")
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def run_usage(usage: RunUsage) -> Usage:
    """A pydantic-ai run's usage (its tokens, and the cost of its priced responses) as Omega's."""
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=None if usage.cost is None else float(usage.cost),
        cached_tokens=usage.cache_read_tokens,
    )


def total_cost(responses: Sequence[Any]) -> float | None:
    """A pydantic-ai run's price in USD (its ModelResponses', from genai-prices), or None when
    any response is not priced."""
    total = 0.0
    for response in responses:
        cost = _cost(response)
        if cost is None:
            return None
        total += cost
    return total


def _cost(response: Any) -> float | None:
    """The response's price in USD from genai-prices, or None when the model is not priced."""
    usage = getattr(response, "usage", None)
    if usage is not None and hasattr(usage, "cost"):
        # pydantic-ai priced it when it arrived (None: no price known); a second look-up
        # would scan the price list again (about a millisecond for a model it does not know).
        return None if usage.cost is None else float(usage.cost)
    try:
        return float(response.cost().total_price)
    except Exception:  # unknown model or missing usage: cost stays unknown
        return None
