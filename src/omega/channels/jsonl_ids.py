"""The ids of `omega chat --jsonl`: a script's own `id` of an input line, checked, and read
back from a line that was not taken (so its `error` object still names it:
docs/channels/terminal.md)."""

from __future__ import annotations

import contextlib
import json

from omega.text import scrub

MAX_ID_CHARS = 200


def id_field(given: object) -> str:
    """A script's `id` as text; ValueError when it is not an acceptable one."""
    if isinstance(given, int) and not isinstance(given, bool):
        given = str(given)
    if not isinstance(given, str) or not given.strip() or len(given) > MAX_ID_CHARS:
        raise ValueError(f"field 'id' must be a non-empty string of at most {MAX_ID_CHARS}")
    return scrub(given.strip())


def given_id(line: str) -> str:
    """The script's `id` of a line that was not taken, when it can still be read ("" else)."""
    with contextlib.suppress(ValueError, RecursionError):
        data = json.loads(line)
        if isinstance(data, dict) and data.get("id") is not None:
            return id_field(data["id"])
    return ""
