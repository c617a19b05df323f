"""Splitting replies for Telegram: within 4096 UTF-16 units, on good boundaries, nothing lost."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from omega.channels.telegram.format import split_text, utf16_len
from omega.config import Config, load_config


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
