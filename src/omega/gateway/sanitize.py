"""Input sanitization, run on every incoming user message before any model sees it.

Three kinds of text are neutralized while the message stays readable as the user's own words:
chat-template special tokens (removed), role-impersonation markers (rewritten as "(quoted) ..."),
and instruction-override phrases (wrapped as "[user-quoted: ...]"). Matching runs on a
per-character NFKC view with invisible format characters stripped, so fullwidth letters or
zero-width characters cannot hide a pattern. Clean text comes back as the very same string.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = ["SanitizeResult", "sanitize"]

# Past this many distinct warning lines the rest are summarized, so an adversarial message
# cannot flood the log.
_MAX_WARNING_LINES = 20
_SNIPPET_CHARS = 48


@dataclass(frozen=True)
class SanitizeResult:
    """A sanitized message plus one log line per kind of thing that was neutralized."""

    text: str
    warnings: tuple[str, ...] = ()

    @property
    def modified(self) -> bool:
        """Whether sanitizing changed the text (every change records a warning)."""
        return bool(self.warnings)


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


def _strip_invisible(text: str, notes: _Notes) -> str:
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


class _View:
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


_Replacer = Callable[[re.Match[str], _View], str | None]


def _rewrite(view: _View, matches: Iterable[re.Match[str]], replace: _Replacer) -> _View:
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
    return _View("".join(out))


# --- warnings -------------------------------------------------------------------------------


class _Notes:
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


def _show(fragment: str) -> str:
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


def _squash(fragment: str) -> str:
    """Collapse whitespace runs to single spaces."""
    return _WS_RUN.sub(" ", fragment)


# --- 1. chat-template tokens ----------------------------------------------------------------

# Patterns here and below are lower-case: they run on the view's lower-cased key.
# No token pattern may contain whitespace: removal leaves whitespace (or a string edge) at every
# seam, so the pieces around a removed token can never join into a new token.
_SPECIAL = (
    r"<\|[^\s<>]{0,64}?\|>"  # <|im_start|>, <|eot_id|>, <|user|>, DeepSeek's fullwidth bars
    r"|</?s>"
    r"|<</?sys>>"
    r"|\[/?inst\]"
    r"|\[/?(?:system_prompt|available_tools|tool_results|tool_calls)\]"
    r"|<(?:start|end)_of_turn>"
    r"|<(?:bos|eos|pad|unk)>"
    r"|</?(?:tool_call|tool_response|function_call)>"
)
_SPECIAL_RE = re.compile(_SPECIAL)
# Adjacent tokens go in one piece, with the blanks after them, so the seam rule sees the real
# neighbours and "a [INST] b" becomes "a b" rather than "a  b".
_SPECIAL_RUN_RE = re.compile(rf"(?:{_SPECIAL})(?:[ \t]*+(?:{_SPECIAL}))*(?P<blank>[ \t]*+)")


def _drop_tokens(match: re.Match[str], view: _View, notes: _Notes) -> str:
    """Remove a run of special tokens, leaving a space only where words would otherwise join."""
    for token in _SPECIAL_RE.finditer(view.key, match.start(), match.end()):
        notes.add(f"removed chat-template token {_show(view.span(token))}")
    key, (start, end) = view.key, match.span()
    if start == 0 or key[start - 1].isspace():
        return ""
    if match.group("blank"):
        return " "
    return "" if end == len(key) or key[end].isspace() else " "


# --- 2. role impersonation --------------------------------------------------------------------

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK_RE = re.compile(f"[{_LINE_BREAKS}]")
_ROLES = ("system", "assistant", "developer")
_ROLE = f"(?:{'|'.join(_ROLES)})"
_ROLE_SUFFIX = r"(?:message|note|prompt|instructions?|override|notice|update|directive)"
# Possessive whitespace quantifiers keep long runs of blanks linear.
_ROLE_INLINE_RE = re.compile(
    rf"\[[ \t]*+(?P<bracket>{_ROLE}(?:[ \t_\-]++{_ROLE_SUFFIX})?)[ \t]*+\]"
    rf"|<[ \t]*+(?P<slash>/?)[ \t]*+"
    rf"(?P<tag>(?:{_ROLE}|user|human)(?:[ \t_\-]*+(?:prompt|message|instructions?))?)"
    rf"[ \t]*+/?[ \t]*+>"
)
# Only tried at line starts (see _roles), which is much faster than a line-start lookbehind.
_ROLE_LINE_RE = re.compile(
    rf"(?P<indent>[ \t]*+)(?:"
    rf"\#{{1,6}}[ \t]*+(?P<heading>{_ROLE}(?:[ \t]++{_ROLE_SUFFIX})?)[ \t]*+"
    rf"(?P<colon>:|(?=[{_LINE_BREAKS}]|\Z))"
    rf"|(?:\*\*|__)?(?P<speaker>{_ROLE}(?:[ \t]++{_ROLE_SUFFIX})?)(?:\*\*|__)?[ \t]*+:(?:\*\*|__)?"
    r")"
)


def _roles(key: str) -> list[re.Match[str]]:
    """Role-marker matches in order: inline tags anywhere, speaker lines at line starts."""
    matches: list[re.Match[str]] = []
    if "[" in key or "<" in key:
        matches += _ROLE_INLINE_RE.finditer(key)
    if any(role in key for role in _ROLES):
        starts = itertools.chain((0,), (m.end() for m in _LINE_BREAK_RE.finditer(key)))
        matches += filter(None, (_ROLE_LINE_RE.match(key, start) for start in starts))
        # Inline matches never span a line break and line matches hold no brackets, so the two
        # kinds never overlap; they only need merging by position.
        matches.sort(key=lambda m: m.start())
    return matches


def _spaced(match: re.Match[str], replacement: str) -> str:
    """Pad an inline replacement with spaces where it would otherwise run into a word."""
    key, (start, end) = match.string, match.span()
    before = " " if start > 0 and key[start - 1].isalnum() else ""
    after = " " if end < len(key) and key[end].isalnum() else ""
    return f"{before}{replacement}{after}"


def _quote_role(match: re.Match[str], view: _View, notes: _Notes) -> str:
    """Rewrite a role marker as "(quoted) <role>" so it reads as text, not structure."""
    notes.add(f"neutralized role marker {_show(view.span(match))}")
    if match.re is _ROLE_INLINE_RE:
        if match.group("bracket") is not None:
            return _spaced(match, f"(quoted) {_squash(view.span(match, 'bracket'))}")
        tag = f"{match.group('slash')}{_squash(view.span(match, 'tag'))}"
        return _spaced(match, f"(quoted) {tag}")
    if match.group("heading") is not None:
        heading = _squash(view.span(match, "heading"))
        return f"{match.group('indent')}(quoted) {heading}{match.group('colon')}"
    return f"{match.group('indent')}(quoted) {_squash(view.span(match, 'speaker'))}:"


# --- 3. instruction-override phrases ----------------------------------------------------------

# In phrase patterns below a single space stands for any separator run and an apostrophe for
# either apostrophe (see _flex).
_SEP = r"[\s_\-]++"
_VERBS = ("ignore", "disregard", "override", "overrule", "bypass")
_SOFT_VERBS = (
    "forget",
    "forget about",
    "discard",
    "abandon",
    "set aside",
    "throw away",
    "throw out",
    "stop following",
    "stop obeying",
    "no longer follow",
    "do not follow",
    "do not obey",
    "don't follow",
    "don't obey",
)
_MODE_VERBS = ("enter", "activate", "switch to", "switch into", "go into")
_QUALIFIER = (
    r"(?:all|any|every|each|of|the|your|these|those|this|that|my|its|previous|previously|prior"
    r"|above|earlier|preceding|foregoing|former|original|initial|old|past|existing|current|given"
    r"|default|system|safety|developer|programmed|hidden|other|such|said|last|first)"
)
# Not "orders" or "directions": "ignore my previous orders" is shopping, not an attack.
_NOUN = (
    r"(?:instructions?|rules?|prompts?|directives?|guidelines?|guardrails?|commands?"
    r"|constraints?|restrictions?|limitations?|programming|guidance|polic(?:y|ies)"
    r"|protocols?|safeguards?|filters?|ethics)"
)
_TOLD = (
    r"(?:(?:(?:that|which|what) )?(?:you(?:'ve| have| were| are)?|i(?:'ve| have)?) "
    r"(?:(?:been|just|already|previously|ever) )?"
    r"(?:told|taught|instructed|trained|programmed|said|written|know)"
    r"|above|before|prior|previously|so far|until now|up to (?:now|this point)"
    r"|(?:that )?came before)"
)
_FREEDOM = (
    r"(?:restrictions|rules|limits|limitations|filters|guidelines|guardrails|boundaries"
    r"|constraints|censorship)"
)
_BAD_MODE = r"(?:god|dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil)"
_BAD_AI = (
    r"(?:(?:evil|rogue|unrestricted|unfiltered|uncensored|jailbroken) "
    r"(?:ai|assistant|model|chatbot|bot|language model))"
)
# (literal openings, rest of the pattern). The openings are plain words so that their first
# words can drive a fast candidate scan (see _phrases).
_PHRASES: tuple[tuple[tuple[str, ...], str], ...] = (
    (_VERBS, rf"(?: {_QUALIFIER}){{0,4}} {_NOUN}"),
    (_SOFT_VERBS, rf"(?: {_QUALIFIER}){{1,4}} {_NOUN}"),
    (_VERBS + _SOFT_VERBS, rf" (?:all|everything|anything) {_TOLD}"),
    (
        _VERBS + _SOFT_VERBS,
        r"(?: (?:all|everything|anything)(?: of)?)?"
        r"(?: (?:the|what's|what is))? (?:above|foregoing|preceding)",
    ),
    (
        ("you are", "you're"),
        rf" now (?:(?:a|an|the) )?(?:{_BAD_AI}|dan|in (?:{_BAD_MODE}|developer|dev) mode"
        rf"|jailbroken|unrestricted|unfiltered|uncensored|unbound|unchained|unleashed"
        rf"|free (?:from|of) (?:(?:all|any|your) )?{_FREEDOM}"
        rf"|no longer (?:bound|restricted|limited|constrained|an? (?:ai|assistant|language model))"
        r")",
    ),
    (
        ("act as", "pretend to be", "roleplay as", "behave as", "you will be"),
        rf" (?:dan|an? {_BAD_AI})",
    ),
    (
        ("new", "updated", "revised", "real", "actual", "true", "secret", "hidden", "override"),
        r" system (?:prompt|instructions?)",
    ),
    ((*_MODE_VERBS, "turn on", "enable", "unlock"), rf" (?:the )?{_BAD_MODE} mode"),
    (_MODE_VERBS, r" (?:the )?(?:developer|dev) mode"),
    (("you",), rf" (?:have|had|now have) no (?:more )?{_FREEDOM}"),
)


def _flex(pattern: str) -> str:
    """Let each space match any separator run and each apostrophe either apostrophe."""
    return pattern.replace("'", "['’]").replace(" ", _SEP)


def _either(words: Iterable[str]) -> str:
    """An alternation of literal words, longest first so that none shadows a longer one."""
    return "(?:" + "|".join(sorted(set(words), key=lambda w: (-len(w), w))) + ")"


_PHRASE = r"\b(?:" + "|".join(_flex(_either(opening) + rest) for opening, rest in _PHRASES) + r")\b"
_PHRASE_RE = re.compile(_PHRASE)
_QUOTE_OPEN = "[user-quoted: "
# A phrase already wrapped by an earlier run is recognized (and kept); this makes sanitize
# idempotent.
_QUOTED_RE = re.compile(rf"{re.escape(_QUOTE_OPEN)}{_PHRASE}\]")
# Trying the whole phrase alternation at every position is slow in Python's re; a flat
# alternation of the possible first words finds the only places where a phrase can start.
_FIRST_WORDS = {re.split("[ ']", opening)[0] for openings, _ in _PHRASES for opening in openings}
_CANDIDATE_RE = re.compile(rf"\b{_either(_FIRST_WORDS)}")


def _phrases(key: str) -> Iterator[re.Match[str]]:
    """Leftmost non-overlapping phrase and quoted-phrase matches, as one finditer would give."""
    pos = 0
    quoted = key.find(_QUOTE_OPEN)
    candidate = _CANDIDATE_RE.search(key)
    while quoted >= 0 or candidate is not None:
        # Quoted phrases start with "[", phrases with a letter: at most one kind per position.
        if quoted >= 0 and (candidate is None or quoted < candidate.start()):
            start, match = quoted, _QUOTED_RE.match(key, quoted)
        else:
            assert candidate is not None
            start, match = candidate.start(), _PHRASE_RE.match(key, candidate.start())
        pos = start + 1 if match is None else match.end()
        if match is not None:
            yield match
        # Re-search only what now lies behind `pos`, keeping the whole scan linear.
        if 0 <= quoted < pos:
            quoted = key.find(_QUOTE_OPEN, pos)
        if candidate is not None and candidate.start() < pos:
            candidate = _CANDIDATE_RE.search(key, pos)


def _quote_phrase(match: re.Match[str], view: _View, notes: _Notes) -> str | None:
    """Wrap an override phrase as "[user-quoted: ...]" (already-wrapped ones stay as they are)."""
    if match.re is _QUOTED_RE:
        return None
    phrase = _squash(view.span(match))
    notes.add(f"quoted instruction-override phrase {_show(phrase)}")
    return f"{_QUOTE_OPEN}{phrase}]"


# --- entry point ------------------------------------------------------------------------------

# Last resort if the real sanitizer ever fails: turn every structural delimiter into a harmless
# look-alike and drop invisible characters, so no template token or tag can survive.
_CRUDE_TABLE = str.maketrans(
    {
        **dict.fromkeys("<＜﹤", "("),
        **dict.fromkeys(">＞﹥", ")"),
        **dict.fromkeys("[［", "("),
        **dict.fromkeys("]］", ")"),
        **dict.fromkeys("|｜", "/"),
        **dict.fromkeys(
            [chr(c) for c in (0xAD, 0x61C, 0x180E, 0xFEFF)]
            + [chr(c) for c in range(0x200B, 0x2070) if unicodedata.category(chr(c)) == "Cf"],
            None,
        ),
    }
)


def sanitize(text: str) -> SanitizeResult:
    """Neutralize template tokens, role markers and override phrases in a user message.

    Never raises; text with nothing to neutralize comes back as the identical string.
    """
    try:
        return _sanitize(text)
    except Exception:  # a sanitizer bug must neither crash the pipeline nor pass text through raw
        crude = text.translate(_CRUDE_TABLE)
        return SanitizeResult(crude, ("sanitizer failed; applied crude fallback escaping",))


def _sanitize(text: str) -> SanitizeResult:
    """The sanitizer proper: invisible characters, then tokens, roles and phrases, in order."""
    notes = _Notes()
    view = _View(_strip_invisible(text, notes))
    # Order matters: removing a token can expose a role marker or phrase, never the reverse.
    if "<" in view.key or "[" in view.key:
        tokens = _SPECIAL_RUN_RE.finditer(view.key)
        view = _rewrite(view, tokens, lambda m, v: _drop_tokens(m, v, notes))
    view = _rewrite(view, _roles(view.key), lambda m, v: _quote_role(m, v, notes))
    view = _rewrite(view, _phrases(view.key), lambda m, v: _quote_phrase(m, v, notes))
    if not notes:
        return SanitizeResult(text)
    return SanitizeResult(view.orig, notes.lines())
