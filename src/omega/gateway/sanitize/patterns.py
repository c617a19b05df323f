"""What the sanitizer neutralizes, one pass each: chat-template tokens (removed), role markers
(rewritten as "(quoted) ..."), and instruction-override phrases (wrapped as "[user-quoted: ...]").
Every pattern is lower-case and runs on a `View`'s key."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator

from omega.gateway.sanitize.view import Notes, View, show, squash

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
SPECIAL_RUN_RE = re.compile(rf"(?:{_SPECIAL})(?:[ \t]*+(?:{_SPECIAL}))*(?P<blank>[ \t]*+)")


def drop_tokens(match: re.Match[str], view: View, notes: Notes) -> str:
    """Remove a run of special tokens, leaving a space only where words would otherwise join."""
    for token in _SPECIAL_RE.finditer(view.key, match.start(), match.end()):
        notes.add(f"removed chat-template token {show(view.span(token))}")
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
# Only tried at line starts (see roles), which is much faster than a line-start lookbehind.
_ROLE_LINE_RE = re.compile(
    rf"(?P<indent>[ \t]*+)(?:"
    rf"\#{{1,6}}[ \t]*+(?P<heading>{_ROLE}(?:[ \t]++{_ROLE_SUFFIX})?)[ \t]*+"
    rf"(?P<colon>:|(?=[{_LINE_BREAKS}]|\Z))"
    rf"|(?:\*\*|__)?(?P<speaker>{_ROLE}(?:[ \t]++{_ROLE_SUFFIX})?)(?:\*\*|__)?[ \t]*+:(?:\*\*|__)?"
    r")"
)


def roles(key: str) -> list[re.Match[str]]:
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


def quote_role(match: re.Match[str], view: View, notes: Notes) -> str:
    """Rewrite a role marker as "(quoted) <role>" so it reads as text, not structure."""
    notes.add(f"neutralized role marker {show(view.span(match))}")
    if match.re is _ROLE_INLINE_RE:
        if match.group("bracket") is not None:
            return _spaced(match, f"(quoted) {squash(view.span(match, 'bracket'))}")
        tag = f"{match.group('slash')}{squash(view.span(match, 'tag'))}"
        return _spaced(match, f"(quoted) {tag}")
    if match.group("heading") is not None:
        heading = squash(view.span(match, "heading"))
        return f"{match.group('indent')}(quoted) {heading}{match.group('colon')}"
    return f"{match.group('indent')}(quoted) {squash(view.span(match, 'speaker'))}:"


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
# words can drive a fast candidate scan (see phrases).
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


PHRASE = r"\b(?:" + "|".join(_flex(_either(opening) + rest) for opening, rest in _PHRASES) + r")\b"
_PHRASE_RE = re.compile(PHRASE)
_QUOTE_OPEN = "[user-quoted: "
# A phrase already wrapped by an earlier run is recognized (and kept); this makes sanitize
# idempotent.
QUOTED_RE = re.compile(rf"{re.escape(_QUOTE_OPEN)}{PHRASE}\]")
# Trying the whole phrase alternation at every position is slow in Python's re; a flat
# alternation of the possible first words finds the only places where a phrase can start.
_FIRST_WORDS = {re.split("[ ']", opening)[0] for openings, _ in _PHRASES for opening in openings}
_CANDIDATE_RE = re.compile(rf"\b{_either(_FIRST_WORDS)}")


def phrases(key: str) -> Iterator[re.Match[str]]:
    """Leftmost non-overlapping phrase and quoted-phrase matches, as one finditer would give."""
    pos = 0
    quoted = key.find(_QUOTE_OPEN)
    candidate = _CANDIDATE_RE.search(key)
    while quoted >= 0 or candidate is not None:
        # Quoted phrases start with "[", phrases with a letter: at most one kind per position.
        if quoted >= 0 and (candidate is None or quoted < candidate.start()):
            start, match = quoted, QUOTED_RE.match(key, quoted)
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


def quote_phrase(match: re.Match[str], view: View, notes: Notes) -> str | None:
    """Wrap an override phrase as "[user-quoted: ...]" (already-wrapped ones stay as they are)."""
    if match.re is QUOTED_RE:
        return None
    phrase = squash(view.span(match))
    notes.add(f"quoted instruction-override phrase {show(phrase)}")
    return f"{_QUOTE_OPEN}{phrase}]"
