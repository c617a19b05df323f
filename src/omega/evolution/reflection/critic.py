"""The critic (spec 002 §3.7, spec 004 phase 3.7): per-tool effectiveness from the recorded
calls (success rate, typical errors grouped by shape), the model's own satisfaction from the
introspection cycles, and from them issues and recommendations the owner can read
(`critic_report`). A tool that keeps failing becomes a limitation and, through the analysis,
a proposal (`review_tools`); it runs after each introspection cycle and, whether introspection
runs or not, from the service's critic job (omega.loops.critic_job)."""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass

from omega.evolution.gaps import raise_limitation
from omega.memory.store import Store
from omega.turn import Outbox, PipelineDeps, load_turn, marker_context
from omega.types import IncomingMessage

log = logging.getLogger(__name__)
WINDOW = 50  # the calls of each tool the critic reads, newest first
MIN_CALLS = 5  # fewer say nothing about a tool
FAILING_BELOW = 0.5  # a success rate below this is a tool that keeps failing
RECURRING = 3  # an error shape seen this often in the window is an issue by itself
LOW_SATISFACTION = 0.5
SHAPE_CHARS = 160
EXAMPLE_CHARS = 200

# What varies between two occurrences of one error, replaced by a placeholder (in this order).
_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "<text>"),
    (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I), "<url>"),
    (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "<email>"),
    (re.compile(r"(?<![\w/\\])(?:~|[\w.@+-]+)?(?:[/\\][\w.@~+-]+)+[/\\]?"), "<path>"),
    (
        re.compile(
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
            r"|\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"
            r"|\b(?=\w*\d)(?=\w*[a-z])\w*[_-]?\w{8,}\b",
            re.I,
        ),
        "<id>",
    ),
    (re.compile(r"(?<![\w<])[-+]?\d+(?:[.,:]\d+)*(?:[a-zA-Z%]{1,3})?(?![\w>])"), "<n>"),
)

# A typical error's words -> what to do about it (the first that matches; the last is a
# catch-all). The owner reads these; nothing acts on them.
_ADVICE: tuple[tuple[str, str], ...] = (
    ("timed out|timeout|time out", "raise its time limit or check the service it waits on"),
    ("connection|network|resolve|unreachable|dns", "check the network and the address it uses"),
    ("rate.?limit|too many requests|429", "call it less often: the service limits its rate"),
    (
        "not found|no such|no file|does not exist|404",
        "check that what it names exists before calling it (list first, then use)",
    ),
    (
        "permission|denied|refused|not allowed|forbidden|401|403",
        "check what the sandbox and the tool's rights allow; ask for less, or change the rights",
    ),
    ("exit|exited|status", "read the command's error output; fix the command or its input"),
    ("invalid|malformed|parse|json|schema|argument", "give it the arguments its schema asks for"),
    ("", "find out why it fails, then fix the tool or stop relying on it"),
)


# The words an error's shape may keep: what errors say of themselves. The first other word
# ends the shape (`<words>`): an error's text may carry anyone's words (a file name, a page, a
# command's output), and a shape reaches HEARTBEAT.md, alerts and prompts (issue 37).
_ERROR_WORDS = frozenset(
    """a after again already an and argument arguments at attribute bad be been big block by
    bytes can't cannot certificate closed code command commit connection could decode denied
    directory disk dns does empty encoding errno error exist exists exit exited expected failed
    failure fetch file files for forbidden found from full gateway gone got handshake has have
    host http https in index internal invalid is it json key killed large limit limited locked
    long mailbox malformed many memory method missing name network no not object of on open or
    out outside parse path permission process protocol range rate read refused request requests
    required reset resolve schema seconds server service signal space ssl status such task the
    this time timed timeout to too try type unable unauthorized unavailable unknown unreachable
    utf-8 value verify was were with workspace write""".split()
)
_ERROR_CLASS = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Timeout)$")
_PLACEHOLDER = re.compile(r"^<[a-z]+>$")
_EDGES = re.compile(r"^[^\w<]+|[^\w>]+$")


def _known(token: str) -> bool:
    """Whether a token of an error may stay in its shape: a placeholder, an error class or
    one of the words errors use, with the punctuation around it."""
    core = _EDGES.sub("", token)
    return bool(
        _PLACEHOLDER.match(core) or _ERROR_CLASS.match(core) or core.lower() in _ERROR_WORDS
    )


