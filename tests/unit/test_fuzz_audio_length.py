"""How long a voice note plays (audio_seconds), fuzzed on any bytes and on mangled Ogg pages:
always a finite number of seconds >= 0, never an exception, quick on large files."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.providers.transcription import audio_seconds

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def page(granule: int, version: int, body: bytes) -> bytes:
    """One Ogg page: capture pattern, version, granule position, then the rest."""
    return b"OggS" + bytes([version, 0]) + granule.to_bytes(8, "little", signed=True) + body


heads = st.sampled_from([b"OpusHead", b"\x01vorbis" + bytes(4), b"\x01vorbis", b""])
pages = st.builds(
    page, st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, 0, 1]), st.binary(max_size=30)
)
oggs = st.builds(
    lambda head, first, rest, cut: (first + head + b"".join(rest))[: cut or None],
    heads,
    pages,
    st.lists(pages | st.binary(max_size=20), max_size=6),
    st.integers(0, 200),
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600) | st.binary(max_size=200).map(lambda b: b"OggS" + b) | oggs)
def test_any_bytes_play_a_finite_time(audio: bytes) -> None:
    seconds = audio_seconds(audio)
    assert math.isfinite(seconds) and seconds >= 0


def test_a_large_file_of_capture_patterns_is_read_quickly() -> None:
    audio = page(0, 0, b"OpusHead") + b"OggS\x01" * 400_000  # no page of version 0 after
    started = time.perf_counter()
    assert audio_seconds(audio) >= 0
    assert time.perf_counter() - started < 2.0
