"""Reflection: Omega looking at its own work, and the owner's picture of it.

This module is the package's public face: callers outside `omega.evolution.reflection` import
from here. Inside, modules import each other directly.
- introspection: the loop that reviews an agent's tool calls
- critic: per-tool success rates, typical errors, issues and recommendations; a tool that keeps
  failing becomes a limitation and a proposal
- lessons: skill lessons kept in memory.db
- recommend: the critic's section of the report; a recommendation made a proposal by the owner
- report: one picture of self-evolution over a period, for the owner

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.evolution.reflection.critic import newest_call, run_critic
    from omega.evolution.reflection.introspection import maybe_introspect
    from omega.evolution.reflection.lessons import room_scope, skill_improve, with_lessons
    from omega.evolution.reflection.recommend import find_recommendation, propose_recommendation
    from omega.evolution.reflection.report import EvolutionReport, evolution_report, since_days

__all__ = [
    "EvolutionReport",
    "evolution_report",
    "find_recommendation",
    "maybe_introspect",
    "newest_call",
    "propose_recommendation",
    "room_scope",
    "run_critic",
    "since_days",
    "skill_improve",
    "with_lessons",
]

__getattr__ = loader(
    __name__,
    {
        "EvolutionReport": "report",
        "evolution_report": "report",
        "find_recommendation": "recommend",
        "maybe_introspect": "introspection",
        "newest_call": "critic",
        "propose_recommendation": "recommend",
        "room_scope": "lessons",
        "run_critic": "critic",
        "since_days": "report",
        "skill_improve": "lessons",
        "with_lessons": "lessons",
    },
)