def error_shape(error: str) -> str:
    """An error with what varies stripped (quoted text, URLs, e-mail addresses, paths, ids,
    numbers), so that occurrences differing only in those count as one, and cut at the first
    word errors do not use (`FileNotFoundError: no file <path> <words>`)."""
    text = " ".join(str(error).split())
    for pattern, placeholder in _SHAPES:
        text = pattern.sub(placeholder, text)
    kept: list[str] = []
    for token in text.split():
        if not _known(token):
            kept.append("<words>")
            break
        kept.append(token)
    return " ".join(kept)[:SHAPE_CHARS] or "(no error text)"


def advice(shape: str, example: str = "") -> str:
    """What to do about a tool whose typical error has this shape (and latest example)."""
    for words, text in _ADVICE:
        if re.search(words, f"{shape} {example}", re.I):
            return text
    return _ADVICE[-1][1]


@dataclass(frozen=True)
class TypicalError:
    """One shape of error a tool returned, how often, and its latest occurrence."""

    shape: str
    count: int
    example: str


@dataclass(frozen=True)
class ToolStats:
    """How one tool has been doing lately."""

    tool: str
    calls: int
    failures: int
    typical_errors: tuple[TypicalError, ...] = ()
    median_ms: int = 0

    @property
    def success_rate(self) -> float:
        """Share of the recent calls that succeeded."""
        return (self.calls - self.failures) / self.calls if self.calls else 1.0

    @property
    def recurring_errors(self) -> tuple[tuple[str, int], ...]:
        """(shape, count) of the errors seen more than once, commonest first."""
        return tuple((e.shape, e.count) for e in self.typical_errors if e.count > 1)

    @property
    def failing(self) -> bool:
        """Whether it keeps failing: enough calls, and most of them failed."""
        return self.calls >= MIN_CALLS and self.success_rate < FAILING_BELOW

    @property
    def typical(self) -> str:
        """Its commonest error shape with its count, or "" when it has not failed."""
        if not self.typical_errors:
            return ""
        top = self.typical_errors[0]
        return f"{top.shape} ({top.count}×)"


@dataclass(frozen=True)
class CriticReport:
    """What the critic found: each tool's figures, the issues, what to do about them."""

    tools: tuple[ToolStats, ...]
    issues: tuple[str, ...]
    recommendations: tuple[str, ...]
    satisfaction: float | None
    window: int = WINDOW

    @property
    def failing(self) -> tuple[ToolStats, ...]:
        """The tools that keep failing."""
        return tuple(t for t in self.tools if t.failing)

    def lines(self) -> list[str]:
        """The report as plain lines for the owner (CLI, chat, digest)."""
        out = [f"Tools (last {self.window} calls each):"]
        for t in self.tools:
            line = f"- {t.tool}: {t.calls - t.failures}/{t.calls} ok ({t.success_rate:.0%})"
            out.append(line + (f"; typical error: {t.typical}" if t.typical else ""))
        if len(out) == 1:
            out.append("- no tool calls recorded yet")
        if self.satisfaction is not None:
            out.append(f"Self-rated satisfaction (introspection): {self.satisfaction:.2f}")
        out.append("Issues:" if self.issues else "Issues: none")
        out.extend(f"- {issue}" for issue in self.issues)
        if self.recommendations:
            out.append("Recommendations:")
            out.extend(f"- {item}" for item in self.recommendations)
        return out


def _typical(rows: list[dict[str, object]]) -> tuple[TypicalError, ...]:
    shapes: Counter[str] = Counter()
    latest: dict[str, str] = {}
    for row in rows:  # newest first: the first example of a shape is its latest
        if row["ok"]:
            continue
        error = " ".join(str(row["error"] or "").split())
        shape = error_shape(error)
        shapes[shape] += 1
        latest.setdefault(shape, error[:EXAMPLE_CHARS])
    return tuple(TypicalError(s, n, latest[s]) for s, n in shapes.most_common(3))


