"""Text for Telegram: messages split to the Bot API's length limit without losing a character.

Telegram measures a message in UTF-16 code units (an emoji outside the BMP counts two), so the
limit is counted that way here too.
"""

from __future__ import annotations

MAX_MESSAGE_UNITS = 4096
MAX_CAPTION_UNITS = 1024

# Where a piece may end, best first: after a paragraph, after a line, after a space.
_BREAKS = ("\n\n", "\n", " ")


def utf16_len(text: str) -> int:
    """The length of `text` as Telegram counts it (UTF-16 code units)."""
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


def split_text(text: str, limit: int = MAX_MESSAGE_UNITS) -> list[str]:
    """`text` in pieces of at most `limit` UTF-16 units whose concatenation is exactly `text`.

    A piece ends after a paragraph break where one lies in the second half of the window, else
    after a line break, else after a space, else at the limit. No piece is empty; a piece that
    would be only whitespace is kept with its neighbour when that fits."""
    if limit < 2:
        raise ValueError("limit must be at least 2")
    pieces: list[str] = []
    rest = text
    while rest:
        size = _fitting_prefix(rest, limit)
        if size < len(rest):
            window = rest[:size]
            for mark in _BREAKS:
                at = window.rfind(mark)
                if at + len(mark) > size // 2:
                    size = at + len(mark)
                    break
        piece, rest = rest[:size], rest[size:]
        if pieces and not piece.strip() and utf16_len(pieces[-1] + piece) <= limit:
            pieces[-1] += piece
        else:
            pieces.append(piece)
    return pieces
