"""Text for WhatsApp: the model's Markdown turned into WhatsApp's own marks.

WhatsApp formats `*bold*`, `_italic_`, `~strike~`, `` `inline code` `` and ```` ``` ````
monospace blocks, and shows `> ` quotes; it has no headings, links with labels or tables. So
`**bold**`/`__bold__` become `*bold*`, `*italic*`/`_italic_` become `_italic_`, `~~s~~` becomes
`~s~`, a heading becomes a bold line, a bullet becomes `•`, `[label](url)` becomes
`label (url)`, and a fenced block keeps its content untouched inside plain ```` ``` ```` fences.
"""

from __future__ import annotations

from omega.channels.text import (
    BULLET,
    FENCE,
    HEADING,
    line_and_ending,
    markdown_inline,
    style_of,
)

__all__ = ["render_whatsapp"]

_INLINE = markdown_inline(r"https?://|mailto:")
_MARKS = {"bold": "*", "bold2": "*", "strike": "~", "italic": "_", "italic2": "_"}


def render_inline(text: str) -> str:
    """One line of Markdown (code, links, bold, italic, strikethrough) in WhatsApp's marks."""
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(text[position : match.start()])
        kind = match.lastgroup or ""
        if kind == "code":
            out.append(match.group())  # WhatsApp shows `inline code` itself
        elif kind == "link":
            label, url = match.group("label"), match.group("url")
            out.append(url if label.strip() == url else f"{render_inline(label)} ({url})")
        else:
            kind = style_of(match)
            mark = _MARKS[kind]
            inner = render_inline(match.group(f"{kind}_in"))
            out.append(f"{mark}{inner}{mark}")
        position = match.end()
    out.append(text[position:])
    return "".join(out)


def _render_line(line: str) -> str:
    heading = HEADING.match(line)
    if heading:
        title = render_inline(heading.group(1))
        return f"*{title}*" if title and not title.startswith("*") else title
    bullet = BULLET.match(line)
    if bullet:
        return f"{bullet.group(1)}• {render_inline(line[bullet.end() :])}"
    return render_inline(line)


def render_whatsapp(piece: str, code: bool = False) -> tuple[str, bool]:
    """A piece of Markdown in WhatsApp's marks, and whether it ends inside a code block.

    `code` says the piece starts inside a fenced block, as a piece split from a long block
    does: it is reopened, and a block the piece leaves open is closed, so every message shows
    its code as code."""
    out: list[str] = ["```\n"] if code else []
    for raw in piece.splitlines(keepends=True):
        line, newline = line_and_ending(raw)
        if FENCE.match(line):
            code = not code
            out.append("```" + newline)
            continue
        out.append(raw if code else _render_line(line) + newline)
    if code:
        ends_a_line = bool(out) and line_and_ending(out[-1])[1] != ""
        out.append("```" if ends_a_line else "\n```")
    return "".join(out), code