def tool_effectiveness(store: Store, window: int = WINDOW) -> list[ToolStats]:
    """Each tool's last `window` calls: counts, typical errors by shape, median duration."""
    tools = [row["tool"] for row in store.query("SELECT DISTINCT tool FROM tool_calls")]
    stats = []
    for tool in sorted(tools):
        rows = store.query(
            "SELECT ok, error, duration_ms FROM tool_calls WHERE tool = ? ORDER BY id DESC LIMIT ?",
            (tool, window),
        )
        durations = sorted(int(row["duration_ms"] or 0) for row in rows)
        stats.append(
            ToolStats(
                tool,
                len(rows),
                sum(1 for row in rows if not row["ok"]),
                _typical([dict(row) for row in rows]),
                durations[len(durations) // 2] if durations else 0,
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


def newest_call(store: Store) -> int:
    """The id of the newest recorded tool call (0 when none)."""
    rows = store.query("SELECT COALESCE(MAX(id), 0) AS id FROM tool_calls")
    return int(rows[0]["id"])


def critic_report(store: Store, window: int = WINDOW) -> CriticReport:
    """The critic's report: per-tool stats, issues, recommendations (on the store's thread)."""
    tools = tuple(tool_effectiveness(store, window))
    satisfaction = average_satisfaction(store)
    issues: list[str] = []
    recommendations: list[str] = []
    for t in tools:
        top = t.typical_errors[0] if t.typical_errors else None
        if t.failing and top is not None:
            issues.append(
                f"{t.tool} keeps failing: {t.failures} of its last {t.calls} calls; "
                f"typical error: {t.typical}"
            )
        elif top is not None and top.count >= RECURRING:
            issues.append(f"{t.tool} returns the same error again and again: {t.typical}")
        else:
            continue
        recommendations.append(f"{t.tool}: {advice(top.shape, top.example)}")
    if satisfaction is not None and satisfaction < LOW_SATISFACTION:
        issues.append(f"self-rated satisfaction is low: {satisfaction:.2f} over recent reviews")
        recommendations.append("read the recent introspection summaries for what went wrong")
    return CriticReport(tools, tuple(issues), tuple(recommendations), satisfaction, window)


def limitation_of(stats: ToolStats) -> tuple[str, str, str]:
    """Title, description and plan of the limitation for a tool that keeps failing. The
    description carries the error's shape only (it reaches HEARTBEAT.md and the owner's
    alert); the latest error as it was is kept only in the proposal's quoted evidence, which
    the owner opens on request (`/proposals <id>`). The plan is the advice for its shape."""
    top = stats.typical_errors[0]
    description = (
        f"{stats.failures} of its last {stats.calls} calls failed; typical error "
        f"({top.count}×): {top.shape}"
    )
    plan = advice(top.shape, top.example)
    return f"Tool {stats.tool} keeps failing", description, plan[0].upper() + plan[1:]


async def review_tools(deps: PipelineDeps, out: Outbox) -> list[str]:
    """Raise a limitation for every tool that keeps failing and, when it is new, have the
    analysis turn it into a proposal; return the tools newly raised."""
    _, raised = await run_critic(deps, out)
    return raised


async def run_critic(deps: PipelineDeps, out: Outbox) -> tuple[CriticReport, list[str]]:
    """One pass of the critic: its report, and the tools newly raised as limitations (each
    new one also analysed into a proposal)."""
    report = await deps.store.call(critic_report, deps.store)
    raised = []
    for item in report.failing:
        title, description, plan = limitation_of(item)
        message = IncomingMessage("evolution", "critic", f"tool {item.tool} keeps failing")
        ctx = marker_context(deps, message, await load_turn(deps, message), out, cause="critic")
        try:
            _, created = await raise_limitation(ctx, title, description, plan, "critic")
        except PermissionError as exc:  # the hourly cap on new limitations
            log.warning("critic: %s", exc)
            break
        if created:
            raised.append(item.tool)
            await _propose(deps, out, item, title, plan)
    return report, raised


async def _propose(deps: PipelineDeps, out: Outbox, item: ToolStats, title: str, plan: str) -> None:
    """The analysis turns the new gap into a proposal. It is given the error's shape, not the
    latest error: what a person's call carried (a path, a quoted text) stays out of it; the
    latest error is only the proposal's quoted evidence, for the owner's review."""
    from omega.evolution.gaps import propose  # analysis imports the gate: only when needed
    from omega.text import quote_untrusted

    top = item.typical_errors[0]
    latest = quote_untrusted(top.example, f"latest error of {item.tool}, as it was", EXAMPLE_CHARS)
    description = (
        f"{item.failures} of its last {item.calls} calls failed; typical error "
        f"({top.count}×): {top.shape}"
    )
    try:
        await propose(
            deps,
            out,
            title=title,
            description=description,
            plan=plan,
            goal=f"use the tool {item.tool} without failing",
            source="critic",
            words="tool critic",
            evidence=(latest,),
        )
    except Exception:
        log.exception("the analysis of %r failed", title)
