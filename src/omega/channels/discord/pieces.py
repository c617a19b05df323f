"""Replies cut to Discord's 2,000-character limit: on paragraph or line boundaries, and a code
block that must be cut anyway is closed at the end of one piece and reopened in the next, so
each piece renders as code on its own."""

from __future__ import annotations

from omega.channels.text import FENCE, line_and_ending, split_text

MAX_MESSAGE_CHARS = 2000  # Discord refuses longer `content`
# Room kept in each piece for a closing fence and a reopening one (with its language).
_FENCE_ROOM = 40
_MAX_LANGUAGE = 20  # a longer language tag is not repeated when a block is reopened


def _open_fence_after(piece: str, language: str | None) -> str | None:
    """The language of the code block still open at the end of `piece` ("" for none given),
    or None when no block is open; `language` is the block open at its start."""
    for raw in piece.splitlines(keepends=True):
        match = FENCE.match(line_and_ending(raw)[0])
        if match is None:
            continue
        language = match.group(1) if language is None else None
    return language


def discord_pieces(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """`text` as the messages to send, each within `limit` characters (counted in UTF-16
    units, never more than Discord counts); whitespace-only pieces are left out."""
    pieces: list[str] = []
    language: str | None = None  # the code block open where the next piece starts
    for body in split_text(text, max(limit - _FENCE_ROOM, 2)):
        open_at_end = _open_fence_after(body, language)
        piece = body
        if language is not None:
            piece = f"```{language if len(language) <= _MAX_LANGUAGE else ''}\n{piece}"
        if open_at_end is not None:
            piece += ("" if piece.endswith("\n") else "\n") + "```"
        if body.strip():
            pieces.append(piece)
        language = open_at_end
    return pieces
