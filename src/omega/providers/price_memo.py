"""List prices remembered in $OMEGA_HOME, so that `omega ask`'s lean path prices a model it has
priced before without importing genai-prices (about 40 ms of its cold start, issue 40).

An entry is written only after genai-prices answered for that provider, endpoint and model:
either "not listed", or its per-token rates when they are a plain rate that this module
reproduces exactly (checked against genai-prices on probe usages before it is written). A price
that depends on the time of the request, or that the probes do not reproduce, is never
remembered: genai-prices is asked every time, as before. The memo belongs to one genai-prices
version (its price table ships in the wheel): after an upgrade it starts empty.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from decimal import Decimal
from importlib import metadata
from pathlib import Path
from typing import Any

from omega.providers import prices
from omega.types import Usage

log = logging.getLogger(__name__)

# genai-prices' per-million-token prices that Omega's usage can reach (it reports no audio,
# images or searches), in the order of the counts they multiply.
_TOKEN_KEYS = ("input_mtok", "cache_read_mtok", "output_mtok")
# Usages a remembered rate must price exactly as genai-prices does before it is written.
_PROBES = (
    Usage(input_tokens=1_000_003, output_tokens=17),
    Usage(input_tokens=2_000_000, output_tokens=5, cached_tokens=1_000_000),
    Usage(input_tokens=0, output_tokens=999_999),
    Usage(input_tokens=123_457, output_tokens=0, cached_tokens=123_457),
    Usage(input_tokens=7, output_tokens=3, cached_tokens=2),
)
Rates = list[tuple[str, str]]


class PriceMemo:
    """The list prices this home has looked up, in one JSON file (owner-only)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, Any] | None = None

    def cost(
        self, provider: str, model: str, usage: Usage, base_url: str
    ) -> tuple[bool, float | None]:
        """(whether the memo knows the model, its price for `usage` or None when not listed)."""
        entry = self._load().get(_key(provider, model, base_url))
        if not isinstance(entry, dict):
            return False, None
        if entry.get("unlisted") is True:
            return True, None
        try:
            return True, price(entry["rates"], usage)
        except (KeyError, TypeError, ValueError, ArithmeticError):
            return False, None  # a damaged entry: ask genai-prices

    def knows(self, provider: str, model: str, base_url: str) -> bool:
        """Whether `model` is remembered (so genai-prices need not be loaded for it)."""
        return isinstance(self._load().get(_key(provider, model, base_url)), dict)

    def learn(self, provider: str, model: str, base_url: str) -> None:
        """Remember `model`'s price from genai-prices (loaded), when it can be reproduced."""
        entry = _entry(provider, model, base_url)
        if entry is None:
            return
        self._entries = None  # what another process remembered meanwhile is kept
        entries = {**self._load(), _key(provider, model, base_url): entry}
        self._entries = entries
        version = _version()
        if version is None:
            return
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"genai_prices": version, "entries": entries}, handle)
            os.replace(temporary, self.path)
        except OSError as exc:  # a cache: never fails a call
            log.debug("price memo not written: %s", exc)
            temporary.unlink(missing_ok=True)

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = {}
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return self._entries
            if isinstance(data, dict) and data.get("genai_prices") == _version():
                entries = data.get("entries")
                self._entries = entries if isinstance(entries, dict) else {}
        return self._entries


def price(rates: Rates, usage: Usage) -> float:
    """What `usage` costs at per-million-token `rates`, computed as genai-prices does (each
    unit's price times its count over a million, summed in Decimal)."""
    keys = {key for key, _ in rates}
    cached = usage.cached_tokens if "cache_read_mtok" in keys else 0
    counts = {
        "input_mtok": usage.input_tokens - cached,
        "cache_read_mtok": usage.cached_tokens,
        "output_mtok": usage.output_tokens,
    }
    total = Decimal(0)
    for key, rate in rates:
        total += Decimal(rate) * counts[key] / 1_000_000
    return float(total)


def _entry(provider: str, model: str, base_url: str) -> dict[str, Any] | None:
    """The memo entry for `model` by genai-prices, or None when it cannot be remembered."""
    listed = [prices.list_price(provider, model, probe, base_url) for probe in _PROBES]
    if all(cost is None for cost in listed):
        return {"unlisted": True}
    calculation = prices.calculation(provider, model, base_url)
    if calculation is None or not _plain(calculation.model.prices):
        return None
    rates: Rates = [
        (key, str(value))
        for key, value in vars(calculation.model_price).items()
        if key in _TOKEN_KEYS and value is not None
    ]
    if any(not isinstance(getattr(calculation.model_price, key), Decimal) for key, _ in rates):
        return None  # tiered by context length
    if any(cost != price(rates, probe) for cost, probe in zip(listed, _PROBES, strict=True)):
        return None
    return {"rates": rates}


def _plain(model_prices: Any) -> bool:
    """Whether a model's prices are one set for all time (not conditional on the date)."""
    from genai_prices.types import ModelPrice

    return isinstance(model_prices, ModelPrice)


def _key(provider: str, model: str, base_url: str) -> str:
    return f"{provider}\n{base_url}\n{model}"


@functools.cache
def _version() -> str | None:
    try:
        return metadata.version("genai-prices")
    except metadata.PackageNotFoundError:
        return None
