"""The registry of checks (data), running them, repairing what is safe, and the report in its
two forms: lines for a person and a stable JSON document for scripts and CI (`REPORT_SCHEMA`).

A check that crashes is itself a finding (`audit-error`), never an exception: an audit must
always say something. Fixing is two passes: every fixable finding is repaired, then every check
runs again, so what the report calls fixed is what the second pass no longer finds."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from omega.logs import redact
from omega.ops.security import access, files, pins, policy, walls
from omega.ops.security.model import SEVERITIES, AuditContext, CheckSpec, Finding, Severity, rank

log = logging.getLogger(__name__)

REPORT_VERSION = 1
Threshold = Severity | Literal["never"]  # `--fail-on`: the exit code's threshold
# The order the checks run in and are listed in; an id never changes meaning.
CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("home-mode", "$OMEGA_HOME is owner-only", files.check_home),
    CheckSpec("file-modes", "files holding secrets are owner-only", files.check_secret_files),
    CheckSpec("process-root", "Omega does not run as root", files.check_root),
    CheckSpec("sandbox", "the OS sandbox and its walls", walls.check_sandbox),
    CheckSpec("env-keys", "keys the sandbox would pass on", walls.check_environment),
    CheckSpec("web-bind", "the web page stays on loopback", access.check_web),
    CheckSpec("dm-policy", "who may talk to Omega", access.check_dm_policy),
    CheckSpec("owners", "an owner on every enabled channel", access.check_owners),
    CheckSpec("sender-proof", "owners only where senders are proven", access.check_sender_proof),
    CheckSpec("pins", "skills and tools match their pins", pins.check_pins),
    CheckSpec("mcp-servers", "what MCP servers may write and reach", walls.check_mcp_servers),
    CheckSpec("autonomy", "autonomy mode and manual approval", policy.check_autonomy),
    CheckSpec("claude-cli", "the claude CLI's mode and folder", walls.check_claude),
    CheckSpec("backups", "backups' modes and places", files.check_backups),
    CheckSpec("spending-cap", "the daily spending cap", policy.check_spending),
)


def run_checks(ctx: AuditContext) -> list[Finding]:
    """Every check's findings, worst first (a crashing check is a `high` finding)."""
    found: list[Finding] = []
    for spec in CHECKS:
        try:
            found += spec.run(ctx)
        except Exception as exc:
            log.exception("security check %s crashed", spec.id)
            found.append(
                Finding(
                    "audit-error",
                    "high",
                    f"the check {spec.id} failed",
                    f"{spec.title}: {exc!r}",
                    "see omega.log",
                    subject=spec.id,
                )
            )
    return sorted(found, key=lambda f: rank(f.severity))


@dataclass
class Report:
    """The findings left, those repaired, and the lines saying what changed."""

    home: str
    findings: list[Finding]
    fixed: list[Finding] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)

    def at_or_above(self, threshold: Threshold) -> list[Finding]:
        """Findings left whose severity is `threshold` or worse (none for "never")."""
        if threshold == "never":
            return []
        return [f for f in self.findings if rank(f.severity) <= rank(threshold)]

    def counts(self) -> dict[str, int]:
        """How many findings are left, by severity."""
        return {s: sum(f.severity == s for f in self.findings) for s in SEVERITIES}


def audit(ctx: AuditContext, *, fix: bool = False) -> Report:
    """Run every check; with `fix`, repair what is safe and run them all again."""
    first = run_checks(ctx)
    if not fix:
        return Report(str(ctx.paths.home), first)
    changes: list[str] = []
    tried: list[Finding] = []
    for finding in first:
        if finding.repair is None:
            continue
        tried.append(finding)
        try:
            changes.append(finding.repair())
        except OSError as exc:
            changes.append(f"{finding.id}: not repaired ({exc})")
    left = run_checks(ctx.reloaded())
    still = {f.id for f in left}
    fixed = [f for f in tried if f.id not in still]
    return Report(str(ctx.paths.home), left, fixed, changes)


def _finding_json(finding: Finding, fixed: bool) -> dict[str, Any]:
    return {
        "id": finding.id,
        "check": finding.check,
        "severity": finding.severity,
        "title": redact(finding.title),
        "detail": redact(finding.detail),
        "fix": redact(finding.fix),
        "fixable": finding.fixable,
        "fixed": fixed,
    }


def to_json(report: Report, threshold: Threshold) -> dict[str, Any]:
    """The report as `REPORT_SCHEMA` describes it."""
    return {
        "version": REPORT_VERSION,
        "home": report.home,
        "checks": [spec.id for spec in CHECKS],
        "fail_on": threshold,
        "counts": report.counts(),
        "findings": [_finding_json(f, True) for f in report.fixed]
        + [_finding_json(f, False) for f in report.findings],
        "changes": [redact(line) for line in report.changes],
        "failed": bool(report.at_or_above(threshold)),
    }


def dumps(report: Report, threshold: Threshold) -> str:
    """The JSON document, indented, keys in a stable order."""
    return json.dumps(to_json(report, threshold), indent=2, ensure_ascii=False)


def lines(report: Report) -> list[str]:
    """The report for a person: what was changed, then every finding left, worst first."""
    out = [f"Security audit of {report.home}"]
    if report.changes:
        out.append("Changed:")
        out += [f"  {line}" for line in report.changes]
    for finding in report.findings:
        out.append(f"[{finding.severity.upper()}] {finding.id}: {finding.title}")
        if finding.detail:
            out.append(f"    {finding.detail}")
        if finding.fix:
            tail = " (omega security audit --fix does this)" if finding.fixable else ""
            out.append(f"    -> {finding.fix}{tail}")
    counts = report.counts()
    out.append(
        "Summary: "
        + ", ".join(f"{counts[s]} {s}" for s in SEVERITIES)
        + (f"; {len(report.fixed)} fixed" if report.fixed else "")
    )
    return [redact(line) for line in out]


_FINDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "check", "severity", "title", "detail", "fix", "fixable", "fixed"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "check": {"type": "string", "minLength": 1},
        "severity": {"enum": list(SEVERITIES)},
        "title": {"type": "string"},
        "detail": {"type": "string"},
        "fix": {"type": "string"},
        "fixable": {"type": "boolean"},
        "fixed": {"type": "boolean"},
    },
}
# The JSON document `omega security audit --json` prints (docs/operations.md, "Security audit").
REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["version", "home", "checks", "fail_on", "counts", "findings", "changes", "failed"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": REPORT_VERSION},
        "home": {"type": "string"},
        "checks": {"type": "array", "items": {"type": "string"}},
        "fail_on": {"enum": [*SEVERITIES, "never"]},
        "counts": {
            "type": "object",
            "required": list(SEVERITIES),
            "additionalProperties": False,
            "properties": {s: {"type": "integer", "minimum": 0} for s in SEVERITIES},
        },
        "findings": {"type": "array", "items": _FINDING_SCHEMA},
        "changes": {"type": "array", "items": {"type": "string"}},
        "failed": {"type": "boolean"},
    },
}
