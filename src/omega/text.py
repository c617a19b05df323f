"""Text that is always safe to store, log and print: no lone surrogates."""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """`text` with every lone surrogate (which no UTF-8 encoder accepts) replaced by U+FFFD.

    JSON escapes such as "\\ud800" and undecodable bytes read with `surrogateescape` produce
    them; SQLite, stdout and every channel would fail on them later, losing the message."""
    return _SURROGATE.sub(REPLACEMENT, text) if _SURROGATE.search(text) else text


QUOTE_CHARS = 200
# What could make quoted text act: a marker-like name (`HEARTBEAT_ADD`, `WHATSAPP_QR`), a
# word with a colon (`SCHEDULE: ...`, `limitation: ...`: every marker with a value needs one),
# quotes and backticks that would close the quotation, and line breaks.
_MARKER_LIKE = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![a-z])")
_WORD_COLON = re.compile(r"(?<=[A-Za-z])([\s*_~']*):(?!//)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


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
