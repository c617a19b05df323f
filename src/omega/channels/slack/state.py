"""What the Slack channel remembers across restarts, in a small JSON file (0600) under
$OMEGA_HOME: the threads Omega follows (it answered a mention there, so later messages of the
thread are answered without a new mention; a refused stranger's mention is not followed)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

KEEP_THREADS = 500  # the most recent followed threads kept


@dataclass
class SlackState:
    """The channel's durable state; `save` writes it atomically."""

    path: Path
    threads: list[tuple[str, str]] = field(default_factory=list)  # (channel, root ts), oldest first

    @classmethod
    def load(cls, path: Path) -> SlackState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            threads = [(str(c), str(t)) for c, t in data.get("threads") or []]
        except (OSError, ValueError, TypeError, AttributeError):
            return cls(path)
        return cls(path, threads)

    @property
    def followed(self) -> set[tuple[str, str]]:
        """The threads Omega follows."""
        return set(self.threads)

    def follow(self, thread: tuple[str, str]) -> bool:
        """Follow `thread`; False when it already was (nothing to save)."""
        if thread in self.threads:
            return False
        self.threads.append(thread)
        del self.threads[: max(0, len(self.threads) - KEEP_THREADS)]
        return True

    def save(self) -> None:
        """Write the state atomically, readable by the owner only."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"threads": [list(t) for t in self.threads]}, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
