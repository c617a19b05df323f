"""The validation loop: ask a model for JSON, check it, retry with the errors, within a budget.

The budget is enforced from the usage each reply reports: dollars when the provider prices the
call, tokens otherwise. A cycle that runs out of retries or budget returns nothing.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from omega.types import Reply

log = logging.getLogger(__name__)

Check = Callable[[dict[str, Any]], list[str]]
Ask = Callable[[str], Awaitable[Reply]]
_JSON = re.compile(r"\{.*\}", re.S)


@dataclass
class LoopResult:
    """What the loop produced and what it cost."""

    data: dict[str, Any] | None
    status: Literal["ok", "invalid", "over_budget", "error"]
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    errors: list[str] = field(default_factory=list)


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in a reply (code fences and preambles tolerated)."""
    match = _JSON.search(text)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


async def validated_json(
    ask: Ask,
    prompt: str,
    check: Check,
    *,
    max_retries: int,
    budget_usd: float,
    budget_tokens: int,
) -> LoopResult:
    """Ask, parse and check; on failure re-ask with the problems, at most 1 + max_retries times.

    Stops early when the spend reaches the budget (cost when known, tokens otherwise).
    """
    result = LoopResult(data=None, status="invalid")
    current = prompt
    for attempt in range(1, max_retries + 2):
        if _over_budget(result, budget_usd, budget_tokens):
            result.status = "over_budget"
            log.warning("validation loop stopped: budget spent after %d attempts", attempt - 1)
            return result
        try:
            reply = await ask(current)
        except Exception as exc:  # a provider failure ends the cycle; it is logged, not raised
            log.warning("validation loop call failed: %s", exc)
            result.status = "error"
            result.errors = [str(exc)]
            return result
        result.attempts = attempt
        result.input_tokens += reply.usage.input_tokens
        result.output_tokens += reply.usage.output_tokens
        if reply.usage.cost_usd is not None:
            result.cost_usd = (result.cost_usd or 0.0) + reply.usage.cost_usd
        data = extract_json(reply.text)
        errors = ["the answer is not a JSON object"] if data is None else check(data)
        if not errors:
            result.data, result.status, result.errors = data, "ok", []
            return result
        result.errors = errors
        current = (
            f"{prompt}\n\nYour previous answer was rejected:\n- "
            + "\n- ".join(errors[:10])
            + "\nAnswer again with corrected JSON only."
        )
    if _over_budget(result, budget_usd, budget_tokens):
        result.status = "over_budget"
    return result


def _over_budget(result: LoopResult, budget_usd: float, budget_tokens: int) -> bool:
    if result.cost_usd is not None and result.cost_usd >= budget_usd:
        return True
    return result.input_tokens + result.output_tokens >= budget_tokens
