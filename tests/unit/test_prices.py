"""What a provider call costs when the provider does not say (providers/prices.py), and what a
failing call leaves for the turn to record (providers/base.py `salvaged`)."""

from __future__ import annotations

import pytest

from omega.providers import prices
from omega.providers.base import ProviderError, Spent, salvage_usage, salvaged
from omega.turn.records import usage_fields
from omega.types import Usage

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

MILLION = Usage(input_tokens=600_000, output_tokens=400_000)


def test_a_reported_cost_is_kept_and_an_unpriced_call_costs_the_unknown_model_rate() -> None:
    reported = Usage(input_tokens=10, output_tokens=5, cost_usd=0.25)
    assert prices.with_cost(reported, "openai", 15.0) is reported
    assert prices.with_cost(MILLION, "openai", 15.0).cost_usd == pytest.approx(15.0)
    assert prices.with_cost(MILLION, "claude-code", 2.5).cost_usd == pytest.approx(2.5)
    assert prices.with_cost(MILLION, "openai", 0.0).cost_usd == 0.0
    # Free providers, and a call with no tokens, have nothing to count.
    assert prices.with_cost(MILLION, "local", 15.0).cost_usd is None
    assert prices.with_cost(MILLION, "ollama", 15.0).cost_usd is None
    assert prices.with_cost(Usage(), "openai", 15.0).cost_usd is None


def test_list_prices_come_from_genai_prices() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert prices.list_price("openai", "gpt-4o", usage) == pytest.approx(2.5 + 10.0)
    assert prices.list_price("openai", "gpt-4o", usage, "http://127.0.0.1:9/v1") == (
        pytest.approx(12.5)
    )
    assert prices.list_price("gemini", "gemini-2.5-flash", usage) == pytest.approx(0.3 + 2.5)
    assert prices.list_price("openai", "my-own-model", usage) is None
    assert prices.list_price("ollama", "gpt-4o", usage) is None  # a server of your own
    assert prices.is_listed("anthropic", "claude-sonnet-4-6")
    assert not prices.is_listed("openai", "my-own-model")


def test_self_hosted_endpoints() -> None:
    assert prices.self_hosted("http://127.0.0.1:8000/v1")
    assert prices.self_hosted("http://localhost:11434/v1")
    assert prices.self_hosted("http://192.168.1.20/v1")
    assert not prices.self_hosted("https://api.openai.com/v1")
    assert not prices.self_hosted("")


def test_a_failing_call_leaves_what_it_was_billed_for() -> None:
    billed = Usage(input_tokens=120, output_tokens=8, cost_usd=0.001)
    salvage_usage("openai", "gpt-4o", billed)  # nobody asked: dropped
    with salvaged() as found:
        salvage_usage("openai", "gpt-4o", billed)
        salvage_usage("openai", "gpt-4o", Usage())  # billed nothing: leaves nothing
    assert found.spent == [Spent("openai", "gpt-4o", billed)]
    error = ProviderError("openai HTTP 500")
    assert usage_fields(error, provider="openai")["input_tokens"] == 0
    error.spent = found.spent[0]
    assert usage_fields(error, provider="chain") == {
        "provider": "openai",
        "model": "gpt-4o",
        "input_tokens": 120,
        "output_tokens": 8,
        "cost_usd": 0.001,
        "cached_tokens": 0,
    }


def test_a_direct_response_is_priced_and_an_unlisted_model_looked_up_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """providers/direct.py prices a response as the agent graph does; a model genai-prices
    does not list is not searched for again on every response (a miss scans the whole list)."""
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.usage import RequestUsage

    from omega.providers import direct

    looked_up: list[str | None] = []
    original = ModelResponse.cost

    def counted(self: ModelResponse) -> object:
        looked_up.append(self.model_name)
        return original(self)

    monkeypatch.setattr(ModelResponse, "cost", counted)

    def response(model: str) -> ModelResponse:
        usage = RequestUsage(input_tokens=1_000_000, output_tokens=1_000_000)
        return ModelResponse(
            parts=[TextPart("hi")], usage=usage, model_name=model, provider_name="openai"
        )

    listed = response("gpt-4o")
    direct.price(listed)
    assert float(listed.usage.cost or 0) == pytest.approx(2.5 + 10.0)
    for _ in range(3):
        unlisted = response("my-own-model-for-price-test")
        direct.price(unlisted)
        assert unlisted.usage.cost is None
    assert looked_up == ["gpt-4o", "my-own-model-for-price-test"]
