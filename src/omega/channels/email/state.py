"""What the e-mail channel remembers across restarts, in a small JSON file (0600) under
$OMEGA_HOME: the mailbox's UIDVALIDITY, the last UID handed to Omega, and the thread each
recent mail belongs to (so a reply sent after a restart still lands in its thread)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from omega.channels.email.mail import Thread

KEEP_THREADS = 500  # recent mails whose thread is remembered


@dataclass
class MailState:
    """The channel's durable state; `save` writes it atomically."""

    path: Path
    uidvalidity: int = 0
    last_uid: int = -1  # -1: never connected (the first connection starts at the newest)
    threads: dict[str, dict[str, object]] = field(default_factory=dict)  # message id -> thread
    latest: dict[str, str] = field(default_factory=dict)  # address -> its latest message id

    @classmethod
    def load(cls, path: Path) -> MailState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                path,
                int(data["uidvalidity"]),
                int(data["last_uid"]),
                dict(data.get("threads") or {}),
                dict(data.get("latest") or {}),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return cls(path)

    def save(self) -> None:
        """Write the state atomically, readable by the owner only."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        data = {
            "uidvalidity": self.uidvalidity,
            "last_uid": self.last_uid,
            "threads": self.threads,
            "latest": self.latest,
        }
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)

    def remember(self, message_id: str, address: str, thread: Thread) -> None:
        """Keep the thread of the mail Omega was given as `message_id`."""
        self.threads[message_id] = asdict(thread) | {"references": list(thread.references)}
        self.latest[address] = message_id
        for old in list(self.threads)[: max(0, len(self.threads) - KEEP_THREADS)]:
            del self.threads[old]

    def thread(self, reply_to: str, address: str) -> Thread:
        """The thread a message to `address` answering `reply_to` belongs in: that mail's,
        else the address's latest; an empty Thread (a new conversation) when none."""
        data = self.threads.get(reply_to) or self.threads.get(self.latest.get(address, ""))
        if not data:
            return Thread()
        references = data.get("references")
        return Thread(
            str(data.get("message_id") or ""),
            tuple(str(x) for x in references) if isinstance(references, list) else (),
            str(data.get("subject") or ""),
        )
