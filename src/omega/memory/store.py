"""The SQLite store: one `Store` facade over the table families, each in its own module.

Methods are synchronous and thread-safe; async code calls them through `Store.call`, which
runs them on the store's single database thread so the event loop never blocks on SQLite.

db.py            the connection, transactions, `call`, the time format
conversations.py conversations, messages (FTS5), summaries
people.py        identities (channel id -> person) and facts
tasks.py         scheduled reminders and actions
audit.py         the audit log and tool calls
inbox.py         the durable inbox, denials, alerts kept for the owner
claims.py        replicas' claims on the inbox (leases, one sender in order)
access.py        allowed people and owners added at run time
pairing.py       strangers' pairing requests and the codes the owner enters
leases.py        the replicas sharing this database and the leases they hold
relay.py         messages for the replica leading a channel only it can send on
held.py          what the notification gate holds for a person's digest, unasked counts
web_sessions.py  the web page's login tokens and sessions (valid on every replica)
Limitations, proposals and lessons keep their repositories in omega.evolution, over
`Store.query` and `Store.transaction`.
"""

from __future__ import annotations

from omega.memory.access import Access
from omega.memory.audit import AuditLog
from omega.memory.claims import InboxClaims
from omega.memory.conversations import Conversations
from omega.memory.held import HeldMessages
from omega.memory.inbox import Inbox
from omega.memory.leases import Leases
from omega.memory.pairing import Pairing
from omega.memory.people import People
from omega.memory.relay import Relay
from omega.memory.state import State
from omega.memory.tasks import Tasks
from omega.memory.web_sessions import WebSessions

__all__ = ["Store"]


class Store(
    Conversations,
    People,
    Tasks,
    AuditLog,
    Inbox,
    InboxClaims,
    Access,
    Pairing,
    Leases,
    Relay,
    HeldMessages,
    State,
    WebSessions,
):
    """Omega's memory.db."""

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables, for status displays."""
        tables = ("conversations", "messages", "facts", "summaries", "scheduled_tasks", "audit_log")
        result = {}
        with self._lock:
            for table in tables:
                result[table] = int(
                    self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                )
            result["inbox_pending"] = int(
                self._conn.execute(
                    "SELECT COUNT(*) FROM inbox WHERE status = 'pending'"
                ).fetchone()[0]
            )
            result["owner_alerts_pending"] = int(
                self._conn.execute(
                    "SELECT COUNT(*) FROM owner_alerts WHERE status = 'pending'"
                ).fetchone()[0]
            )
            result["held_for_digest"] = self.held_waiting()
        return result
