"""A tool result is redacted whole before it is cut to the record's preview: a registered
secret the 300-character cut would split leaves no piece of itself (the API providers' tool
wrapper and the claude CLI's stream alike)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from omega.logs import register_secret
from omega.providers.claude.stream import StreamParser
from omega.tools.wrappers import preview

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

KEY = "straddleKEY0123456789abcdefghijABCDEFGHIJ"  # no credential shape: only registered


def _pieces(text: str) -> list[str]:
    """The 8-character pieces of KEY found in `text`."""
    return [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in text]


def _straddling() -> str:
    """Output whose KEY starts 20 characters before the cut."""
    return "x" * 280 + KEY + " and more output"


def test_the_tool_wrappers_preview_hides_a_secret_across_the_cut() -> None:
    register_secret(KEY)
    assert _pieces(preview(_straddling())) == []
    assert _pieces(preview({"stdout": _straddling()})) == []


@pytest.mark.parametrize("is_error", [False, True])
@pytest.mark.parametrize(
    "content", [_straddling(), [{"type": "text", "text": _straddling()}], {"raw": _straddling()}]
)
def test_the_claude_streams_preview_hides_a_secret_across_the_cut(
    content: object, is_error: bool
) -> None:
    register_secret(KEY)
    parser = StreamParser()
    events: list[dict[str, Any]] = [
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": content,
                        "is_error": is_error,
                    }
                ]
            },
        },
    ]
    for event in events:
        parser.feed_line(json.dumps(event).encode(), 0.0)
    (call,) = parser.finish(1.0).tool_calls
    assert call.ok is not is_error
    assert "x" * 200 in call.result_preview
    assert _pieces(call.result_preview + call.error) == []
