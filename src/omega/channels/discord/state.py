"""What the Discord channel remembers across restarts, in the store (any replica on any host
resumes from it) and a small JSON file (0600) under $OMEGA_HOME (omega.channels.state): for
each channel Omega was spoken to in, the newest message id handed over and whether it is a DM.
After a new gateway session (a restart, or a session Discord would not resume) the channel
reads those channels' history after that id, so messages sent while Omega was down are
answered; the inbox drops any it already has."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omega.channels.state import ChannelState, read_document, write_document

KEEP_CHANNELS = 200  # the channels remembered, most recently active first


@dataclass
class DiscordState:
    """The channel's durable state; `save` writes it atomically."""

    path: Path
    channels: dict[str, dict[str, object]] = field(default_factory=dict)  # id -> last, dm
    stored: ChannelState | None = field(default=None, compare=False)

    @classmethod
    def load(cls, path: Path, stored: ChannelState | None = None) -> DiscordState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            channels = read_document(path, stored)["channels"]
            if not isinstance(channels, dict):
                raise TypeError("channels")
            found = {str(k): dict(v) for k, v in channels.items() if isinstance(v, dict)}
            return cls(path, found, stored)
        except (ValueError, KeyError, TypeError):
            return cls(path, stored=stored)

    def refresh(self) -> None:
        """Take the store's state again (another replica received since this channel was
        built): called when the channel starts receiving."""
        if self.stored is not None:
            self.channels = DiscordState.load(self.path, self.stored).channels

    def handed(self, channel_id: int, message_id: int, dm: bool) -> bool:
        """Note that `message_id` in `channel_id` was handed over; False when nothing changed."""
        key = str(channel_id)
        known = self.channels.pop(key, None)
        last = max(message_id, int(str(known["last"]))) if known else message_id
        self.channels[key] = {"last": last, "dm": dm}  # re-inserted: the most recent last
        for old in list(self.channels)[: max(0, len(self.channels) - KEEP_CHANNELS)]:
            del self.channels[old]
        return known != self.channels[key]

    def tracked(self) -> list[tuple[int, int, bool]]:
        """(channel id, last message id, is a DM) of every remembered channel."""
        return [
            (int(key), int(str(value["last"])), bool(value.get("dm")))
            for key, value in self.channels.items()
        ]

    def save(self) -> None:
        """Keep the state in the store and this host's file (written atomically, 0600)."""
        write_document(self.path, {"channels": self.channels}, self.stored)
