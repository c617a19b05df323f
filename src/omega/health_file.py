"""A channel's health file: written by the running channel, read by status and the self-check.

`omega status` and the start-up self-check run in another process than `omega start`, so the
running channel keeps a small file (0600, `OmegaPaths.channel_health`) with its account and
whether it is receiving. A leaf: the channels write it (omega.channels.health keeps it current)
and the self-check below them reads it, neither through the other.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from omega.logs import redact
from omega.paths import write_private

log = logging.getLogger(__name__)


def write_health(path: Path, **fields: object) -> None:
    """Record the channel's state now, its text redacted (a plug-in's failure may quote a
    secret); failures are logged, never raised."""
    shown = {
        key: redact(value) if isinstance(value, str) else value for key, value in fields.items()
    }
    try:
        write_private(path, json.dumps({**shown, "updated_at": time.time()}))
    except OSError as exc:
        log.warning("could not write %s: %s", path.name, exc)


def read_health(path: Path) -> dict[str, object] | None:
    """The last report, or None when there is none (or it cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
