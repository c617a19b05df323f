"""The critic's parts: error shapes (what varies stripped), advice, and the report the owner
reads (issues and recommendations from per-tool figures). The whole path, from the tool loop to
a limitation and a proposal, is in tests/integration/test_critic.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.evolution.reflection import newest_call
from omega.evolution.reflection.critic import (
    SHAPE_CHARS,
    advice,
    critic_report,
    error_shape,
    tool_effectiveness,
)
from omega.memory.store import Store
from omega.types import ToolCall


@pytest.mark.no_store
@pytest.mark.parametrize(
    ("error", "shape"),
    [
        ("exit code 3\ndisk full at block 1234", "exit code <n> disk full at block <n>"),
        (
            "timed out after 30s; the command was killed",
            "timed out after <n>; the command was killed",
        ),
        ("no file 'notes/2024.md' in the workspace", "no file <text> in the workspace"),
        ("HTTP 404 for https://example.com/a?b=1", "HTTP <n> for <url>"),
        ("cannot open /home/ann/x.txt: denied", "cannot open <path>: denied"),
        ("task 3f2b1c9a-1111-2222-3333-444455556666 gone", "task <id> gone"),
        ("commit 9f86d081884c7d65 not found", "commit <id> not found"),
        ("no mailbox for alice@example.org", "no mailbox for <email>"),
        ("connection refused at 10.0.0.1:8080", "connection refused at <n>"),
        ("", "(no error text)"),
    ],
)
def test_an_error_shape_strips_what_varies(error: str, shape: str) -> None:
    assert error_shape(error) == shape


@pytest.mark.no_store
@given(st.text(max_size=500))
def test_any_error_has_a_short_stable_shape(error: str) -> None:
    shape = error_shape(error)
    assert 0 < len(shape) <= SHAPE_CHARS
    assert "\n" not in shape
    assert advice(shape, error)  # always some advice


@pytest.mark.no_store
def test_advice_follows_the_kind_of_error() -> None:
    assert "time limit" in advice("timed out after <n>")
    assert "exists" in advice("no file <text> in the workspace")
    assert "network" in advice("connection refused at <n>")
    assert "why" in advice("something odd")


def test_the_report_has_figures_issues_and_recommendations(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    try:
        assert newest_call(store) == 0
        assert critic_report(store).lines()[1] == "- no tool calls recorded yet"
        timeouts = [ToolCall("fetch_url", {}, False, error=f"timed out after {n}s") for n in (5, 9)]
        store.record_tool_calls(
            [
                *[ToolCall("fetch_url", {}, True)] * 6,
                *timeouts * 2,  # 4 failures of 10: working, but one error keeps coming back
                *[ToolCall("read_file", {}, False, error=f"no file 'n{n}.md'") for n in range(5)],
                ToolCall("write_file", {}, True),
            ],
            agent="openai",
        )
        assert newest_call(store) == 16
        report = critic_report(store)
        stats = {t.tool: t for t in tool_effectiveness(store)}
        assert stats["fetch_url"].recurring_errors == (("timed out after <n>", 4),)
        assert [t.tool for t in report.failing] == ["read_file"]
        assert report.issues == (
            "fetch_url returns the same error again and again: timed out after <n> (4×)",
            "read_file keeps failing: 5 of its last 5 calls; typical error: no file <text> (5×)",
        )
        assert report.recommendations == (
            "fetch_url: raise its time limit or check the service it waits on",
            "read_file: check that what it names exists before calling it (list first, then use)",
        )
        text = "\n".join(report.lines())
        assert "- write_file: 1/1 ok (100%)" in text and "- read_file: 0/5 ok (0%)" in text
    finally:
        store.close()
