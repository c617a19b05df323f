"""The skill gate: every proposal is checked in code before anything is registered.

Name format and conflicts (names matched whole), description length, inputs that really are a
JSON Schema, trigger phrases that would not fire on every message (one phrase each: no `|`, line
break or control character). Forbidden categories are judged by four signals:
the model's own label, the keyword rules (assess.py), what the content would do as parsed
(signals.py: hosts in every notation, files, APIs) and the fixed-rubric model judgement
(judge.py, passed in). Before the judge counts, the code must read the proposal (reading.py):
a language and script it has rules for, no destination built at run time, encoded or disguised;
otherwise the owner decides, in every mode. It must also understand it as harmless: a command
or code, a path or file, deleting, network scanning or attacks, a credential store or an
opaque blob (machine.py) makes it at least medium risk, so the owner decides. A proposal that
speaks to its reviewer is refused. Any signal saying a forbidden category is there rejects, in
every mode; any signal unsure (or the judge unavailable) leaves the owner to decide. Only
`autonomous` mode with `require_manual_approval = false` ever approves, and only when the judge
and every signal agree (all clean, readable, low risk, no warnings) and the proposal is not
from another person's gap.
This module stays pure; judge.gate_proposal is the async gate.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from omega.config.evolution import EvolutionSection
from omega.evolution.gate.assess import RISK, normalize_label, stricter
from omega.evolution.gate.reading import read_proposal
from omega.evolution.gate.signals import Finding, Judgement, content_findings

Action = Literal["approve", "reject", "manual_review"]
CATEGORIES = ("system", "file", "network", "application", "communication", "data", "other")
# Matched whole (fullmatch): with `match` and `$`, "helper-2\n" would pass.
SKILL_NAME = re.compile(r"[a-z][a-z0-9-]{1,63}")
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{1,63}")
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
    spec: dict[str, Any],
    kind: str,
    existing: Collection[str],
    policy: Policy,
    judgement: Judgement,
    scope: str = "",
) -> GateDecision:
    """Validate one proposal against the policy and every signal; pure, never raises.
    `scope`: whose gap it came from ("" the owner's or Omega's own); another person's is
    never approved by the gate."""
    errors = _shape_errors(spec, kind, existing)
    warnings: list[str] = []
    label = normalize_label(spec.get("category", "other")) or "other"
    if label not in CATEGORIES and label not in policy.forbidden_categories:
        warnings.append(f"unknown category {label!r}")
    claimed = normalize_label(spec.get("risk_level", "medium"))
    if claimed not in RISK:
        errors.append(f"risk_level {claimed!r} is not low, medium or high")
    reading = read_proposal(spec)
    keywords, facts = reading.keywords, reading.facts
    if reading.steering:
        errors.append(f"the proposal speaks to its reviewer ({reading.steering!r})")
    signals: dict[str, dict[str, Finding]] = {
        "label": {label: Finding("yes", f"the proposal is labelled {label!r}")},
        "keywords": {
            c: Finding("yes", "; ".join(r for r in keywords.reasons if r.startswith(c)))
            for c in keywords.categories
        },
        "content": content_findings(facts),
        "model judge": judgement.findings,
    }
    forbidden, uncertain, seen = _combine(signals, policy.forbidden_categories)
    errors += [f"category {c!r} is forbidden" for c in sorted(forbidden)]
    # Which signals refused; their reasons (some quote model text) stay in `judged`.
    errors += [f"{c} found by: {', '.join(s for s, _ in forbidden[c])}" for c in sorted(forbidden)]
    warnings += [
        f"uncertain whether {c!r} ({s}: {why}); the owner decides"
        for c in sorted(uncertain)
        for s, why in uncertain[c]
    ]
    warnings += [f"content: {c} ({s}: {why})" for c in sorted(seen) for s, why in seen[c]]
    warnings += [f"unreadable: {why}; the owner decides" for why in reading.unreadable]
    warnings += [
        f"not vouched for as harmless: {why}; the owner decides" for why in reading.machine
    ]
    risk = stricter(claimed, keywords.risk)
    private_hosts = set(facts.hosts) - set(facts.public)
    if forbidden or seen:
        risk = "high"
    elif uncertain or private_hosts or facts.files or reading.unreadable or reading.machine:
        risk = stricter(risk, "medium")
    if RISK.get(risk, 3) > RISK.get(policy.max_risk_level, 2):
        warnings.append(f"risk {risk!r} exceeds the policy's {policy.max_risk_level!r}")
    if claimed in RISK and RISK[risk] > RISK[claimed]:
        warnings.append(f"the gate judges the risk {risk!r}, not {claimed!r}")
    warnings += [f"content: {reason}" for reason in keywords.reasons]
    if private_hosts:
        warnings.append("reaches hosts: " + ", ".join(sorted(private_hosts)[:8]))
    if spec.get("os_permissions"):
        warnings.append("needs OS permissions: " + ", ".join(map(str, spec["os_permissions"])))
    judge_clear = judgement.status != "unavailable" and all(
        f.verdict == "no" for f in judgement.findings.values()
    )
    if judge_clear and not reading.clean and not errors:
        warnings.append(
            "the judge saw nothing forbidden but the code's own signals did not clear it: "
            "approval needs both; the owner decides"
        )
    if scope:
        warnings.append(f"from a gap seen with {scope}: only the owner may approve it")
    judged = {
        "category": label,
        "risk": risk,
        "categories": sorted({*forbidden, *seen}),
        "uncertain": sorted(uncertain),
        "signals": {
            "label": label,
            "keywords": {
                "categories": sorted(keywords.categories),
                "reasons": list(keywords.reasons),
                "explained": list(keywords.explained),
            },
            "content": {
                "facts": facts.as_dict(),
                "findings": {c: f.as_dict() for c, f in signals["content"].items()},
            },
            "reading": reading.as_dict(),
            "judge": judgement.as_dict(),
        },
    }
    if errors:
        return GateDecision("reject", tuple(errors), tuple(warnings), judged)
    agreed = judge_clear and reading.clean and risk == "low" and not warnings
    if policy.gate_may_approve and agreed and not scope:
        return GateDecision("approve", (), tuple(warnings), judged)
    return GateDecision("manual_review", (), tuple(warnings), judged)


def _shape_errors(spec: dict[str, Any], kind: str, existing: Collection[str]) -> list[str]:
    """Name format and conflicts, description length, inputs schema, specific triggers."""
    errors: list[str] = []
    name = spec.get("name")
    pattern = SKILL_NAME if kind == "skill" else TOOL_NAME
    if not isinstance(name, str) or not pattern.fullmatch(name):
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
    return errors


Reasons = dict[str, list[tuple[str, str]]]


def _combine(
    signals: dict[str, dict[str, Finding]], forbidden_categories: frozenset[str]
) -> tuple[Reasons, Reasons, Reasons]:
    """(forbidden, uncertain, seen): forbidden categories some signal says yes to, forbidden
    ones some signal is unsure of, and other categories the content or judge found."""
    forbidden: Reasons = {}
    uncertain: Reasons = {}
    seen: Reasons = {}
    for signal, findings in signals.items():
        for category, finding in findings.items():
            if finding.verdict == "no":
                continue
            is_forbidden = category in forbidden_categories
            if finding.verdict == "yes" and is_forbidden:
                forbidden.setdefault(category, []).append((signal, finding.reason))
            elif finding.verdict == "unsure" and is_forbidden:
                uncertain.setdefault(category, []).append((signal, finding.reason))
            elif signal in ("content", "model judge"):
                seen.setdefault(category, []).append((signal, finding.reason))
    for category in forbidden:
        uncertain.pop(category, None)
    return forbidden, uncertain, seen


def _trigger_errors(triggers: object) -> list[str]:
    """Trigger phrases must be specific: no stopwords alone, at least 3 characters, and one
    phrase each: no `|` (SKILL.md joins the phrases with it, and the loader splits on it, so
    "markdown table|a|i" would load as three triggers, two of them matching almost every
    message), no line break or other control or format character."""
    if not isinstance(triggers, list):
        return ["trigger_phrases must be a list of strings"]
    errors = []
    for trigger in triggers:
        if not isinstance(trigger, str):
            errors.append(f"trigger {trigger!r} is not a string")
            continue
        if bad := sorted({c for c in trigger if c == "|" or _control(c)}):
            errors.append(f"trigger {trigger!r} holds {', '.join(map(repr, bad))}: one phrase each")
            continue
        words = " ".join(trigger.casefold().split())
        if len(words) < MIN_TRIGGER or all(w in STOPWORDS for w in words.split()):
            errors.append(f"trigger {words!r} would match almost every message")
    return errors


def _control(char: str) -> bool:
    """A line break, control, format (zero-width, bidi), private-use or unassigned character
    (a space of any width is not one)."""
    category = unicodedata.category(char)
    return category[0] == "C" or category in ("Zl", "Zp")


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
