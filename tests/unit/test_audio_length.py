"""How long a voice note plays (providers.transcription.audio_seconds), which prices a
transcription whose service does not say: read from an Ogg stream's last page, else the
file's size at a low bitrate (so it errs long)."""

from __future__ import annotations

import pytest

from omega.providers.transcription import ASSUMED_BYTES_PER_SECOND, audio_seconds

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def page(granule: int, body: bytes = b"") -> bytes:
    """One Ogg page: capture pattern, version 0, its granule position, then the rest."""
    return b"OggS\x00\x00" + granule.to_bytes(8, "little", signed=True) + bytes(13) + body


def test_an_opus_voice_note_plays_its_last_granule_at_48_khz() -> None:
    audio = page(0, b"OpusHead\x01\x01") + page(48000 * 7) + page(48000 * 12, b"end")
    assert audio_seconds(audio) == 12.0


def test_a_vorbis_stream_plays_at_its_own_rate() -> None:
    header = b"\x01vorbis" + bytes(4) + b"\x01" + (16000).to_bytes(4, "little")
    assert audio_seconds(page(0, header) + page(16000 * 3)) == 3.0


def test_a_last_page_with_no_end_counts_the_one_before() -> None:
    audio = page(0, b"OpusHead") + page(48000 * 5) + page(-1, b"partial")
    assert audio_seconds(audio) == 5.0


def test_other_audio_is_timed_by_its_size() -> None:
    for audio in (b"ID3" + bytes(39_997), page(0, b"OpusHead")):  # an mp3; an Ogg with no end
        assert audio_seconds(audio) == len(audio) / ASSUMED_BYTES_PER_SECOND
