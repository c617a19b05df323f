"""The critic: per-tool effectiveness from recorded calls (success rate, recurring errors)
plus the model's own satisfaction scores; a tool that keeps failing becomes a limitation."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from omega.evolution.gap_analysis import learn_gap
from omega.memory.store import Store
from omega.turn import Outbox, PipelineDeps, load_turn, marker_context
from omega.types import IncomingMessage

WINDOW = 50
MIN_CALLS = 5
FAILING_BELOW = 0.5


@dataclass(frozen=True)
class ToolStats:
    """How one tool has been doing lately."""

    tool: str
    calls: int
    failures: int
    recurring_errors: tuple[tuple[str, int], ...]

    @property
    def success_rate(self) -> float:
        """Share of the recent calls that succeeded."""
        return (self.calls - self.failures) / self.calls if self.calls else 1.0


def tool_effectiveness(store: Store, window: int = WINDOW) -> list[ToolStats]:
    """Each tool's last `window` calls: counts and the errors that recur."""
    tools = [row["tool"] for row in store.query("SELECT DISTINCT tool FROM tool_calls")]
    stats = []
    for tool in tools:
        rows = store.query(
            "SELECT ok, error FROM tool_calls WHERE tool = ? ORDER BY id DESC LIMIT ?",
            (tool, window),
        )
        errors = Counter(str(row["error"])[:120] for row in rows if not row["ok"])
        stats.append(
            ToolStats(
                tool,
                len(rows),
                sum(1 for row in rows if not row["ok"]),
                tuple((e, n) for e, n in errors.most_common(3) if n > 1),
            )
        )
    return stats


def average_satisfaction(store: Store, cycles: int = 10) -> float | None:
    """The model's mean self-reported satisfaction over its last introspection cycles."""
    rows = store.query(
        "SELECT satisfaction FROM introspection_cycles WHERE satisfaction IS NOT NULL "
        "ORDER BY id DESC LIMIT ?",
        (cycles,),
    )
    values = [float(row["satisfaction"]) for row in rows]
    return sum(values) / len(values) if values else None


async def review_tools(deps: PipelineDeps, out: Outbox) -> list[str]:
    """Raise a limitation for every tool that keeps failing; return their titles."""
    stats = await deps.store.call(tool_effectiveness, deps.store)
    failing = [s for s in stats if s.calls >= MIN_CALLS and s.success_rate < FAILING_BELOW]
    raised = []
    for item in failing:
        message = IncomingMessage("evolution", "critic", f"tool {item.tool} keeps failing")
        ctx = marker_context(deps, message, await load_turn(deps, message), out, cause="critic")
        common = item.recurring_errors[0][0] if item.recurring_errors else "various errors"
        learned = await learn_gap(  # recorded once, analysed like every gap (issue 28)
            deps,
            out,
            ctx,
            (
                f"Tool {item.tool} keeps failing",
                f"{item.failures} of its last {item.calls} calls failed; most often: {common}",
                "Find out why, then fix the tool or stop relying on it",
            ),
            "critic",
        )
        if learned is not None and learned[1]:
            raised.append(item.tool)
    return raised
