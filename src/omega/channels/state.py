"""A channel's durable state (its cursor, a sync token, the threads it follows): one JSON
document kept in the store (memory.state, scope `channel:<name>`), so a replica on another
host that takes over the channel resumes exactly where the old leader stopped, and mirrored in
a small file under this host's $OMEGA_HOME (0600, written atomically) for a channel built
without a store and for people who look.

Reading prefers the store's copy; a file left by an Omega that kept its state in files only is
taken into the store once, so an upgrade loses no cursor. A write reaches the store: if the
store cannot take it, the error is the channel's (it retries as after any failure), since a
cursor that is not durable would make the next leader start in the wrong place."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega.memory import Store
from omega.memory.state import channel_scope

log = logging.getLogger(__name__)

DOCUMENT = "state"  # the key of a channel's whole state document


@dataclass(frozen=True)
class ChannelState:
    """A plug-in's small durable values in the store, by key (JSON values), for any replica
    on any host: `get` and `put` are plain calls, safe from the channel's worker threads."""

    store: Store
    channel: str

    def get(self, key: str) -> Any:
        """The value kept under `key` (None when there is none)."""
        return self.store.state_get(channel_scope(self.channel), key)

    def put(self, key: str, value: Any) -> None:
        """Keep `value` under `key` (anything JSON can hold)."""
        self.store.state_put(channel_scope(self.channel), key, value)


def read_document(path: Path, stored: ChannelState | None) -> Any:
    """The channel's state document: the store's, else this host's file (then kept in the
    store, once); None when neither has one or it is unreadable."""
    if stored is not None:
        try:
            value = stored.get(DOCUMENT)
        except Exception:  # the store failing: this host's copy is the best there is
            log.exception("channel %s: could not read its state from the store", stored.channel)
            value = None
        if value is not None:
            return value
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if stored is not None:
        try:
            stored.put(DOCUMENT, data)
        except Exception:
            log.exception("channel %s: could not keep its state in the store", stored.channel)
    return data


def write_document(path: Path, data: Any, stored: ChannelState | None) -> None:
    """Keep the document in the store (raises when it cannot) and in this host's file."""
    if stored is not None:
        stored.put(DOCUMENT, data)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(tmp, 0o600)  # O_CREAT's mode is not applied to a file left by a crash
    os.replace(tmp, path)
