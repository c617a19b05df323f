"""One declarative table of every marker, and the pure parser built from it.

`parse_markers(text)` returns the text the user should see and the marker events found.
It is forgiving about what models do (bullets, **bold**, `backticks`, whitespace, prefix case at
the start of a line) and strict about fields. Each marker says in the table whether it acts when
it starts mid-line (`NAME:` in exact upper case after other text; only the marker leaves that
line). Flag markers (SILENT, ...) count only as a whole line in upper case, so a line that is
just the word "Silent" stays text. A marker name merely mentioned in a sentence (no colon) is
left alone; a marker written with a colon is never shown: it acts, or it is stripped and logged
as invalid. A marker whose fields are placeholders (`<title>`, `...`, `title | description |
plan`) is the model explaining syntax: it never acts. Applying the parser to its own output finds
nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from omega.schedule import ScheduleError, parse_repeat, parse_when

Shape = Literal["flag", "text", "fields", "number"]
# When `NAME:` after other text on a line is the marker rather than the word mentioned:
#   never    flags: without a colon they are just words
#   fields   when the rest has the field separators (`SCHEDULE: x | y`)
#   short    when the rest is one short value (an id, a number, a name, a language)
#   sentence when it starts a sentence (free text: `Sure. HEARTBEAT_ADD: check the oven`)
MidLine = Literal["never", "fields", "short", "sentence"]
Validator = Callable[[tuple[str, ...]], str | None]


@dataclass(frozen=True)
class MarkerSpec:
    """How one marker looks and in which order its handler runs."""

    name: str
    shape: Shape
    priority: int
    min_fields: int = 1
    max_fields: int = 1
    number_range: tuple[int, int] = (0, 0)
    max_length: int = 500
    validate: Validator | None = None
    split_once: bool = False  # fields: split on the first `|` only (the rest may contain pipes)
    mid_line: MidLine = "fields"
    max_words: int = 1  # for mid_line="short"


@dataclass(frozen=True)
class MarkerEvent:
    """One valid marker found in a reply."""

    name: str
    fields: tuple[str, ...] = ()
    raw: str = ""

    @property
    def value(self) -> str:
        """The single value of a text or number marker."""
        return self.fields[0] if self.fields else ""


@dataclass(frozen=True)
class ParseResult:
    """Visible text, valid events in handler order, and invalid markers that were stripped."""

    text: str
    events: tuple[MarkerEvent, ...] = ()
    rejected: tuple[tuple[str, str], ...] = field(default=())

    def has(self, name: str) -> bool:
        """Whether a marker of this name was found."""
        return any(e.name == name for e in self.events)


def _schedule_fields(fields: tuple[str, ...]) -> str | None:
    try:
        parse_when(fields[1])
        parse_repeat(fields[2] if len(fields) > 2 else "once")
    except ScheduleError as exc:
        return str(exc)
    return None if fields[0] else "empty description"


_TASK_ID = re.compile(r"^[0-9a-fA-F]{4,32}$")


def _task_id(fields: tuple[str, ...]) -> str | None:
    return None if _TASK_ID.match(fields[0]) else "task id must be 4-32 hex characters"


def _update_fields(fields: tuple[str, ...]) -> str | None:
    problem = _task_id(fields)
    if problem:
        return problem
    rest = fields[1:] + ("",) * (4 - len(fields))
    if not any(rest):
        return "nothing to update"
    try:
        if rest[1]:
            parse_when(rest[1])
        if rest[2]:
            parse_repeat(rest[2])
    except ScheduleError as exc:
        return str(exc)
    return None


_NAME = re.compile(r"^[\w][\w .-]{0,63}$")


def _project_name(fields: tuple[str, ...]) -> str | None:
    return None if _NAME.match(fields[0]) else "invalid project name"


def _language(fields: tuple[str, ...]) -> str | None:
    ok = re.fullmatch(r"[^\W\d_][^\W\d_ ()-]*(?:[ -][^\W\d_]+){0,3}", fields[0])
    return None if ok else "invalid language name"


def _nonempty(fields: tuple[str, ...]) -> str | None:
    return None if all(fields) else "empty field"


# What models write when they explain marker syntax instead of using it.
_BRACKETED = re.compile(r"^(?:<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}|\.{2,}|…+|\?+)$")
_FIELD_WORDS = frozenset(
    "what when repeat title description plan item text language lang name project id task "
    "task_id skill lesson verification minutes how value date time datetime when_iso".split()
)


PLACEHOLDER_REASON = "placeholder fields (syntax explained, not used)"


def is_placeholder(fields: tuple[str, ...]) -> bool:
    """Whether these fields explain syntax: any one bracketed or elided, or all field words."""
    cleaned = [f.strip().strip("\"'").strip() for f in fields]
    if any(_BRACKETED.match(f) for f in cleaned):
        return True
    return all(re.sub(r"[\s-]+", "_", f.lower()) in _FIELD_WORDS for f in cleaned)


MARKERS: tuple[MarkerSpec, ...] = (
    MarkerSpec("SCHEDULE", "fields", 10, 2, 3, validate=_schedule_fields),
    MarkerSpec("SCHEDULE_ACTION", "fields", 11, 2, 3, validate=_schedule_fields),
    MarkerSpec("CANCEL_TASK", "text", 12, validate=_task_id, mid_line="short"),
    MarkerSpec("UPDATE_TASK", "fields", 13, 2, 4, validate=_update_fields),
    # Deactivate before activate: both in one reply is a switch.
    MarkerSpec("PROJECT_DEACTIVATE", "flag", 20, mid_line="never"),
    MarkerSpec("PROJECT_ACTIVATE", "text", 21, validate=_project_name, mid_line="short"),
    MarkerSpec("WHATSAPP_QR", "flag", 30, mid_line="never"),
    MarkerSpec(
        "LANG_SWITCH", "text", 40, max_length=40, validate=_language, mid_line="short", max_words=3
    ),
    MarkerSpec("HEARTBEAT_ADD", "text", 50, max_length=300, mid_line="sentence"),
    MarkerSpec("HEARTBEAT_REMOVE", "text", 51, max_length=300, mid_line="sentence"),
    MarkerSpec("HEARTBEAT_INTERVAL", "number", 52, number_range=(1, 1440), mid_line="short"),
    MarkerSpec(
        "SKILL_IMPROVE", "fields", 60, 2, 2, max_length=1000, validate=_nonempty, split_once=True
    ),
    MarkerSpec("LIMITATION", "fields", 70, 3, 3, max_length=1000, validate=_nonempty),
    # Only acted on in heartbeat replies (enforced by its handler).
    MarkerSpec(
        "LIMITATION_RESOLVED",
        "fields",
        71,
        1,
        2,
        max_length=1000,
        split_once=True,
        validate=lambda f: None if f[0] else "empty title",
    ),
    MarkerSpec(
        "SELF_HEAL", "fields", 80, 2, 2, max_length=1000, validate=_nonempty, split_once=True
    ),
    MarkerSpec("SELF_HEAL_RESOLVED", "flag", 81, mid_line="never"),
    MarkerSpec("HEARTBEAT_OK", "flag", 90, mid_line="never"),
    MarkerSpec("SILENT", "flag", 99, mid_line="never"),
)
SPECS: dict[str, MarkerSpec] = {spec.name: spec for spec in MARKERS}

_NAMES = "|".join(sorted(SPECS, key=len, reverse=True))
_DECOR = r"[*_`~\s]*"
# A marker at the start of a line, after bullets, quotes, numbering and emphasis.
_LINE_START = re.compile(
    rf"^\s*(?:(?:[-*+•]|\d{{1,3}}[.)])\s+|>\s*)*{_DECOR}(?P<name>{_NAMES})(?![A-Za-z0-9_])"
    rf"{_DECOR}(?:(?P<colon>:)(?P<rest>.*))?$",
    re.IGNORECASE,
)
# A marker starting mid-line: exact upper-case name of a marker that acts there, then a colon.
_MID_NAMES = "|".join(
    sorted((s.name for s in MARKERS if s.mid_line != "never"), key=len, reverse=True)
)
_SENTENCE_END = re.compile(r"[.!?…]$")
_MID_LINE = re.compile(rf"(?<![A-Za-z0-9_])(?P<name>{_MID_NAMES}){_DECOR}:")
_STRIP_DECOR = "*_`~ \t"
_ANY_NAME = re.compile(_NAMES, re.IGNORECASE)


def _clean_field(text: str) -> str:
    return text.strip().strip(_STRIP_DECOR).strip()


def _fields(spec: MarkerSpec, rest: str | None, has_colon: bool) -> tuple[str, ...] | str:
    """The marker's fields, or the reason they are invalid."""
    if spec.shape == "flag":
        return () if not _clean_field(rest or "") else "a flag marker takes no value"
    if not has_colon:
        return "missing ':'"
    body = _clean_field(rest or "")
    if not body:
        return "empty value"
    if len(body) > spec.max_length:
        return "value too long"
    if spec.shape == "number":
        if not re.fullmatch(r"[+]?\d{1,6}", body):
            return "not a whole number"
        low, high = spec.number_range
        return (str(int(body)),) if low <= int(body) <= high else f"out of range {low}-{high}"
    if spec.shape == "text":
        values: tuple[str, ...] = (body,)
    else:
        parts = body.split("|", 1) if spec.split_once else body.split("|")
        values = tuple(_clean_field(p) for p in parts)
        if not spec.min_fields <= len(values) <= spec.max_fields:
            return f"expected {spec.min_fields}-{spec.max_fields} fields separated by '|'"
    if is_placeholder(values):
        return PLACEHOLDER_REASON
    if spec.validate is not None:
        problem = spec.validate(values)
        if problem:
            return problem
    return values


