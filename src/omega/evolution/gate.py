"""The skill gate: every proposal is checked in code before anything is registered.

Name format and conflicts, description length, inputs that really are a JSON Schema, risk
against policy, forbidden categories; then approve / reject / manual_review by autonomy mode.
Only `autonomous` ever approves, and only low-risk proposals without warnings.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from omega.config import EvolutionSection

Action = Literal["approve", "reject", "manual_review"]
RISK = {"low": 1, "medium": 2, "high": 3}
CATEGORIES = ("system", "file", "network", "application", "communication", "data", "other")
SKILL_NAME = re.compile(r"^[a-z][a-z0-9-]{1,63}$")
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
MIN_DESCRIPTION, MAX_DESCRIPTION = 10, 500


@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict and its reasons."""

    action: Action
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """For storage in the proposal row."""
        return {"action": self.action, "errors": list(self.errors), "warnings": list(self.warnings)}


@dataclass(frozen=True)
class Policy:
    """What the gate enforces, from `[evolution]`."""

    autonomy_mode: str
    max_risk_level: str
    forbidden_categories: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_config(cls, section: EvolutionSection) -> Policy:
        """The policy in force."""
        return cls(
            section.autonomy_mode,
            section.max_risk_level,
            frozenset(c.lower() for c in section.forbidden_categories),
        )


def check_proposal(
    spec: dict[str, Any], kind: str, existing: Collection[str], policy: Policy
) -> GateDecision:
    """Validate one proposal against the policy; never raises."""
    errors: list[str] = []
    warnings: list[str] = []
    name = spec.get("name")
    pattern = SKILL_NAME if kind == "skill" else TOOL_NAME
    if not isinstance(name, str) or not pattern.match(name):
        style = "kebab-case" if kind == "skill" else "snake_case"
        errors.append(f"name {name!r} is not a valid {kind} name ({style}, 2-64 chars)")
    elif name.casefold() in {n.casefold() for n in existing}:
        errors.append(f"name {name!r} conflicts with an existing tool or skill")
    description = spec.get("description")
    if not isinstance(description, str) or not (
        MIN_DESCRIPTION <= len(description.strip()) <= MAX_DESCRIPTION
    ):
        errors.append(f"description must be {MIN_DESCRIPTION}-{MAX_DESCRIPTION} characters")
    errors += _schema_errors(spec.get("inputs", {"type": "object", "properties": {}}))
    category = str(spec.get("category", "other")).lower()
    if category in policy.forbidden_categories:
        errors.append(f"category {category!r} is forbidden")
    elif category not in CATEGORIES:
        warnings.append(f"unknown category {category!r}")
    risk = str(spec.get("risk_level", "medium")).lower()
    if risk not in RISK:
        errors.append(f"risk_level {risk!r} is not low, medium or high")
    elif RISK[risk] > RISK.get(policy.max_risk_level, 2):
        warnings.append(f"risk {risk!r} exceeds the policy's {policy.max_risk_level!r}")
    if spec.get("os_permissions"):
        warnings.append("needs OS permissions: " + ", ".join(map(str, spec["os_permissions"])))
    if errors:
        return GateDecision("reject", tuple(errors), tuple(warnings))
    if policy.autonomy_mode == "autonomous" and risk == "low" and not warnings:
        return GateDecision("approve", (), tuple(warnings))
    return GateDecision("manual_review", (), tuple(warnings))


def _schema_errors(inputs: object) -> list[str]:
    if not isinstance(inputs, dict):
        return ["inputs must be a JSON Schema object"]
    try:
        Draft202012Validator.check_schema(inputs)
    except SchemaError as exc:
        return [f"inputs is not a valid JSON Schema: {exc.message}"]
    if inputs.get("type", "object") != "object":
        return ["inputs must describe an object (type: object)"]
    return []
