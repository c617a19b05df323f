"""A fetched page reduced to text (fetch_url's html_to_text), fuzzed: any markup, broken or
hostile, gives text without raising, in linear time (unclosed scripts, comments and "<"
runs included), with no blank or untrimmed line, and text without markup comes back as its
words."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.tools.html_text import html_to_text

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

any_text = st.text(st.characters(codec=None, categories=None), max_size=60)
pieces = st.sampled_from(
    [
        "<p>",
        "</p>",
        "<br>",
        "<script>",
        "</script >",
        "<!--",
        "-->",
        "<style",
        "<svg",
        "<a href='",
        "&amp;",
        "&#0;",
        "&#x110000;",
        "&#99999999999;",
        "&lt;",
        "<",
        ">",
        "<div\n>",
        "<template>",
        "\u202e",
        "\x00",
        "e\u0301",
    ]
)
pages = st.lists(pieces | any_text, max_size=20).map("".join)
repetitive = st.builds(
    lambda u, n: u * n,
    st.sampled_from(["<", "<!--", "<script", "<a ", "&#", "<br", "<<>", "a:"]),
    st.integers(1, 20_000),
)


@settings(max_examples=300, deadline=None)
@given(pages | repetitive)
def test_any_page_gives_tidy_text_quickly(page: str) -> None:
    started = time.perf_counter()
    text = html_to_text(page)
    assert time.perf_counter() - started < 1.0
    for line in text.splitlines():
        assert line and line == line.strip()


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_characters="<&\r\x1c\x1d\x1e\x85\u2028\u2029"), max_size=60))
def test_text_without_markup_keeps_its_words(plain: str) -> None:
    assert html_to_text(plain).split() == plain.split()
