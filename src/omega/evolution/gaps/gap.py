"""A gap as one source saw it: whose words it is, with whom it was seen, and whether two gaps
are the same one (by title, or by meaning when a model wrote both in its own words)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from omega.evolution.meaning import same_meaning
from omega.turn import MarkerContext

MAX_TITLE = 120
OWNER_REPORTED = "owner"  # the only source whose words enter HEARTBEAT.md as a checklist line
PERSON = "person:"  # reported_by and seen_with of anyone else: person:<channel>:<id>
# reported_by of a gap a turn answering the owner wrote after reading external content (a
# fetched page, a tool's result, an attached file): quoted like anyone else's words.
EXTERNAL_REPORTED = "external content"

Source = Literal["marker", "planner", "heartbeat", "introspection", "critic", "integrity", "voice"]
# Sources whose titles a model wrote in its own words: compared by meaning. The others are
# written by code from a template ("Tool X keeps failing"): only the same title is the same gap.
FREE_TEXT: frozenset[str] = frozenset({"marker", "planner", "heartbeat"})


@dataclass(frozen=True)
class Gap:
    """A limitation as one source saw it: its words, whose words they are, and with whom."""

    title: str
    description: str = ""
    plan: str = ""
    source: Source = "marker"
    reported_by: str = ""  # whose words: OWNER_REPORTED (trusted), person:..., a check's name
    seen_with: str = ""  # owner, person:<channel>:<id>, or "" for Omega's own checks


@dataclass(frozen=True)
class Caps:
    """How many limitations may be accepted: new ones per hour (everyone together) and new
    ones or first sightings per person per day."""

    per_hour: int
    per_person_day: int


def clean_title(title: str) -> str:
    """A title as it is stored: one line, at most MAX_TITLE characters."""
    return " ".join(title.split())[:MAX_TITLE]


def same_gap(gap: Gap, title: str, source: str, is_open: bool = True) -> bool:
    """Whether `gap` is the known limitation with this title and source: the same title (any
    case), or, when it is open and a model wrote both in its own words, titles of the same
    meaning. Only titles are compared: descriptions share boilerplate ("cannot do it") that says
    nothing of the gap. A resolved gap seen again in other words is a new report."""
    if clean_title(gap.title).casefold() == title.casefold():
        return True
    if not is_open or gap.source not in FREE_TEXT or source not in FREE_TEXT:
        return False
    return same_meaning(clean_title(gap.title), title)


CHECKS: dict[str, str] = {  # sources whose words are Omega's own check's, whoever was talking
    "critic": "tool critic",
    "integrity": "integrity check",
    "introspection": "introspection",
    "heartbeat": "heartbeat",
}
VOICE_REPORTED = "voice stage"
# Whose words a gap may carry and still be acted on with nobody reviewing them (the gate's
# approval alone, in autonomous mode; the owner-role heartbeat that quotes it): the owner's own
# (a turn answering the owner that read nothing external), and text Omega's deterministic code
# writes from a template: the tool critic's (a failing tool's name and its errors' shape, never
# their words) and the voice stage's (fixed sentences). Every other value is held for the owner,
# failing closed: a person's (person:...), EXTERNAL_REPORTED, the heartbeat's and introspection's
# (a model that read other people's conversations or tools' results), an integrity check's (it
# quotes an MCP server's own words, a file's name), and "" (before sources were kept) or any
# value not listed here.
OWN_WORDS: frozenset[str] = frozenset({OWNER_REPORTED, CHECKS["critic"], VOICE_REPORTED})


def own_words(reported_by: str) -> bool:
    """Whether a gap's words are the owner's own or Omega's deterministic code's (OWN_WORDS):
    the only ones acted on without the owner's review."""
    return reported_by in OWN_WORDS


def person_key(ctx: MarkerContext) -> str:
    """`person:<channel>:<id>`: the person a turn answers, as sightings and caps count them."""
    return f"{PERSON}{ctx.message.channel}:{ctx.message.sender_id}"


def reporter(ctx: MarkerContext, source: Source) -> str:
    """Whose words a new limitation carries: the owner's only when a turn answering the owner
    wrote it without reading external content (else EXTERNAL_REPORTED); a check's (the
    heartbeat reads others' words), the voice stage's fixed text, or the person's otherwise."""
    if source in CHECKS:
        return CHECKS[source]
    if ctx.role == "owner" and ctx.external:
        return EXTERNAL_REPORTED
    if ctx.role == "owner":
        return OWNER_REPORTED
    if source == "voice":  # its text is Omega's own; only who sent the voice note is theirs
        return VOICE_REPORTED
    return person_key(ctx)


def seen_with(ctx: MarkerContext, source: Source) -> str:
    """With whom a gap was seen: the owner, the person the turn answers, or "" for Omega's own
    background checks (heartbeat, critic, introspection; integrity checks of the owner's set-up)."""
    if source in CHECKS or ctx.cause in ("heartbeat", "critic", "introspection"):
        return ""
    return OWNER_REPORTED if ctx.role == "owner" else person_key(ctx)


def gap_of(ctx: MarkerContext, title: str, description: str, plan: str, source: Source) -> Gap:
    """The gap a turn or check saw, with whose words it is and with whom it was seen."""
    if ctx.cause == "heartbeat" and source == "marker":
        source = "heartbeat"
    return Gap(title, description, plan, source, reporter(ctx, source), seen_with(ctx, source))
