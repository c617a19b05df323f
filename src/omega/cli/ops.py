"""`omega backup`, `omega restore` and `omega service`: running Omega for months. `omega init`
(set-up) is cli/setup.py, registered here with them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omega.cli.setup import init
from omega.cli.support import fail, service_kind

service_app = typer.Typer(
    help="Run Omega in the background: a systemd user unit (Linux) or launchd agent (macOS).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the operations commands to the main `omega` app."""
    app.command()(backup)
    app.command()(restore)
    app.add_typer(service_app, name="service")
    app.command("init")(init)


@service_app.command("install")
def service_install(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the unit instead of installing it.")
    ] = False,
    no_start: Annotated[
        bool, typer.Option("--no-start", help="Install and enable, but do not start now.")
    ] = False,
) -> None:
    """Install Omega as a service that starts at login and restarts when it fails."""
    from omega.ops import service
    from omega.paths import default_home

    kind = service_kind()
    spec = service.default_spec(default_home())
    if dry_run:
        typer.echo(f"# {service.unit_path(kind)}")
        typer.echo(service.render(kind, spec), nl=False)
        return
    outcome = service.install(kind, spec, start=not no_start)
    for line in outcome.lines:
        typer.echo(line)
    if not outcome.ok:
        raise typer.Exit(1)


@service_app.command("uninstall")
def service_uninstall() -> None:
    """Stop the service and remove its unit."""
    from omega.ops import service

    outcome = service.uninstall(service_kind())
    for line in outcome.lines:
        typer.echo(line)
    if not outcome.ok:
        raise typer.Exit(1)


@service_app.command("status")
def service_status() -> None:
    """Whether the service is installed, enabled and running (exit 1 when not installed)."""
    from omega.ops import service

    outcome = service.status(service_kind())
    for line in outcome.lines:
        typer.echo(line)
    if not outcome.ok:
        raise typer.Exit(1)


def backup(
    destination: Annotated[
        Path | None,
        typer.Argument(help="Folder to write the backup into (default: $OMEGA_HOME/backups)."),
    ] = None,
) -> None:
    """Write a consistent copy of memory.db (SQLite online backup), config.toml and your own
    files (prompts, HEARTBEAT.md, skills, projects, tools) into a timestamped folder. Safe while
    Omega runs."""
    from omega.ops.backup import BackupError, create_backup
    from omega.paths import OmegaPaths, default_home

    paths = OmegaPaths(default_home())
    try:
        info = create_backup(paths, destination or paths.home / "backups")
    except (BackupError, OSError) as exc:
        fail(str(exc), code=1)
    typer.echo(f"Backup written to {info.path} (schema {info.schema}, {len(info.files)} files).")


def restore(
    source: Annotated[Path, typer.Argument(help="A backup folder written by `omega backup`.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Put a backup back: memory.db, config.toml and your own files. What it replaces is moved
    to $OMEGA_HOME/pre-restore-<time>/. Refused while Omega runs on this home."""
    from omega.ops.backup import BackupError, read_backup, restore_backup
    from omega.ops.runlock import OmegaRunningError
    from omega.paths import OmegaPaths, default_home

    paths = OmegaPaths(default_home())
    try:
        info = read_backup(source)
    except BackupError as exc:
        fail(str(exc), code=1)
    typer.echo(
        f"Backup of {info.created_at} (Omega {info.version}, schema {info.schema}, "
        f"{len(info.files)} files) -> {paths.home}"
    )
    if not yes:
        if not sys.stdin.isatty():
            fail("restoring replaces your current memory; pass --yes to confirm", code=1)
        if not typer.confirm("Replace the current memory and config with this backup?"):
            fail("not restored", code=1)
    try:
        aside = restore_backup(paths, source)
    except OmegaRunningError as exc:
        fail(f"{exc}; stop it first (omega service stop, or Ctrl-C), then restore", code=1)
    except (BackupError, OSError) as exc:
        fail(str(exc), code=1)
    typer.echo(f"Restored. What it replaced is in {aside}.")
