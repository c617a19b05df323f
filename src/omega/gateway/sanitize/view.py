"""The normalized view the sanitizer matches on, and the warnings it collects.

Invisible format characters are stripped first; `View` is a per-character NFKC image of the text
whose lower-cased `key` the patterns run on, and `rewrite` maps each edit back to the original
characters, so text no pattern touched comes back exactly as it was."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable

# Past this many distinct warning lines the rest are summarized, so an adversarial message
# cannot flood the log.
_MAX_WARNING_LINES = 20
_SNIPPET_CHARS = 48

# --- invisible characters -------------------------------------------------------------------

# Zero-width, bidi-control and other invisible format characters. Besides the usual set this
# covers the soft hyphen, the bidi isolates and Unicode tag characters, which can hide text from a
# human reader while a model still reads it ("ASCII smuggling").
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f"
)
_INVISIBLE_RE = re.compile(
    # Subdivision flags (England, Scotland, Wales) are a black flag followed by tag characters;
    # they are matched first so that real emoji survive.
    f"(?P<flag>\U0001f3f4[\U000e0020-\U000e007e]{{1,12}}\U000e007f)|(?P<run>[{_INVISIBLE}]+)"
)
_INVISIBLE_CHAR_RE = re.compile(f"[{_INVISIBLE}]")  # a bare class: re scans for it quickly
# ZWNJ/ZWJ glue emoji sequences and shape Indic, Arabic and Persian text; they are kept when both
# neighbours are non-ASCII letters, marks or symbols, where they cannot split an ASCII keyword.
_JOINERS = frozenset("\u200c\u200d")


@functools.lru_cache(maxsize=8192)
def _nfkc(char: str) -> str:
    """The NFKC form of one character (cached: messages repeat characters a lot)."""
    normal = unicodedata.normalize("NFKC", char)
    # Spacing accents such as U+00B8 normalize to a space plus a combining mark. A tokenizer sees
    # the raw character, not a space, so the view keeps it: "<|\xb8|>" is still token-shaped.
    if not char.isspace() and any(c.isspace() for c in normal):
        return char
    return normal


def _joinable(char: str) -> bool:
    """Whether a joiner may stay next to `char`: a non-ASCII letter, mark or symbol (emoji)."""
    category = unicodedata.category(char)
    return (category[0] in "LM" or category in ("So", "Sk")) and all(
        c >= "\x80" for c in _nfkc(char)
    )


def strip_invisible(text: str, notes: Notes) -> str:
    """Remove invisible format characters, keeping joiners inside emoji and non-Latin words."""
    if text.isascii() or _INVISIBLE_CHAR_RE.search(text) is None:
        return text
    out: list[str] = []
    last = removed = 0
    for match in _INVISIBLE_RE.finditer(text):
        if match.group("run") is None:
            continue
        start, end = match.span()
        keep = ""
        if start > 0 and end < len(text) and _joinable(text[start - 1]) and _joinable(text[end]):
            keep = "".join(c for c in match.group() if c in _JOINERS)
        if len(keep) == end - start:
            continue
        out += (text[last:start], keep)
        last = end
        removed += end - start - len(keep)
    if not removed:
        return text
    out.append(text[last:])
    notes.add(f"stripped {removed} invisible or bidi control character(s)")
    return "".join(out)


# --- the normalized view ----------------------------------------------------------------------


class View:
    """A per-character NFKC image of `orig`: patterns match `key`, edits map back to `orig`.

    `text` is the NFKC image; `key` is `text` lower-cased without changing its length, so the
    two share positions and the patterns need no (slow) IGNORECASE. Per-character NFKC keeps
    a simple map: original character i becomes text[starts[i]:starts[i + 1]].
    """

    __slots__ = ("_starts", "key", "orig", "text")

    def __init__(self, orig: str) -> None:
        self.orig = orig
        self._starts: list[int] | None = None
        # Already-normalized text (all ASCII text, most text overall) is its own view.
        if orig.isascii() or unicodedata.is_normalized("NFKC", orig):
            self.text = orig
        else:
            self.text = "".join(map(_nfkc, orig))
        self.key = _fold(self.text)

    def _char_starts(self) -> list[int]:
        """Where each original character begins in the view (built lazily, only on a match)."""
        if self._starts is None:
            lengths = (len(_nfkc(c)) for c in self.orig)
            self._starts = list(itertools.accumulate(lengths, initial=0))
        return self._starts

    def gap(self, v0: int, v1: int) -> str:
        """The text for view span [v0, v1) that no pattern touched.

        Whole original characters come back as they were; a character that a match boundary
        cuts through comes back in its normalized form, which is what the match saw.
        """
        if self.text is self.orig:
            return self.orig[v0:v1]
        if v0 >= v1:
            return ""
        starts = self._char_starts()
        first = bisect.bisect_right(starts, v0) - 1
        last = bisect.bisect_right(starts, v1 - 1) - 1
        head = tail = ""
        lo, hi = first, last + 1
        if starts[first] != v0:
            if first == last:
                return self.text[v0:v1]
            head = self.text[v0 : starts[first + 1]]
            lo = first + 1
        if starts[last + 1] != v1:
            tail = self.text[starts[last] : v1]
            hi = last
        return head + self.orig[lo:hi] + tail

    def span(self, match: re.Match[str], group: str | int = 0) -> str:
        """The normalized (case-preserved) text of a match group."""
        return self.text[match.start(group) : match.end(group)]


def _fold(text: str) -> str:
    """Lower-case `text` one character for one character, so positions stay shared."""
    key = text.lower()
    if len(key) != len(text):
        # Only U+0130 (dotted capital I) lower-cases to two characters; keep its base letter.
        key = "".join(c.lower()[0] for c in text)
    # Turkish dotless i would otherwise dodge "ignore" and "instructions".
    return key.replace("ı", "i") if "ı" in key else key


Replacer = Callable[[re.Match[str], View], str | None]


def rewrite(view: View, matches: Iterable[re.Match[str]], replace: Replacer) -> View:
    """Apply `replace` to each match in the view's key (None keeps that match as it is)."""
    out: list[str] = []
    last = 0
    for match in matches:
        new = replace(match, view)
        if new is None:
            continue
        out += (view.gap(last, match.start()), new)
        last = match.end()
    if not out:
        return view
    out.append(view.gap(last, len(view.text)))
    return View("".join(out))


