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
