"""What the Slack channel remembers across restarts, in the store and a small JSON file (0600)
under $OMEGA_HOME (omega.channels.state): the threads Omega follows (it answered a mention
there, so later messages of the thread are answered without a new mention; a refused
stranger's mention is not followed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omega.channels.state import ChannelState, read_document, write_document

KEEP_THREADS = 500  # the most recent followed threads kept


@dataclass
class SlackState:
    """The channel's durable state; `save` writes it atomically."""

    path: Path
    threads: list[tuple[str, str]] = field(default_factory=list)  # (channel, root ts), oldest first
    stored: ChannelState | None = field(default=None, compare=False)

    @classmethod
    def load(cls, path: Path, stored: ChannelState | None = None) -> SlackState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            data = read_document(path, stored)
            threads = [(str(c), str(t)) for c, t in data.get("threads") or []]
        except (ValueError, TypeError, AttributeError):
            return cls(path, stored=stored)
        return cls(path, threads, stored)

    def refresh(self) -> None:
        """Take the store's state again (another replica followed threads since this channel
        was built): called when the channel starts receiving."""
        if self.stored is not None:
            self.threads = SlackState.load(self.path, self.stored).threads

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
        """Keep the state in the store and this host's file (written atomically, 0600)."""
        write_document(self.path, {"threads": [list(t) for t in self.threads]}, self.stored)
