"""A fetched HTML page reduced to readable text for the model (fetch_url): crude, and linear
in the page whatever it holds."""

from __future__ import annotations

import html
import re

__all__ = ["html_to_text"]

# Each pattern is linear in the page: an unclosed script or comment runs to the end (\Z)
# rather than being looked for again from every later "<", and a tag holds no "<" (a page
# of "<<<<" or "<!--<!--" once took a CPU-second per 10 KB, after fetch_url's time cap).
_DROP_RE = re.compile(r"<(script|style|noscript|template|svg)\b.*?(?:</\1\s*>|\Z)", re.S | re.I)
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_BREAK_RE = re.compile(r"<(?:br|/p|/div|/li|/tr|/h[1-6]|/title|hr)\b[^<>]*>", re.I)
_TAG_RE = re.compile(r"<[^<>]+>")


def html_to_text(page: str) -> str:
    """HTML reduced crudely to readable text: scripts and tags dropped, entities decoded."""
    text = _COMMENT_RE.sub(" ", _DROP_RE.sub(" ", page))
    text = _TAG_RE.sub(" ", _BREAK_RE.sub("\n", text))
    lines = (" ".join(line.split()) for line in html.unescape(text).splitlines())
    return "\n".join(line for line in lines if line)
