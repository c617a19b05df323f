"""Logging to $OMEGA_HOME/omega.log and stderr, with secrets redacted from every record."""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys
import threading
from pathlib import Path

from omega.paths import touch_private

REDACTED = "[REDACTED]"
# Shapes of credentials that must never reach a log even if nobody registered them.
_SECRET_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),  # OpenAI / Anthropic style keys
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),  # Google API keys
    re.compile(r"\b\d{6,12}:[A-Za-z0-9_\-]{30,}\b"),  # Telegram bot tokens
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),  # Authorization headers
    # `key = value` (a value already hidden, `***` or [REDACTED] alone, is left as it is)
    re.compile(
        r"(?i)((?:api[_-]?key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)"
        r"(?!(?:\*\*\*|\[REDACTED\])(?:[\s\"',&:]|$))[^\s\"',&]{4,}"
    ),
]

# Credentials written into a URL (`https://user:pass@host`): the user-info part is hidden.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]+@")

# The loggers kept at WARNING (or the root's level when higher): pydantic-ai's HTTP stack is
# the httpx2/httpcore2 forks, the SDKs the original names.
NOISY_LOGGERS = (
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "openai",
    "anthropic",
    "google_genai",
    "hpack",
)

_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Redact this exact value from every later log record (short values are ignored)."""
    if value and len(value) >= 6:
        with _secrets_lock:
            _secrets.add(value)


def redact_url(url: str) -> str:
    """`url` with any credentials it carries hidden: `https://user:pass@host` ->
    `https://***@host`."""
    return _URL_USERINFO.sub(r"\1***@", url)


def redact_known(text: str) -> str:
    """Replace only the registered secrets (exact values: configured keys and tokens)."""
    with _secrets_lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(text: str) -> str:
    """Replace registered secrets and credential-shaped strings with [REDACTED], and hide
    credentials in URLs."""
    text = redact_url(redact_known(text))
    for pattern in _SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


class RedactingFilter(logging.Filter):
    """Handler filter that renders a record's message and redacts it (and its traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.exc_info = None
        return True


def setup_logging(
    log_file: Path | None, level: str = "info", stderr_level: str = "warning"
) -> None:
    """Send logs to the file (0600, rotated) and stderr; safe to call more than once."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_omega", False):
            root.removeHandler(handler)
            handler.close()
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = []
    if log_file is not None:
        touch_private(log_file)
        file_handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
        )
        file_handler.setLevel(level.upper())
        handlers.append(file_handler)
    stderr_handler = logging.StreamHandler(sys.stderr)
    stderr_handler.setLevel(stderr_level.upper())
    handlers.append(stderr_handler)
    for handler in handlers:
        handler.setFormatter(fmt)
        handler.addFilter(RedactingFilter())
        handler._omega = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(
        min(logging.getLevelName(level.upper()), logging.getLevelName(stderr_level.upper()))
    )
    # Third-party HTTP clients log full URLs at DEBUG/INFO (httpx2 a line per request: a
    # formatted, redacted, written record on every provider call); keep them quiet unless asked.
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
