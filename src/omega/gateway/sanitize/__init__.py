"""Input sanitization, run on every incoming user message before any model sees it.

Three kinds of text are neutralized while the message stays readable as the user's own words:
chat-template special tokens (removed), role-impersonation markers (rewritten as "(quoted) ..."),
and instruction-override phrases (wrapped as "[user-quoted: ...]"). Matching runs on a
per-character NFKC view with invisible format characters stripped, so fullwidth letters or
zero-width characters cannot hide a pattern. Clean text comes back as the very same string.

The passes live beside this module: view.py (invisible characters, the normalized view, the
warnings) and patterns.py (tokens, roles, phrases); this module runs them in order.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from omega.gateway.sanitize.patterns import (
    SPECIAL_RUN_RE,
    drop_tokens,
    phrases,
    quote_phrase,
    quote_role,
    roles,
)
from omega.gateway.sanitize.view import Notes, View, rewrite, strip_invisible

__all__ = ["SanitizeResult", "sanitize"]


@dataclass(frozen=True)
class SanitizeResult:
    """A sanitized message plus one log line per kind of thing that was neutralized."""

    text: str
    warnings: tuple[str, ...] = ()

    @property
    def modified(self) -> bool:
        """Whether sanitizing changed the text (every change records a warning)."""
        return bool(self.warnings)


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
    notes = Notes()
    view = View(strip_invisible(text, notes))
    # Order matters: removing a token can expose a role marker or phrase, never the reverse.
    if "<" in view.key or "[" in view.key:
        tokens = SPECIAL_RUN_RE.finditer(view.key)
        view = rewrite(view, tokens, lambda m, v: drop_tokens(m, v, notes))
    view = rewrite(view, roles(view.key), lambda m, v: quote_role(m, v, notes))
    view = rewrite(view, phrases(view.key), lambda m, v: quote_phrase(m, v, notes))
    if not notes:
        return SanitizeResult(text)
    return SanitizeResult(view.orig, notes.lines())
