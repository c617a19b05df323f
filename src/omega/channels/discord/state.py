"""What the Discord channel remembers across restarts, in a small JSON file (0600) under
$OMEGA_HOME: for each channel Omega was spoken to in, the newest message id handed over and
whether it is a DM. After a new gateway session (a restart, or a session Discord would not
resume) the channel reads those channels' history after that id, so messages sent while
Omega was down are answered; the inbox drops any it already has."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

KEEP_CHANNELS = 200  # the channels remembered, most recently active first


@dataclass
class DiscordState:
    """The channel's durable state; `save` writes it atomically."""

    path: Path
    channels: dict[str, dict[str, object]] = field(default_factory=dict)  # id -> last, dm

    @classmethod
    def load(cls, path: Path) -> DiscordState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            channels = data["channels"]
            if not isinstance(channels, dict):
                raise TypeError("channels")
            return cls(path, {str(k): dict(v) for k, v in channels.items() if isinstance(v, dict)})
        except (OSError, ValueError, KeyError, TypeError):
            return cls(path)

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
        """Write the state atomically, readable by the owner only."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"channels": self.channels}, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
