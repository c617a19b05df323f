"""What the e-mail channel remembers, in the store (a replica on another host that takes the
channel over resumes at the same UID) and a small JSON file (0600) under $OMEGA_HOME
(omega.channels.state): the
mailbox's UIDVALIDITY and the last UID handed to Omega (the cursor), and for ADMITTED senders
only the thread their recent mails belong to (so a reply sent after a restart still lands in
its thread).

Nothing of a mail's sender is written before the gateway admitted them: the thread of every
mail is first kept in memory only (`remember`, the newest KEEP_RECENT), and written with the
cursor once the durable inbox holds the mail (`admit`). A refused stranger's address and
subject never reach the file. Every map is bounded (KEEP_THREADS, oldest dropped first).

The Message-IDs of admitted proven mails (hashed, per sender) are kept too, to refuse a replay
of one (replay.py). A document an Omega without them wrote is taken with its `floor` at the
time it is read: a proven mail dated before then may have been handed over already."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from omega.channels.email.mail import Thread
from omega.channels.email.replay import Seen
from omega.channels.state import ChannelState, read_document, write_document

KEEP_THREADS = 500  # admitted mails (and their senders) whose thread is written down
KEEP_RECENT = 500  # mails of this run whose thread is held in memory, admitted or not
# The file's format: 2 keeps admitted senders' threads only. A file without it (an Omega that
# wrote every sender's thread) gives its cursor and nothing else.
VERSION = 2


@dataclass
class MailState:
    """The channel's durable state; `save` writes it atomically."""

    path: Path
    uidvalidity: int = 0
    last_uid: int = -1  # -1: never connected (the first connection starts at the newest)
    threads: dict[str, dict[str, object]] = field(default_factory=dict)  # message id -> thread
    latest: dict[str, str] = field(default_factory=dict)  # address -> its latest message id
    # This run's mails, admitted or not: message id -> (address, thread, the Date of a proven
    # mail else None). Never saved.
    recent: OrderedDict[str, tuple[str, Thread, float | None]] = field(default_factory=OrderedDict)
    seen: Seen = field(default_factory=Seen)  # admitted proven mails' Message-IDs (replay.py)
    stored: ChannelState | None = field(default=None, compare=False)

    @classmethod
    def load(cls, path: Path, stored: ChannelState | None = None) -> MailState:
        """The saved state, or a fresh one when there is none (or it is unreadable)."""
        try:
            data = read_document(path, stored)
            state = cls(path, int(data["uidvalidity"]), int(data["last_uid"]), stored=stored)
            if data.get("version") == VERSION:
                state.threads = {str(k): dict(v) for k, v in dict(data["threads"]).items()}
                state.latest = {str(k): str(v) for k, v in dict(data["latest"]).items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls(path, stored=stored)
        try:
            state.seen = Seen.from_json(data["seen"])
        except (ValueError, KeyError, TypeError, AttributeError):
            # Written by an Omega that kept no Message-IDs (or unreadable): any proven mail
            # dated before now may have been handed over already.
            state.seen = Seen(floor=time.time())
        state._trim()
        state.seen.trim(time.time())
        return state

    def refresh(self) -> None:
        """Take the store's state again (the leader before this one moved the cursor since
        this channel was built): called when the channel starts reading."""
        if self.stored is None:
            return
        fresh = MailState.load(self.path, self.stored)
        self.uidvalidity, self.last_uid = fresh.uidvalidity, fresh.last_uid
        self.threads, self.latest, self.seen = fresh.threads, fresh.latest, fresh.seen

    def save(self) -> None:
        """Keep the state in the store and this host's file (written atomically, 0600)."""
        data = {
            "version": VERSION,
            "uidvalidity": self.uidvalidity,
            "last_uid": self.last_uid,
            "threads": self.threads,
            "latest": self.latest,
            "seen": self.seen.to_json(),
        }
        write_document(self.path, data, self.stored)

    def remember(
        self, message_id: str, address: str, thread: Thread, proven_sent: float | None = None
    ) -> None:
        """Hold, in memory only, the thread of the mail Omega was given as `message_id`
        (`proven_sent`: the Date of a mail the server proved, whose Message-ID `admit` keeps)."""
        self.recent.pop(message_id, None)
        self.recent[message_id] = (address, thread, proven_sent)
        while len(self.recent) > KEEP_RECENT:
            self.recent.popitem(last=False)

    def admit(self, message_id: str) -> bool:
        """Write down the thread of a mail the gateway admitted, and the Message-ID of a proven
        one (to be saved with the cursor); False when this run does not hold it."""
        held = self.recent.get(message_id)
        if held is None:
            return False
        address, thread, proven_sent = held
        if proven_sent is not None and thread.message_id:
            self.seen.add(address, thread.message_id, proven_sent, message_id, time.time())
        self.threads.pop(message_id, None)
        self.threads[message_id] = asdict(thread) | {"references": list(thread.references)}
        self.latest.pop(address, None)
        self.latest[address] = message_id
        self._trim()
        return True

    def _trim(self) -> None:
        """Drop the oldest threads and senders past KEEP_THREADS."""
        for old in list(self.threads)[: max(0, len(self.threads) - KEEP_THREADS)]:
            del self.threads[old]
        for old in list(self.latest)[: max(0, len(self.latest) - KEEP_THREADS)]:
            del self.latest[old]

    def thread(self, reply_to: str, address: str) -> Thread:
        """The thread a message to `address` answering `reply_to` belongs in: that mail's
        (written down, or held from this run), else the address's latest written one; an empty
        Thread (a new conversation) when none."""
        held = self.recent.get(reply_to)
        if held is not None and held[0] == address:
            return held[1]
        data = self.threads.get(reply_to) or self.threads.get(self.latest.get(address, ""))
        if not data:
            return Thread()
        references = data.get("references")
        return Thread(
            str(data.get("message_id") or ""),
            tuple(str(x) for x in references) if isinstance(references, list) else (),
            str(data.get("subject") or ""),
        )
