"""Logging to $OMEGA_HOME/omega.log and stderr, with secrets redacted from every record."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import logging.handlers
import re
import sys
import threading
import traceback
from pathlib import Path
from types import TracebackType

from omega.paths import touch_private

REDACTED = "[REDACTED]"
# Shapes of credentials that must never reach a log even if nobody registered them.
_SECRET_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),  # OpenAI / Anthropic style keys
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),  # Google API keys
    re.compile(r"\b\d{6,12}:[A-Za-z0-9_\-]{30,}\b"),  # Telegram bot tokens
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),  # Authorization headers
    # GitHub tokens (classic, OAuth, user, server, refresh; fine-grained)
    re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    re.compile(r"(?<![A-Za-z0-9])(?:xox[abeprs]|xapp)-[0-9][A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),  # AWS key ids
    # `key = value` (a value already hidden, `***` or [REDACTED] alone, is left as it is)
    re.compile(
        r"(?i)((?:api[_-]?key|access[_-]?key|private[_-]?key|token|secret|password|(?<!/)passwd)"
        r"[\"']?\s*[:=]\s*[\"']?)"
        r"(?!(?:\*\*\*|\[REDACTED\])(?:[\s\"',&:]|$))[^\s\"',&]{4,}"
    ),
]

# Credentials written into a URL (`https://user:pass@host`): the user-info part is hidden, up
# to the authority's last `@` (a password may hold an unescaped one).
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@]+(?:@[^/?#\s@]*)*@")
# `Basic <base64 of user:password>` (an Authorization or Proxy-Authorization header echoed).
_BASIC_AUTH = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")

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
    """Redact this exact value from every later log record, as it is and as JSON or `repr()`
    write it (a `"` or `\\` escaped); short values are ignored."""
    if value and len(value) >= 6:
        forms = {value}
        for _ in range(2):  # escaped once, or twice (JSON text inside JSON, a repr of it)
            forms |= {form for text in forms for form in _escaped(text)}
        with _secrets_lock:
            _secrets.update(forms)


def _escaped(text: str) -> tuple[str, ...]:
    """`text` as it reads inside a JSON string (ASCII or not) and inside a Python repr."""
    return (json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1])


def redact_url(url: str) -> str:
    """`url` with any credentials it carries hidden: `https://user:pass@host` ->
    `https://***@host`."""
    return _URL_USERINFO.sub(r"\1***@", url)


def redact_known(text: str) -> str:
    """Replace only the registered secrets (configured keys and tokens: their exact values, and
    those as JSON or `repr()` escape them)."""
    with _secrets_lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(text: str) -> str:
    """Replace registered secrets and credential-shaped strings with [REDACTED], and hide
    credentials in URLs."""
    text = _BASIC_AUTH.sub(_hide_basic, redact_url(redact_known(text)))
    for pattern in _SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def _hide_basic(match: re.Match[str]) -> str:
    """A `Basic` credential hidden when it decodes to `user:password` (not `basic words`)."""
    encoded = match.group(2)
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        plain = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(1) + REDACTED if ":" in plain and plain.isprintable() else match.group(0)


def _print_redacted(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    """`sys.excepthook`: the uncaught exception's traceback on stderr, redacted."""
    if sys.stderr is not None:
        sys.stderr.write(redact("".join(traceback.format_exception(exc_type, exc, tb))))
        sys.stderr.flush()


def _print_thread_exception(args: threading.ExceptHookArgs) -> None:
    """`threading.excepthook`: a thread's uncaught exception, redacted (SystemExit is quiet)."""
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    if sys.stderr is not None:
        name = args.thread.name if args.thread is not None else threading.get_ident()
        sys.stderr.write(f"Exception in thread {name}:\n")
    _print_redacted(args.exc_type, args.exc_value, args.exc_traceback)


def install_excepthooks() -> None:
    """Print every uncaught exception (the main thread's or another's) redacted."""
    sys.excepthook = _print_redacted
    threading.excepthook = _print_thread_exception


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
