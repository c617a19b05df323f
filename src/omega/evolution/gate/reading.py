"""The deterministic layer's reading of one proposal, before any judge is counted.

Parsed facts (signals.py), keyword rules (assess.py), what the rules cannot read (a language
or script without rules, a destination built at run time, encoded or disguised: legibility.py,
disguise.py, hosts.py), what they cannot vouch for as harmless (commands, code, paths, files,
deleting, network attacks, credential stores: machine.py), whether the proposal speaks to its
reviewer, and whether it explains rather than does ("how to choose a strong password" is not
credential access: it names no one's secrets, reaches no host, file or API and sends nothing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from omega.evolution.gate.assess import Assessment, assess
from omega.evolution.gate.legibility import addresses_judge, unreadable
from omega.evolution.gate.lexicon_more import EXPLAIN_VERBS, OWNED_SECRET
from omega.evolution.gate.machine import machine_signs
from omega.evolution.gate.normalize import fold
from omega.evolution.gate.signals import Facts, extract, sources

# Acts that are doing, not explaining, whatever the words around them.
_DOING = frozenset(
    {"send", "message_send", "weaken", "gate_target", "destroy", "runtime_destination", "address"}
)
_EXPLAINED_ACTS = frozenset({"secret", "trade", "money"})


@dataclass(frozen=True)
class Reading:
    """What the code itself makes of a proposal."""

    facts: Facts
    keywords: Assessment
    unreadable: tuple[str, ...]  # why the rules cannot vouch for it (the owner decides)
    steering: str | None  # the words with which it addresses its reviewer, if any
    explaining: bool
    machine: tuple[str, ...] = ()  # what the rules cannot vouch for (the owner decides)

    @property
    def clean(self) -> bool:
        """Readable, and nothing the rules found or could not vouch for: no category, host,
        file, API, command, path or other sign of the machine."""
        facts = self.facts
        unexplained_hosts = set(facts.hosts) - set(facts.public)
        return not (
            self.unreadable
            or self.steering
            or self.machine
            or self.keywords.categories
            or unexplained_hosts
            or facts.webhooks
            or facts.files
            or facts.apis
        )

    def as_dict(self) -> dict[str, Any]:
        """For the gate's record."""
        return {
            "unreadable": list(self.unreadable),
            "steering": self.steering,
            "explaining": self.explaining,
            "machine": list(self.machine),
            "public_api_hosts": list(self.facts.public),
        }


def read_proposal(spec: dict[str, Any]) -> Reading:
    """The deterministic reading of `spec`; pure, so the same content is read once."""
    return _read(json.dumps(spec, sort_keys=True, ensure_ascii=False, default=str))


@lru_cache(maxsize=256)
def _read(canonical: str) -> Reading:
    spec = json.loads(canonical)
    raw = sources(spec)
    facts = extract(spec)
    explaining = _explains(spec, raw, facts)
    if explaining:
        facts = replace(facts, acts=tuple(a for a in facts.acts if a not in _EXPLAINED_ACTS))
    keywords = assess(spec, facts.public, explaining)
    texts = [raw, fold(raw), *(str(v) for v in spec.values() if isinstance(v, str))]
    reasons = [*unreadable(spec, raw), *(f"destination: {why}" for why in facts.hidden)]
    machine = machine_signs(spec, facts.public)
    return Reading(facts, keywords, tuple(reasons), addresses_judge(texts), explaining, machine)


def _explains(spec: dict[str, Any], raw: str, facts: Facts) -> bool:
    """Whether the skill only explains: an explaining verb, nobody's secrets, and nothing
    reached, read, called or declared."""
    text = fold(raw)
    if not EXPLAIN_VERBS.search(text) or OWNED_SECRET.search(text):
        return False
    if facts.hosts or facts.webhooks or facts.files or facts.apis or facts.hidden:
        return False
    if _DOING & set(facts.acts) or "quantity_of_securities" in facts.acts or "amount" in facts.acts:
        return False
    declared = ("side_effects", "os_permissions", "mcp", "mcp_servers", "mcpServers")
    return not any(spec.get(key) for key in declared)
