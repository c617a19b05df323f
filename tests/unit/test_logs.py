"""Secrets never reach logs: registered values and credential-shaped strings are redacted."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.logs import REDACTED, redact, register_secret, setup_logging

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def test_known_shapes_are_redacted() -> None:
    samples = [
        "key sk-proj-abcdefghijklmnop1234",
        "token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_x",
        "Authorization: Bearer abc.def-ghi_jkl",
        "api_key=supersecretvalue",
        "AIzaSyA-1234567890abcdefghijklmno",
    ]
    for sample in samples:
        out = redact(sample)
        assert REDACTED in out, sample
    assert "supersecretvalue" not in redact("api_key=supersecretvalue")


def test_registered_secret_never_reaches_the_log_file(tmp_path: Path) -> None:
    log_file = tmp_path / "omega.log"
    register_secret("plain-looking-secret-42")
    setup_logging(log_file, "debug", "critical")
    logger = logging.getLogger("omega.test")
    logger.info("calling with %s", "plain-looking-secret-42")
    try:
        raise RuntimeError("failed with plain-looking-secret-42")
    except RuntimeError:
        logger.exception("boom")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "plain-looking-secret-42" not in text
    assert text.count(REDACTED) >= 2
    assert (log_file.stat().st_mode & 0o777) == 0o600


def test_http_clients_do_not_log_each_request(tmp_path: Path) -> None:
    """httpx2 (pydantic-ai's and the lean path's client) logs every request at INFO: with the
    file at INFO those lines never reach it (a formatted, written record per provider call)."""
    log_file = tmp_path / "omega.log"
    setup_logging(log_file, "info", "critical")
    for name in ("httpx2", "httpcore2", "httpx", "httpcore"):
        logging.getLogger(name).info('HTTP Request: POST http://x/v1 "HTTP/1.1 200 OK"')
    logging.getLogger("httpx2").warning("kept")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "HTTP Request" not in text
    assert "kept" in text


@given(st.text(max_size=100), st.text(max_size=100))
def test_a_registered_secret_is_removed_wherever_it_stands(before: str, after: str) -> None:
    secret = "zq-registered-secret-77"
    register_secret(secret)
    assert secret not in redact(before + secret + after)
