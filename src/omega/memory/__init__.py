"""Persistent memory: SQLite store, migrations and the audit log."""

from omega.memory.migrations import SchemaTooNewError
from omega.memory.store import AuditEntry, Store

__all__ = ["AuditEntry", "SchemaTooNewError", "Store"]
