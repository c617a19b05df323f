"""Self-evolution can never add trading: `financial_transactions` is forbidden by default, by
its declared category and by what a proposal actually says."""

from __future__ import annotations

from typing import Any

import pytest

from omega.config import Config
from omega.evolution.gate import Policy
from omega.evolution.gate.gate import GateDecision, check_proposal
from omega.evolution.gate.signals import Judgement

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

TRADER: dict[str, Any] = {
    "name": "auto-trader",
    "description": "Place buy and sell orders on the owner's brokerage account automatically.",
    "category": "financial_transactions",
    "inputs": {"type": "object", "properties": {"symbol": {"type": "string"}}},
    "risk_level": "low",
    "content": "Submit a market order through the broker API whenever the quant signal is Long.",
    "trigger_phrases": ["trade"],
}


def check_clear(spec: dict[str, Any], kind: str, existing: list[str], pol: Policy) -> GateDecision:
    """The pure gate with a model judge that found nothing (the async gate's all-clear case)."""
    return check_proposal(spec, kind, existing, pol, Judgement({}, "judged"))


def test_financial_transactions_is_forbidden_by_default() -> None:
    assert "financial_transactions" in Config().evolution.forbidden_categories


@pytest.mark.parametrize("category", ["financial_transactions", "network", "productivity"])
def test_a_trading_proposal_is_rejected_even_when_autonomous(category: str) -> None:
    default = Policy.from_config(Config().evolution)
    autonomous = Policy("autonomous", "high", default.forbidden_categories, False)
    decision = check_clear({**TRADER, "category": category}, "skill", [], autonomous)
    assert decision.action == "reject", decision
    assert any("financial_transactions" in e for e in decision.errors)


@pytest.mark.parametrize(
    ("description", "content"),
    [
        ("Buy shares of AAPL when the signal says Long.", "Use the quant advisory line."),
        ("Keep my portfolio balanced.", "Submit limit orders through the IB broker API."),
        ("Automate my trading.", "Trading stocks on the owner's brokerage account."),
    ],
)
def test_trading_in_other_words_is_still_caught(description: str, content: str) -> None:
    spec = {**TRADER, "category": "productivity", "description": description, "content": content}
    autonomous = Policy("autonomous", "high", frozenset({"financial_transactions"}), False)
    assert check_clear(spec, "skill", [], autonomous).action == "reject"


def test_a_message_broker_is_not_trading() -> None:
    spec = {
        **TRADER,
        "name": "mqtt-bridge",
        "category": "network",
        "description": "Publish home sensor readings to the local MQTT message broker.",
        "content": "Connect to the broker on localhost and publish a reading every minute.",
    }
    autonomous = Policy("autonomous", "high", frozenset({"financial_transactions"}), False)
    assert check_clear(spec, "skill", [], autonomous).action == "approve"
