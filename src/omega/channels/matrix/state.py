"""What the Matrix channel keeps across restarts, in the store (a replica on another host resumes
from it) and a small JSON file (0600) under $OMEGA_HOME (omega.channels.state): the sync token
of the last sync whose events were all handed to Omega, the device a password login made (with
its access token, so a restart is the same device and the homeserver's transaction ids still
recognise a re-sent reply), the encrypted rooms already told that Omega cannot read them, and
the direct room opened with each person."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omega.channels.state import ChannelState, read_document, write_document

KEEP_ENCRYPTED = 500  # encrypted rooms remembered as told, the oldest forgotten first


@dataclass
class SyncState:
    """The channel's durable state; `save` writes it atomically, readable by the owner only."""

    path: Path
    next_batch: str = ""  # "" : never synced (the first sync only marks where to start)
    user_id: str = ""  # the account the device below belongs to
    device_id: str = ""
    access_token: str = ""  # from a password login; a configured token is never written here
    told_encrypted: list[str] = field(default_factory=list)  # room ids
    direct: dict[str, str] = field(default_factory=dict)  # user id -> room id
    stored: ChannelState | None = field(default=None, compare=False)

    @classmethod
    def load(cls, path: Path, stored: ChannelState | None = None) -> SyncState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            data = read_document(path, stored)
            return cls(
                path,
                str(data.get("next_batch") or ""),
                str(data.get("user_id") or ""),
                str(data.get("device_id") or ""),
                str(data.get("access_token") or ""),
                [str(room) for room in data.get("told_encrypted") or []],
                {str(k): str(v) for k, v in (data.get("direct") or {}).items()},
                stored,
            )
        except (ValueError, TypeError, AttributeError):
            return cls(path, stored=stored)

    def refresh(self) -> None:
        """Take the store's state again (another replica synced since this channel was
        built): called when the channel starts syncing."""
        if self.stored is None:
            return
        fresh = SyncState.load(self.path, self.stored)
        self.next_batch, self.told_encrypted, self.direct = (
            fresh.next_batch,
            fresh.told_encrypted,
            fresh.direct,
        )
        if fresh.device_id:
            self.user_id, self.device_id = fresh.user_id, fresh.device_id
            self.access_token = fresh.access_token

    def tell_encrypted(self, room_id: str) -> None:
        """Note that `room_id` was told it cannot be read (a bounded list: anyone may make
        encrypted rooms, and a forgotten one is only told again)."""
        self.told_encrypted.append(room_id)
        del self.told_encrypted[: max(0, len(self.told_encrypted) - KEEP_ENCRYPTED)]

    def save(self) -> None:
        """Keep the state in the store and this host's file (written atomically, 0600)."""
        data = {
            "next_batch": self.next_batch,
            "user_id": self.user_id,
            "device_id": self.device_id,
            "access_token": self.access_token,
            "told_encrypted": self.told_encrypted,
            "direct": self.direct,
        }
        write_document(self.path, data, self.stored)
