"""The skill gate: every proposal checked in code, then by a model judge, before anything is
registered.

This module is the package's public face: callers outside `omega.evolution.gate` import from
here. Inside, modules import each other directly.
- gate: the pure checks and the signals combined into one decision (Policy)
- judge: the cached fixed-rubric model judge; gate_proposal and gate_lesson, the async gate
- reading: the deterministic layer's reading of one proposal
- signals: what a proposal's code and config would do, parsed; hosts: network destinations in
  every spelling; disguise: destinations and secrets built at run time or encoded
- assess: category and risk from what a proposal says it does; legibility: whether the rules
  can read it, and whether it speaks to its judge; machine, machine_words: what they cannot
  vouch for as harmless (commands, code, paths, files, deleting, network attacks, credential
  stores), which the owner decides
- lexicon, lexicon_more: the names the content signal looks for; normalize: text with the
  usual disguises undone

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.evolution.gate.gate import Policy
    from omega.evolution.gate.judge import gate_lesson, gate_proposal

__all__ = [
    "Policy",
    "gate_lesson",
    "gate_proposal",
]

__getattr__ = loader(
    __name__,
    {
        "Policy": "gate",
        "gate_lesson": "judge",
        "gate_proposal": "judge",
    },
)
