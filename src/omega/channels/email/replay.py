"""A proven mail is proof for Omega only when it was written to Omega, and only once.

The receiving server's `dkim=pass`/`dmarc=pass` proves who signed a mail, not to whom it was
sent, nor when it arrived: a mail the owner once signed for someone else (`To: mallory@...`)
still passes when that someone re-sends it, unchanged, to Omega's mailbox, as often as they
like. So a proven mail (assurance "mail_server"):

- whose To and Cc name none of Omega's addresses (`EmailConfig.own_addresses`) is refuted:
  its sender is a stranger, and the gateway's audit row says why ("not addressed to Omega");
- is refused unread (audited, flagged \\Seen, never answered, like a repeated field) when its
  sender's mail with the same Message-ID was handed to Omega before (a replay), when it has no
  Message-ID (a replay could not be told), when its Date is missing or unreadable, or older
  than WINDOW_SECS (its Message-ID may have been forgotten by now).

The Message-IDs are remembered per sender (hashed: the state holds no one's address or ids)
in the channel's durable state (state.py: the store, for every replica, and the file), only
for mails the gateway admitted, until their Date is older than the window. At most KEEP_SEEN
are kept; past that the oldest-dated are forgotten first and `floor` moves up to their Date:
a mail dated at or before it is refused too, so forgetting early never lets a replay in."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from omega.channels.email.limits import Refusal
from omega.channels.email.mail import Received

WINDOW_DAYS = 30
WINDOW_SECS = WINDOW_DAYS * 86_400.0  # how long a proven mail's Message-ID is remembered
KEEP_SEEN = 5_000  # Message-IDs remembered at most (the oldest-dated forgotten first)


def for_omega(mail: Received, own: Collection[str]) -> Received:
    """`mail`, refuted when the server proved its From but its To and Cc name none of `own`
    (Omega's addresses, folded): that proof is of a mail written to someone else."""
    if mail.assurance != "mail_server" or any(to in own for to in mail.recipients):
        return mail
    names = ", ".join(sorted(own)) or "no address of Omega's"
    detail = (
        f"not addressed to Omega: its To and Cc name none of {names}, so "
        f"{mail.assurance_detail} proves a mail written to someone else"
    )
    return dataclasses.replace(mail, assurance="refuted", assurance_detail=detail)


def _key(address: str, message_id: str) -> str:
    return hashlib.sha256(f"{address}\0{message_id}".encode()).hexdigest()[:32]


@dataclass
class Seen:
    """The Message-IDs of proven mails handed to Omega, per sender, with their Date."""

    ids: dict[str, tuple[float, str]] = field(default_factory=dict)  # key -> (Date, mail id)
    floor: float = 0.0  # mails dated at or before this may have been forgotten: refused

    def refusal(self, mail: Received, ident: str, now: float) -> Refusal | None:
        """Why the proven `mail` (Omega's id `ident`) is refused unread as a possible replay;
        None when it is not proven, or new. The same mail read again under its own id (a
        crash before its UID was saved) is not a replay: the inbox answers it once."""
        if mail.assurance != "mail_server":
            return None
        if mail.sent is None:
            return Refusal("no_date", "a proven mail without a readable Date field")
        if mail.sent < now - WINDOW_SECS or mail.sent <= self.floor:
            return Refusal(
                "old_date",
                f"a proven mail dated more than {WINDOW_DAYS} days ago, or before the oldest "
                "mail whose Message-ID Omega still remembers (a replay?)",
            )
        if not mail.message_id:
            return Refusal("no_message_id", "a proven mail without a Message-ID")
        held = self.ids.get(_key(mail.address, mail.message_id))
        if held is not None and held[1] != ident:
            return Refusal(
                "replayed",
                "a proven mail whose Message-ID its sender's mail had before (a replay)",
            )
        return None

    def add(self, address: str, message_id: str, sent: float, ident: str, now: float) -> None:
        """Remember the Message-ID of a proven mail handed to Omega as `ident`."""
        key = _key(address, message_id)
        self.ids.pop(key, None)
        self.ids[key] = (sent, ident)
        self.trim(now)

    def trim(self, now: float) -> None:
        """Forget the Message-IDs dated past the window (their mails are refused by Date), then
        the oldest-dated past KEEP_SEEN, raising `floor` to their Date."""
        for key in [k for k, (sent, _) in self.ids.items() if sent < now - WINDOW_SECS]:
            del self.ids[key]
        if len(self.ids) <= KEEP_SEEN:
            return
        by_date = sorted(self.ids, key=lambda k: self.ids[k][0])
        for key in by_date[: len(self.ids) - KEEP_SEEN]:
            self.floor = max(self.floor, self.ids.pop(key)[0])

    def to_json(self) -> dict[str, object]:
        """What the state document keeps."""
        return {"floor": self.floor, "ids": {k: [sent, i] for k, (sent, i) in self.ids.items()}}

    @classmethod
    def from_json(cls, data: Any) -> Seen:
        """The memory `to_json` wrote; an empty one when there is none. Raises ValueError,
        TypeError, KeyError or AttributeError on a malformed one."""
        if data is None:
            return cls()
        ids = {str(k): (float(v[0]), str(v[1])) for k, v in dict(data["ids"]).items()}
        floor = float(data["floor"])
        if not all(math.isfinite(x) for x in (floor, *(v[0] for v in ids.values()))):
            raise ValueError("a date that is not a number")
        return cls(ids, floor)
