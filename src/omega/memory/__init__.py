"""Persistent memory: SQLite store, migrations and the audit log."""

from omega.memory.audit import AuditEntry
from omega.memory.claims import Claim
from omega.memory.migrations import SchemaTooNewError
from omega.memory.store import Store

__all__ = ["AuditEntry", "Claim", "SchemaTooNewError", "Store"]
