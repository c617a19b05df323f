"""Text for Telegram: replies split to the Bot API's limit and Markdown rendered as its HTML.

Telegram measures a message in UTF-16 code units (an emoji outside the BMP counts two), so the
limit is counted that way here too. The limit applies to the text *after* entities are parsed,
and rendering only removes Markdown marks, so a piece of at most 4096 units of Markdown renders
to at most 4096 visible units.

The model writes Markdown; Telegram's HTML mode is the one whose escaping is simple and total
(`&`, `<`, `>`), so Markdown is turned into the few tags Telegram accepts (b, i, s, code, pre,
a, blockquote) and everything else is escaped. A piece Telegram still refuses is sent as plain
text by the channel.
"""

from __future__ import annotations

import html
import re

from omega.channels.text import (
    BULLET,
    FENCE,
    HEADING,
    line_and_ending,
    markdown_inline,
    style_of,
)

MAX_CAPTION_UNITS = 1024

__all__ = ["MAX_CAPTION_UNITS", "render_html"]


# -- Markdown to Telegram HTML -------------------------------------------------------------

_INLINE = markdown_inline(r"https?://|mailto:|tg://")
_TAGS = {"bold": "b", "bold2": "b", "strike": "s", "italic": "i", "italic2": "i"}
_QUOTE = re.compile(r"^>[ \t]?")


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def render_inline(text: str) -> str:
    """One line of Markdown (code, links, bold, italic, strikethrough) as Telegram HTML."""
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(_escape(text[position : match.start()]))
        kind = match.lastgroup or ""
        if kind == "code":
            out.append(f"<code>{_escape(match.group()[1:-1])}</code>")
        elif kind == "link":
            url = html.escape(match.group("url"), quote=True)
            out.append(f'<a href="{url}">{_escape(match.group("label"))}</a>')
        else:
            kind = style_of(match)
            tag = _TAGS[kind]
            out.append(f"<{tag}>{render_inline(match.group(f'{kind}_in'))}</{tag}>")
        position = match.end()
    out.append(_escape(text[position:]))
    return "".join(out)


def _render_line(line: str) -> str:
    heading = HEADING.match(line)
    if heading:
        return f"<b>{render_inline(heading.group(1))}</b>"
    bullet = BULLET.match(line)
    if bullet:
        return f"{bullet.group(1)}• {render_inline(line[bullet.end() :])}"
    return render_inline(line)


def render_html(piece: str, code: str | None = None) -> tuple[str, str | None]:
    """A piece of Markdown as Telegram HTML, and whether it ends inside a code block.

    `code` says the piece starts inside a fenced block (its language, "" for none), as a piece
    split from a long block does; the result's second value is the same for the next piece."""
    out: list[str] = []

    def open_code(language: str) -> None:
        lang = f' class="language-{html.escape(language, quote=True)}"' if language else ""
        out.append(f"<pre><code{lang}>")

    if code is not None:
        open_code(code)
    quote: list[str] = []

    def flush_quote() -> None:
        if quote:
            out.append("<blockquote>" + "".join(quote).rstrip("\n") + "</blockquote>")
            ending = "".join(quote)[len("".join(quote).rstrip("\n")) :]
            out.append(ending)
            quote.clear()

    for raw in piece.splitlines(keepends=True):
        line, newline = line_and_ending(raw)
        fence = FENCE.match(line)
        if fence:
            flush_quote()
            if code is None:
                code = fence.group(1)
                open_code(code)
            else:
                code = None
                out.append("</code></pre>" + newline)
            continue
        if code is not None:
            out.append(_escape(raw))
            continue
        quoted = _QUOTE.match(line)
        if quoted:
            quote.append(_render_line(line[quoted.end() :]) + newline)
            continue
        flush_quote()
        out.append(_render_line(line) + newline)
    flush_quote()
    if code is not None:
        out.append("</code></pre>")
    return "".join(out), code