# --- warnings -------------------------------------------------------------------------------


class Notes:
    """Warning lines in first-seen order, with repeats counted instead of duplicated."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self._counts)

    def add(self, line: str) -> None:
        """Record one neutralized thing."""
        self._counts[line] = self._counts.get(line, 0) + 1

    def lines(self) -> tuple[str, ...]:
        """The log lines, capped so an adversarial message cannot flood the log."""
        lines = [line if n == 1 else f"{line} (x{n})" for line, n in self._counts.items()]
        if len(lines) > _MAX_WARNING_LINES:
            more = len(lines) - _MAX_WARNING_LINES
            lines = [*lines[:_MAX_WARNING_LINES], f"... and {more} more kinds of neutralized text"]
        return tuple(lines)


def show(fragment: str) -> str:
    """A short, quoted, log-safe rendering of a matched fragment."""
    text = " ".join(fragment.split())
    if len(text) > _SNIPPET_CHARS:
        text = text[: _SNIPPET_CHARS - 3] + "..."
    # Escape what a log line cannot hold (controls, lone surrogates) but keep readable scripts.
    safe = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )
    return f"'{safe}'"


_WS_RUN = re.compile(r"\s+")


def squash(fragment: str) -> str:
    """Collapse whitespace runs to single spaces."""
    return _WS_RUN.sub(" ", fragment)
