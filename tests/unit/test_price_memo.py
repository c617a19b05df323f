"""The price memo (providers/price_memo.py): what `omega ask`'s lean path remembers of
genai-prices, so that a model priced once is priced again without importing it (issue 40)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omega.providers import prices
from omega.providers.price_memo import PriceMemo
from omega.types import Usage

USAGES = (
    Usage(input_tokens=1_234, output_tokens=56),
    Usage(input_tokens=90_000, output_tokens=1_000, cached_tokens=40_000),
    Usage(input_tokens=1, output_tokens=0),
    Usage(),
)


@pytest.mark.parametrize(
    ("provider", "model", "base_url"),
    [
        ("openai", "gpt-4o-mini", ""),
        ("openai", "gpt-4o", "http://127.0.0.1:9/v1"),  # no provider at that URL: by name
        ("gemini", "gemini-2.5-flash", ""),
        ("openrouter", "openai/gpt-4o-mini", "https://openrouter.ai/api/v1"),
    ],
)
def test_a_remembered_price_is_genai_prices_own(
    tmp_path: Path, provider: str, model: str, base_url: str
) -> None:
    memo = PriceMemo(tmp_path / "memo.json")
    assert memo.cost(provider, model, USAGES[0], base_url) == (False, None)
    memo.learn(provider, model, base_url)
    again = PriceMemo(tmp_path / "memo.json")  # the next process reads it from the file
    assert again.knows(provider, model, base_url)
    for usage in USAGES:
        listed = prices.list_price(provider, model, usage, base_url)
        assert listed is not None or usage == Usage()
        assert again.cost(provider, model, usage, base_url) == (True, listed), usage
    assert not again.knows(provider, model, "https://elsewhere.example/v1")
    assert (tmp_path / "memo.json").stat().st_mode & 0o777 == 0o600


def test_a_model_not_listed_is_remembered_as_such(tmp_path: Path) -> None:
    memo = PriceMemo(tmp_path / "memo.json")
    memo.learn("openai", "my-own-model", "http://10.0.0.5/v1")
    assert PriceMemo(tmp_path / "memo.json").cost(
        "openai", "my-own-model", USAGES[0], "http://10.0.0.5/v1"
    ) == (True, None)


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-4-6",  # prices that change on a date: looked up every time
        "claude-sonnet-4-5",  # tiered by the prompt's length
    ],
)
def test_a_price_the_memo_cannot_reproduce_is_not_remembered(tmp_path: Path, model: str) -> None:
    assert prices.is_listed("anthropic", model)
    memo = PriceMemo(tmp_path / "memo.json")
    memo.learn("anthropic", model, "")
    assert not memo.knows("anthropic", model, "")
    assert not (tmp_path / "memo.json").exists()


def test_another_genai_prices_version_empties_the_memo(tmp_path: Path) -> None:
    path = tmp_path / "memo.json"
    PriceMemo(path).learn("openai", "gpt-4o-mini", "")
    data = json.loads(path.read_text())
    data["genai_prices"] = "0.0.1"
    path.write_text(json.dumps(data))
    assert not PriceMemo(path).knows("openai", "gpt-4o-mini", "")
    path.write_text("{not json")
    assert not PriceMemo(path).knows("openai", "gpt-4o-mini", "")
