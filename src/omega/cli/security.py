"""`omega security audit [--fix] [--json] [--fail-on SEVERITY]`: how safely this Omega is set up.

The audit reads the home as it is: it does not prepare $OMEGA_HOME or open memory.db for
writing first (both would quietly repair file modes and hide what the audit is for)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Annotated

import typer

from omega.cli.support import fail

if TYPE_CHECKING:
    from omega.config import Config

security_app = typer.Typer(help="Check how safely Omega is set up.", no_args_is_help=True)

# Exit codes: 0 nothing at or above --fail-on is left, 1 something is, 2 the audit could not run.
EXIT_FINDINGS = 1


def register(app: typer.Typer) -> None:
    """Add `omega security` to the main `omega` app."""
    app.add_typer(security_app, name="security")


@security_app.command("audit")
def security_audit(
    fix: Annotated[
        bool,
        typer.Option(
            "--fix", help="Repair what is safe: file modes, the web page's host back to 127.0.0.1."
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (schema: docs/operations.md).")
    ] = False,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            help="Exit 1 when a finding this severe or worse is left: critical, high, medium, "
            "low, info or never.",
        ),
    ] = "high",
) -> None:
    """Check file modes, root, the sandbox's walls, keys in the environment, the web page's
    address, who may talk, owners, pins, MCP servers, autonomy, the claude CLI, backups and
    the spending cap; each finding says what to do."""
    from omega.config import ConfigError, load_config
    from omega.ops.security import SEVERITIES, AuditContext, Threshold, audit
    from omega.ops.security.audit import dumps, lines
    from omega.paths import OmegaPaths, default_home

    if fail_on not in (*SEVERITIES, "never"):
        fail(f"--fail-on must be one of {', '.join(SEVERITIES)}, never; not {fail_on!r}")
    threshold: Threshold = fail_on  # type: ignore[assignment]
    paths = OmegaPaths(default_home())
    try:
        config = load_config(paths.config)
    except ConfigError as exc:
        fail(str(exc))
    report = audit(AuditContext(config, paths, proofs=_plugin_proofs(config)), fix=fix)
    if as_json:
        typer.echo(dumps(report, threshold))
    else:
        for line in lines(report):
            typer.echo(line)
    if report.at_or_above(threshold):
        raise typer.Exit(EXIT_FINDINGS)


def _plugin_proofs(config: Config) -> dict[str, str]:
    """How each installed channel plug-in says it knows its senders (its sender_assurance
    under its section); a plug-in that fails to load or bind is left to the audit's default
    (unverified)."""
    from omega.channels.registry import bind_section, discover

    proofs: dict[str, str] = {}
    for name, plugin in discover().plugins.items():
        with contextlib.suppress(Exception):  # an invalid section: the audit's default
            proofs[name] = plugin.sender_assurance(bind_section(config, plugin))
    return proofs
