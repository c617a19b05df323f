"""`omega security audit`: one set of checks of how safely this Omega is set up, each finding
with a severity, what was found and what to do; some repaired by `--fix`. The same checks feed
the self-check (`omega status`, `/status`, the start-up log) and the web page's Health page.

- model: `AuditContext` (what checks read), `Finding`, `CheckSpec`, severities
- audit: the registry `CHECKS`, `audit` (with fixes), the report's text and JSON forms
- files, walls, access, pins, policy: the checks, one module per group
"""

from omega.ops.security.audit import CHECKS, REPORT_SCHEMA, Report, Threshold, audit
from omega.ops.security.model import SEVERITIES, AuditContext, Finding, Severity, rank

__all__ = [
    "CHECKS",
    "REPORT_SCHEMA",
    "SEVERITIES",
    "AuditContext",
    "Finding",
    "Report",
    "Severity",
    "Threshold",
    "audit",
    "rank",
]
