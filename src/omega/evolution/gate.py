"""The skill gate: every proposal is checked in code before anything is registered.

Name format and conflicts, description length, inputs that really are a JSON Schema, trigger
phrases that would not fire on every message; category and risk are the gate's own judgement
of the content (assess.py), the stricter of it and the model's label; forbidden categories are
rejected in every mode. Only `autonomous` mode with `require_manual_approval = false` ever
approves, and only low-risk proposals without warnings.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from omega.config.evolution import EvolutionSection
from omega.evolution.assess import RISK, assess, normalize_label, stricter

Action = Literal["approve", "reject", "manual_review"]
CATEGORIES = ("system", "file", "network", "application", "communication", "data", "other")
SKILL_NAME = re.compile(r"^[a-z][a-z0-9-]{1,63}$")
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
MIN_DESCRIPTION, MAX_DESCRIPTION = 10, 500
# Words so common that a trigger made of them fires on nearly every message.
STOPWORDS = frozenset(
    "a an and are as at be but by can do for from have hello hey hi how i if in is it me my "
    "no not of ok on or please so thanks that the this to up we what when where who why with "
    "yes you your".split()
)
MIN_TRIGGER = 3


@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict and its reasons."""

    action: Action
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    judged: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """For storage in the proposal row."""
        return {
            "action": self.action,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            **self.judged,
        }


@dataclass(frozen=True)
class Policy:
    """What the gate enforces, from `[evolution]`."""

    autonomy_mode: str
    max_risk_level: str
    forbidden_categories: frozenset[str] = field(default_factory=frozenset)
    require_manual_approval: bool = True

    @classmethod
    def from_config(cls, section: EvolutionSection) -> Policy:
        """The policy in force."""
        return cls(
            section.autonomy_mode,
            section.max_risk_level,
            frozenset(normalize_label(c) for c in section.forbidden_categories),
            section.require_manual_approval,
        )

    @property
    def gate_may_approve(self) -> bool:
        """Whether the gate approves anything by itself (autonomous, no manual approval)."""
        return self.autonomy_mode == "autonomous" and not self.require_manual_approval


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
    if kind == "skill":
        errors += _trigger_errors(spec.get("trigger_phrases", []))
    judged = assess(spec)
    label = normalize_label(spec.get("category", "other")) or "other"
    forbidden = sorted(({label} | judged.categories) & policy.forbidden_categories)
    if forbidden:
        errors.append(f"category {forbidden[0]!r} is forbidden")
    elif label not in CATEGORIES:
        warnings.append(f"unknown category {label!r}")
    claimed = normalize_label(spec.get("risk_level", "medium"))
    if claimed not in RISK:
        errors.append(f"risk_level {claimed!r} is not low, medium or high")
    risk = stricter(claimed, judged.risk)
    if RISK.get(risk, 3) > RISK.get(policy.max_risk_level, 2):
        warnings.append(f"risk {risk!r} exceeds the policy's {policy.max_risk_level!r}")
    if claimed in RISK and RISK[risk] > RISK[claimed]:
        warnings.append(f"the gate judges the risk {risk!r}, not {claimed!r}")
    warnings += [f"content: {reason}" for reason in judged.reasons]
    if spec.get("os_permissions"):
        warnings.append("needs OS permissions: " + ", ".join(map(str, spec["os_permissions"])))
    facts = {"category": label, "risk": risk, "categories": sorted(judged.categories)}
    if errors:
        return GateDecision("reject", tuple(errors), tuple(warnings), facts)
    if policy.gate_may_approve and risk == "low" and not warnings:
        return GateDecision("approve", (), tuple(warnings), facts)
    return GateDecision("manual_review", (), tuple(warnings), facts)


def _trigger_errors(triggers: object) -> list[str]:
    """Trigger phrases must be specific: no stopwords alone, at least 3 characters."""
    if not isinstance(triggers, list):
        return ["trigger_phrases must be a list of strings"]
    errors = []
    for trigger in triggers:
        words = " ".join(str(trigger).casefold().split())
        if len(words) < MIN_TRIGGER or all(w in STOPWORDS for w in words.split()):
            errors.append(f"trigger {words!r} would match almost every message")
    return errors


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
