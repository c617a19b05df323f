"""Text for Slack: the model's Markdown rendered as Slack's mrkdwn, split to Slack's limit.

mrkdwn is not Markdown: bold is `*x*`, italic `_x_`, strikethrough `~x~`, a link `<url|text>`,
and there are no headings (they become bold lines). `&`, `<` and `>` are control characters
and are escaped everywhere (code included: Slack shows `&lt;` as `<` there too); a `>` that
starts a line stays, as Slack's quote. Fenced code keeps its fences, without the language.
"""

from __future__ import annotations

import re

from omega.channels.text import (
    BULLET,
    FENCE,
    HEADING,
    line_and_ending,
    markdown_inline,
    split_text,
    style_of,
)

__all__ = ["MAX_MESSAGE_CHARS", "escape", "render_mrkdwn", "split_mrkdwn"]

# chat.postMessage: "limit the number of characters in the text field to 4,000"; longer
# messages are split rather than left for Slack to truncate.
MAX_MESSAGE_CHARS = 4000

_INLINE = markdown_inline(r"https?://|mailto:")
_MARKS = {"bold": "*", "bold2": "*", "strike": "~", "italic": "_", "italic2": "_"}
_QUOTE = re.compile(r"^>[ \t]?")


def escape(text: str) -> str:
    """Slack's three control characters escaped (`&` first)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_inline(text: str) -> str:
    """One line of Markdown (code, links, bold, italic, strikethrough) as mrkdwn."""
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(escape(text[position : match.start()]))
        kind = match.lastgroup or ""
        if kind == "code":
            out.append(f"`{escape(match.group()[1:-1])}`")
        elif kind == "link":
            label = escape(match.group("label")).replace("|", "¦")
            out.append(f"<{escape(match.group('url'))}|{label}>")
        else:
            kind = style_of(match)
            mark = _MARKS[kind]
            out.append(f"{mark}{render_inline(match.group(f'{kind}_in'))}{mark}")
        position = match.end()
    out.append(escape(text[position:]))
    return "".join(out)


def _render_line(line: str) -> str:
    heading = HEADING.match(line)
    if heading:
        return f"*{render_inline(heading.group(1))}*"
    bullet = BULLET.match(line)
    if bullet:
        return f"{bullet.group(1)}• {render_inline(line[bullet.end() :])}"
    quoted = _QUOTE.match(line)
    if quoted:
        return "> " + _render_line(line[quoted.end() :])
    return render_inline(line)


def render_mrkdwn(piece: str, in_code: bool = False) -> tuple[str, bool]:
    """A piece of Markdown as mrkdwn, and whether it ends inside a fenced code block.

    `in_code` says the piece starts inside one (a piece split from a long block): the block
    is reopened, and closed at the piece's end when it does not close there."""
    out: list[str] = ["```\n"] if in_code else []
    for raw in piece.splitlines(keepends=True):
        line, newline = line_and_ending(raw)
        if FENCE.match(line):
            out.append("```" + newline)
            in_code = not in_code
        elif in_code:
            out.append(escape(raw))
        else:
            out.append(_render_line(line) + newline)
    text = "".join(out)
    if in_code:
        text = text.rstrip("\n") + "\n```"
    return text, in_code


def split_mrkdwn(markdown: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """`markdown` as mrkdwn messages of at most `limit` characters each, in order; pieces
    that are only whitespace are left out (Slack refuses an empty text)."""
    messages: list[str] = []
    in_code = False
    budget = limit - 8  # room for a code block closed at a piece's end and reopened
    pending = split_text(markdown, max(budget, 2))
    while pending:
        piece = pending.pop(0)
        rendered, after = render_mrkdwn(piece, in_code)
        if len(rendered) > limit and len(piece) > 1:
            # Escaping made it longer (`&` is five characters in mrkdwn): split it smaller.
            pending[:0] = split_text(piece, max(len(piece) // 2, 2))
            continue
        if piece.strip():
            messages.append(rendered)
        in_code = after
    return messages
