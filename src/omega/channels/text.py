"""Splitting long replies into pieces a messaging platform accepts (Telegram, WhatsApp).

Lengths are counted in UTF-16 code units (an emoji outside the BMP counts two), as Telegram
counts them; for WhatsApp that is a little stricter than needed, never looser.
"""

from __future__ import annotations

import re

MAX_MESSAGE_UNITS = 4096

# Where a piece may end, best first: after a paragraph, after a line, after a space.
_BREAKS = ("\n\n", "\n", " ")
FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[ \t]*$")


# The inline Markdown models write, shared by the channels that re-render it: each style group
# (`bold`, `bold2` for __x__, `strike`, `italic`, `italic2` for _x_) has its content in
# `<name>_in`; `code` and `link` (with `label` and `url`) are kept apart.
STYLES = ("bold", "bold2", "strike", "italic", "italic2")
HEADING = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t#]*$")
BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+")


def markdown_inline(link_schemes: str) -> re.Pattern[str]:
    """The inline Markdown pattern; links only to URLs starting with `link_schemes` (a regex
    alternation such as `https?://|mailto:`), anything else stays text."""
    return re.compile(
        r"(?P<code>`[^`\n]+`)"
        rf"|(?P<link>\[(?P<label>[^\]\n]+)\]\((?P<url>(?:{link_schemes})[^)\s]+)\))"
        r"|(?P<bold>\*\*(?=\S)(?P<bold_in>.+?)(?<=\S)\*\*)"
        r"|(?P<bold2>(?<!\w)__(?=\S)(?P<bold2_in>.+?)(?<=\S)__(?!\w))"
        r"|(?P<strike>~~(?=\S)(?P<strike_in>.+?)(?<=\S)~~)"
        r"|(?P<italic>(?<![\w*])\*(?=[^\s*])(?P<italic_in>[^*\n]+?)(?<=[^\s*])\*(?![\w*]))"
        r"|(?P<italic2>(?<![\w_])_(?=[^\s_])(?P<italic2_in>[^_\n]+?)(?<=[^\s_])_(?![\w_]))"
    )


def style_of(match: re.Match[str]) -> str:
    """Which style group of `markdown_inline` matched (its content is `<style>_in`)."""
    return next(name for name in STYLES if match.group(name) is not None)


def utf16_len(text: str) -> int:
    """The length of `text` in UTF-16 code units (as Telegram counts it)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _fitting_prefix(text: str, limit: int) -> int:
    """How many characters of `text` fit in `limit` UTF-16 units (at least one)."""
    if utf16_len(text) <= limit:
        return len(text)
    units = 0
    for index, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return max(index, 1)
    return len(text)


def line_and_ending(raw: str) -> tuple[str, str]:
    """A line from `str.splitlines(keepends=True)` and its ending, whichever of the separators
    splitlines knows it ends with (not only \\r and \\n), so a fence line is seen as one."""
    lines = raw.splitlines()
    line = lines[0] if lines else ""
    return line, raw[len(line) :]


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced code block, from its opening fence to its closing one (or
    the end of the text when it is never closed)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    position = 0
    for line in text.splitlines(keepends=True):
        if FENCE.match(line_and_ending(line)[0]):
            if start is None:
                start = position
            else:
                spans.append((start, position + len(line)))
                start = None
        position += len(line)
    if start is not None:
        spans.append((start, len(text)))
    return spans


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    return any(start < at < end for start, end in spans)


def _break_at(text: str, size: int, limit: int) -> int | None:
    """Where a piece of `text` cut at `size` should end: the best break in the window's second
    half outside a code block; else before the code block the cut falls in, when that block fits
    in one piece; else the best break in the second half; None when there is no break at all."""
    window = text[:size]
    spans = _code_spans(text)
    half = size // 2
    for outside_only in (True, False):
        if not outside_only:
            cut = next((span for span in spans if span[0] < size < span[1]), None)
            if cut is not None and cut[0] > 0 and utf16_len(text[cut[0] : cut[1]]) <= limit:
                return cut[0]
        for mark in _BREAKS:
            at = window.rfind(mark)
            while at >= 0 and at + len(mark) > half:
                end = at + len(mark)
                if not outside_only or not _inside(spans, end):
                    return end
                at = window.rfind(mark, 0, at)
    return None


def split_text(text: str, limit: int = MAX_MESSAGE_UNITS) -> list[str]:
    """`text` in pieces of at most `limit` UTF-16 units whose concatenation is exactly `text`.

    A piece ends after a paragraph break where one lies in the second half of the window, else
    after a line break, else after a space, else at the limit; breaks outside fenced code
    blocks are preferred. No piece is empty; a piece that would be only whitespace is kept with
    its neighbour when that fits."""
    if limit < 2:
        raise ValueError("limit must be at least 2")
    pieces: list[str] = []
    rest = text
    while rest:
        size = _fitting_prefix(rest, limit)
        if size < len(rest):
            size = _break_at(rest, size, limit) or size
        piece, rest = rest[:size], rest[size:]
        if pieces and not piece.strip() and utf16_len(pieces[-1] + piece) <= limit:
            pieces[-1] += piece
        else:
            pieces.append(piece)
    return pieces
