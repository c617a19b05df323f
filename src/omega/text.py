"""Text that is always safe to store, log and print: no lone surrogates; untrusted text quoted
as data (`neutralized`, `quote_untrusted` for free text, `literal` for ids and names)."""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """`text` with every lone surrogate (which no UTF-8 encoder accepts) replaced by U+FFFD.

    JSON escapes such as "\\ud800" and undecodable bytes read with `surrogateescape` produce
    them; SQLite, stdout and every channel would fail on them later, losing the message."""
    return _SURROGATE.sub(REPLACEMENT, text) if _SURROGATE.search(text) else text


# Characters that JSON leaves raw in a string but line readers (Python's splitlines, many
# JSONL tools) take as a line break: escaped, so one object is always one line.
_LINE_BREAKING = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def one_line(encoded: str) -> str:
    """A JSON text with the line-breaking characters JSON allows raw in strings escaped."""
    return encoded.translate(_LINE_BREAKING)


QUOTE_CHARS = 200
# What could make quoted text act: a marker-like name (`HEARTBEAT_ADD`, `WHATSAPP_QR`), a
# word with a colon (`SCHEDULE: ...`, `limitation: ...`: every marker with a value needs one),
# quotes and backticks that would close the quotation, and line breaks.
_MARKER_LIKE = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![a-z])")
_WORD_COLON = re.compile(r"(?<=[A-Za-z])([\s*_~']*):(?!//)")
# Control characters, line and paragraph separators, and the bidirectional controls that
# reorder how the rest of a line is shown (an alert's own words could be made to read back to
# front).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f\\u2028\\u2029{_BIDI}]+")


def _tame(match: re.Match[str]) -> str:
    return match.group(0).lower().replace("_", " ")


def neutralized(text: str, limit: int = QUOTE_CHARS) -> str:
    """Text from a person or a tool made inert for a prompt, a checklist or an alert: one
    line, no quotes or backticks, marker-like names broken up and no colon after a word
    (`heartbeat add -` acts on nothing), at most `limit` characters."""
    text = _CONTROL.sub(" ", scrub(text))
    text = text.replace('"', "'").replace("`", "'").replace("\u201c", "'").replace("\u201d", "'")
    text = _WORD_COLON.sub(r"\1 -", _MARKER_LIKE.sub(_tame, text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def quote_untrusted(text: str, label: str, limit: int = QUOTE_CHARS) -> str:
    """`[LABEL] "TEXT"`: untrusted text quoted as data under a label saying where it came from
    (written by Omega), never an instruction."""
    return f'[{label}] "{neutralized(text, limit)}"'


LITERAL_CHARS = 80
_LITERAL_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


# Quotation marks other than '"' that could seem to end the literal where it does not.
_LOOK_ALIKE_QUOTES = frozenset(
    "\u00ab\u00bb\u201c\u201d\u201e\u201f\u2033\u2036\u2039\u203a\u301d\u301e\uff02"
)


def _escaped(char: str) -> str:
    """One character as a literal shows it: printable ones as they are, the rest (and quotation
    marks that look like the literal's own) escaped."""
    if char in _LITERAL_ESCAPES:
        return _LITERAL_ESCAPES[char]
    if (char == " " or char.isprintable()) and char not in _LOOK_ALIKE_QUOTES:
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def literal(value: str, limit: int = LITERAL_CHARS) -> str:
    """An id or a name from outside as a quoted literal the owner reads as data: in double
    quotes, with backslashes, quotes and every character that is not printable (line breaks,
    control characters, bidirectional and zero-width ones) escaped as Python writes them, so
    nothing in it can close the quotation, start a line of its own or reorder what is shown.
    At most `limit` characters stand between the quotes; a longer value is cut, with "…"."""
    pieces = [_escaped(char) for char in scrub(value)]
    if sum(len(piece) for piece in pieces) <= limit:
        return '"' + "".join(pieces) + '"'
    kept: list[str] = []
    used = 0
    for piece in pieces:
        if used + len(piece) > limit - 1:
            break
        kept.append(piece)
        used += len(piece)
    return '"' + "".join(kept) + '…"'


MAX_ROW_ID = 2**63 - 1  # the largest integer SQLite and PostgreSQL's BIGINT store


def row_id(text: str) -> int | None:
    """A row id a person wrote ("12"): its value, or None when it is not one (not decimal
    digits, 0, or past what a database stores, which no row has and no query can bind)."""
    text = text.strip()
    if not text.isdecimal() or len(text) > 19:
        return None
    value = int(text)
    return value if 0 < value <= MAX_ROW_ID else None
