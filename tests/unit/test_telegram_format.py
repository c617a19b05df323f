"""Splitting replies for Telegram: within 4096 UTF-16 units, on good boundaries, nothing lost."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.channels.telegram.format import render_html
from omega.channels.text import split_text, utf16_len
from omega.config import Config, load_config
from tests.fakes.telegram_server import parse_html

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_short_text_is_one_piece() -> None:
    assert split_text("hello") == ["hello"]
    assert split_text("") == []


def test_splits_after_paragraphs_then_lines_then_spaces() -> None:
    text = "a" * 60 + "\n\n" + "b" * 30 + "\n" + "c" * 30
    assert split_text(text, limit=100) == ["a" * 60 + "\n\n", "b" * 30 + "\n" + "c" * 30]
    lines = "x" * 70 + "\n" + "y" * 70
    assert split_text(lines, limit=100) == ["x" * 70 + "\n", "y" * 70]
    words = "w" * 70 + " " + "z" * 70
    assert split_text(words, limit=100) == ["w" * 70 + " ", "z" * 70]
    assert split_text("q" * 250, limit=100) == ["q" * 100, "q" * 100, "q" * 50]


def test_astral_characters_count_two_units() -> None:
    text = "🙂" * 3000  # 6000 UTF-16 units
    pieces = split_text(text)
    assert [utf16_len(p) for p in pieces] == [4096, 6000 - 4096]
    assert "".join(pieces) == text


@given(st.text(alphabet=st.sampled_from("ab \n🙂é"), max_size=600), st.integers(2, 80))
def test_pieces_fit_are_never_empty_and_join_back(text: str, limit: int) -> None:
    pieces = split_text(text, limit=limit)
    assert "".join(pieces) == text
    assert all(piece and utf16_len(piece) <= limit for piece in pieces)


def test_telegram_config_keys(tmp_path: object) -> None:
    assert Config().channel.telegram.api_url == "https://api.telegram.org"
    config = load_config(
        __import__("pathlib").Path("/nonexistent/config.toml"),
        environ={
            "TELEGRAM_BOT_TOKEN": "123:abc",
            "OMEGA_CHANNEL__TELEGRAM__API_URL": "http://127.0.0.1:8081/",
            "OMEGA_CHANNEL__TELEGRAM__WHISPER_API_KEY": "wk-123456",
        },
    )
    telegram = config.channel.telegram
    assert telegram.bot_token.get_secret_value() == "123:abc"
    assert telegram.api_url == "http://127.0.0.1:8081"
    assert telegram.whisper_api_key.get_secret_value() == "wk-123456"


# -- Markdown rendered as Telegram HTML ---------------------------------------------------


def test_markdown_becomes_the_tags_telegram_accepts() -> None:
    html, state = render_html(
        "# Plan\n**bold** and *it* and _also_ and ~~gone~~ and `a<b` "
        "[site](https://example.com/?a=1&b=2)\n- one\n> quoted & kept\n"
    )
    assert state is None
    assert html == (
        "<b>Plan</b>\n<b>bold</b> and <i>it</i> and <i>also</i> and <s>gone</s> and "
        '<code>a&lt;b</code> <a href="https://example.com/?a=1&amp;b=2">site</a>\n'
        "• one\n<blockquote>quoted &amp; kept</blockquote>\n"
    )
    assert parse_html(html) == (
        "Plan\nbold and it and also and gone and a<b site\n• one\nquoted & kept\n"
    )


def test_snake_case_and_arithmetic_stay_as_written() -> None:
    text = "call my_var_name with 2*3*4 and a < b && c > d"
    html, _ = render_html(text)
    assert parse_html(html) == text


def test_code_blocks_are_pre_and_their_content_is_not_formatted() -> None:
    html, state = render_html("```python\nx = a**2 < 3 # *no*\n```\nafter")
    assert state is None
    assert html == (
        '<pre><code class="language-python">x = a**2 &lt; 3 # *no*\n</code></pre>\nafter'
    )


def test_a_code_block_split_over_pieces_stays_code_in_each() -> None:
    text = "intro\n```\n" + "".join(f"line {i} <x>\n" for i in range(40)) + "```\nend"
    pieces = split_text(text, limit=200)
    assert "".join(pieces) == text
    state: str | None = None
    visible = []
    for piece in pieces:
        html, state = render_html(piece, state)
        visible.append(parse_html(html))
        assert "line" not in piece or "<pre><code>" in html
    assert state is None
    assert "".join(visible).replace("\n", "") == text.replace("```", "").replace("\n", "")


def test_breaks_outside_a_code_block_are_preferred() -> None:
    code = "```\n" + "a = 1\n" * 8 + "```\n"
    text = "x" * 10 + " words\n" + code + "tail"
    pieces = split_text(text, limit=len(code) + 10)
    assert pieces[0] == "x" * 10 + " words\n"
    assert pieces[1].startswith("```")


@given(
    st.text(alphabet=st.sampled_from("ab *_~`[]()#>-<&\n🙂é"), max_size=400),
    st.integers(8, 120),
)
def test_any_markdown_renders_to_html_telegram_parses(text: str, limit: int) -> None:
    state: str | None = None
    for piece in split_text(text, limit=limit):
        html, state = render_html(piece, state)
        visible = parse_html(html)  # raises where Telegram would refuse the markup
        assert utf16_len(visible) <= utf16_len(piece) + 2  # "• " for "- " at most


@given(st.text(alphabet=st.sampled_from("ab cd\n🙂é,.?!:;'\"<&"), max_size=300))
def test_text_without_markdown_is_shown_exactly(text: str) -> None:
    html, _ = render_html(text)
    assert parse_html(html) == text