def _last_mid_line(line: str) -> re.Match[str] | None:
    """The right-most `NAME:` in the line that is written as the marker, not mentioned."""
    for match in reversed(list(_MID_LINE.finditer(line))):
        spec = SPECS[match.group("name")]
        rest = _clean_field(line[match.end() :])
        before = line[: match.start()].rstrip(_STRIP_DECOR)
        if spec.mid_line == "fields":
            used = rest.count("|") >= max(spec.min_fields - 1, 1)
        elif spec.mid_line == "short":
            used = 0 < len(rest.split()) <= spec.max_words
        else:
            used = bool(rest) and (not before or bool(_SENTENCE_END.search(before)))
        if used:
            return match
    return None


def _counts_at_line_start(name: str) -> bool:
    """A flag is a whole line in upper case ("1. Silent" is a sentence); others any case."""
    return SPECS[name.upper()].shape != "flag" or name.isupper()


def _parse_line(line: str) -> tuple[str | None, list[MarkerEvent], list[tuple[str, str]]]:
    """Process one line: (what remains visible or None, events, rejected markers)."""
    events: list[MarkerEvent] = []
    rejected: list[tuple[str, str]] = []
    current: str | None = line
    while current is not None:
        start = _LINE_START.match(current)
        if start and _counts_at_line_start(start.group("name")):
            spec = SPECS[start.group("name").upper()]
            result = _fields(spec, start.group("rest"), bool(start.group("colon")))
            if not isinstance(result, str):
                events.append(MarkerEvent(spec.name, result, current.strip()))
                return None, events, rejected
            if start.group("name").isupper():  # clearly meant as a marker: strip, never show
                rejected.append((current.strip(), result))
                return None, events, rejected
        match = _last_mid_line(current)
        if match is None:
            return current, events, rejected
        # The right-most marker runs to the end of the line; then look left of it.
        spec = SPECS[match.group("name")]
        raw = current[match.start() :].strip()
        result = _fields(spec, current[match.end() :], True)
        if isinstance(result, str):
            rejected.append((raw, result))
        else:
            events.append(MarkerEvent(spec.name, result, raw))
        current = current[: match.start()].rstrip(_STRIP_DECOR + "-–—:") or None
    return current, events, rejected


def parse_markers(text: str) -> ParseResult:
    """Split a model reply into visible text and marker events (pure; never raises)."""
    if not _ANY_NAME.search(text):  # the common case: a reply with no marker at all
        return ParseResult(text=text)
    kept: list[str] = []
    events: list[tuple[int, MarkerEvent]] = []
    rejected: list[tuple[str, str]] = []
    for line in text.splitlines():
        visible, found, bad = _parse_line(line)
        for event in found:
            events.append((len(events), event))
        rejected.extend(bad)
        if visible is not None:
            kept.append(visible)
    if not events and not rejected:
        return ParseResult(text=text)
    ordered = sorted(events, key=lambda item: (SPECS[item[1].name].priority, item[0]))
    return ParseResult(
        text=_tidy("\n".join(kept)),
        events=tuple(event for _, event in ordered),
        rejected=tuple(rejected),
    )


def _tidy(text: str) -> str:
    """Collapse the blank lines that removed markers leave behind."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()
