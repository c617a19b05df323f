"""A mail body as the text a person wrote: HTML to plain text, quoted history and signature
removed. Both run in linear time whatever the input (the standard library's HTMLParser does
not: some unclosed markup costs it quadratic time or worse)."""

from __future__ import annotations

import html
import re

__all__ = ["html_to_text", "strip_quoted"]

_BLOCKS = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"}
)
_HIDDEN = frozenset({"script", "style", "head"})  # their content is never text
_TAG_NAME = re.compile(r"/?\s*([A-Za-z][A-Za-z0-9]{0,20})")
_CLOSERS = {name: re.compile(rf"</\s*{name}\s*>", re.IGNORECASE) for name in _HIDDEN}


def _markup_to_chunks(markup: str) -> list[str]:
    """The text between tags, block tags as line breaks, hidden elements and comments left
    out. One pass: every search starts where the last one ended or reuses its answer."""
    out: list[str] = []
    pos, size = 0, len(markup)
    next_gt = -1  # the first ">" at or after the last search's start; -1: none searched
    while pos < size:
        lt = markup.find("<", pos)
        if lt < 0:
            out.append(html.unescape(markup[pos:]))
            break
        out.append(html.unescape(markup[pos:lt]))
        if markup.startswith("<!--", lt):
            end = markup.find("-->", lt + 4)
            if end < 0:
                break  # an unclosed comment hides the rest
            pos = end + 3
            continue
        if next_gt <= lt:
            next_gt = markup.find(">", lt + 1)
            if next_gt < 0:
                out.append(html.unescape(markup[lt:]))  # no tag closes any more: all text
                break
        inner = markup.find("<", lt + 1, next_gt)
        if inner >= 0:  # "a < b": the "<" opens no tag
            out.append("<")
            pos = lt + 1
            continue
        tag = markup[lt + 1 : next_gt]
        pos = next_gt + 1
        match = _TAG_NAME.match(tag)
        if match is None:
            continue  # <!DOCTYPE>, <?xml ...?>, a stray "<>"
        name = match.group(1).lower()
        closing = tag.lstrip().startswith("/")
        if name in _HIDDEN and not closing:
            closer = _CLOSERS[name].search(markup, pos)
            if closer is None:
                break  # never closed: the rest is hidden
            pos = closer.end()
        elif name in _BLOCKS:
            out.append("\n")
    return out


def html_to_text(markup: str) -> str:
    """The readable text of an HTML mail body."""
    lines = [" ".join(line.split()) for line in "".join(_markup_to_chunks(markup)).splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# The line a mail program writes above the history it quotes.
_ATTRIBUTION = re.compile(
    r"^(On .{1,200}wrote:|-----\s*Original Message\s*-----|From: .+|Le .{1,200}a écrit\s*:"
    r"|Am .{1,200}schrieb .{0,100}:|El .{1,200}escribió:|Em .{1,200}escreveu:)\s*$",
    re.IGNORECASE,
)


def strip_quoted(text: str) -> str:
    """The new text of a reply: everything from the quoted history (">" lines, an
    "On ... wrote:" line) and the signature ("-- ") down is removed."""
    lines = text.replace("\r\n", "\n").split("\n")
    count = len(lines)
    # From the end: the next non-blank line after each one, and whether every non-blank line
    # after it is quoted (one pass backwards instead of a rescan per line).
    next_line: list[str | None] = [None] * count
    all_quoted_after = [True] * count
    following: str | None = None
    quoted_so_far = True
    for index in range(count - 1, -1, -1):
        next_line[index] = following
        all_quoted_after[index] = quoted_so_far
        line = lines[index]
        if line.strip():
            following = line
            quoted_so_far = quoted_so_far and line.lstrip().startswith(">")
    kept: list[str] = []
    for index, line in enumerate(lines):
        if line.rstrip() == "--":  # the signature separator "-- "
            break
        after = next_line[index]
        stripped = line.strip()
        if _ATTRIBUTION.match(stripped) and (after is None or after.lstrip().startswith(">")):
            break
        if line.lstrip().startswith(">") and all_quoted_after[index]:
            break
        kept.append(line)
    return "\n".join(kept).strip()
