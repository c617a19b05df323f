"""`omega backup`, `omega restore` and `omega service`: running Omega for months. `omega init`
(set-up) is cli/setup.py, registered here with them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omega.cli.setup import init
from omega.cli.support import fail, service_kind

if TYPE_CHECKING:
    from omega.paths import OmegaPaths

service_app = typer.Typer(
    help="Run Omega in the background: a systemd user unit (Linux) or launchd agent (macOS).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the operations commands to the main `omega` app."""
    app.command()(backup)
    app.command()(restore)
    app.command("migrate-store")(migrate_store)
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
    on_postgresql = _store_url(paths)
    if on_postgresql:
        typer.echo(
            f"Memory is on PostgreSQL ({on_postgresql}), not in this backup: back it up with "
            "pg_dump (see docs/replicas.md, Backups)."
        )


def _store_url(paths: OmegaPaths) -> str:
    """The PostgreSQL store's URL without its password, or '' when memory is memory.db."""
    from omega.config import ConfigError, load_config
    from omega.memory.db import redacted_location, store_location

    try:
        configured = load_config(paths.config).store.url
    except ConfigError:
        configured = ""
    location = store_location(paths.db, configured)
    return redacted_location(location) if isinstance(location, str) else ""


def migrate_store(
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="'sqlite' (this home's memory.db) or the path of a memory.db to copy.",
        ),
    ] = "sqlite",
    target: Annotated[
        str, typer.Option("--to", help="The PostgreSQL store: postgresql://user:pw@host/db.")
    ] = "",
) -> None:
    """Copy an existing home's memory into an empty PostgreSQL database, verified table by
    table (row counts and checksums). Refused while Omega runs on this home."""
    from omega.logs import register_secret
    from omega.memory.db import location_passwords, redacted_location
    from omega.memory.postgres import StoreUnavailableError, is_url
    from omega.ops.migrate_store import MigrateStoreError
    from omega.ops.migrate_store import migrate_store as copy_store
    from omega.ops.runlock import OmegaRunningError, exclusive
    from omega.paths import OmegaPaths, default_home

    if not is_url(target):
        fail("--to must be a postgresql:// URL (the empty database to copy into)", code=2)
    paths = OmegaPaths(default_home())
    source_db = paths.db if source == "sqlite" else Path(source).expanduser()
    shown = redacted_location(target)
    for password in location_passwords(target):  # an error may quote it (psycopg's do)
        register_secret(password)
    try:
        with exclusive(paths.home):
            copied = copy_store(source_db, target)
    except OmegaRunningError as exc:
        fail(
            f"{exc}; stop it first (systemctl --user stop omega.service, or Ctrl-C), then copy",
            code=1,
        )
    except (MigrateStoreError, StoreUnavailableError, OSError) as exc:
        fail(str(exc), code=1)
    for table in copied:
        typer.echo(f"  {table.table:<24} {table.rows:>8} rows  sha256 {table.checksum[:16]}")
    total = sum(t.rows for t in copied)
    typer.echo(
        f"Copied {total} rows in {len(copied)} tables from {source_db} to {shown}; "
        "every table verified (rows and checksums)."
    )
    typer.echo(f'To use it, set in config.toml:\n  [store]\n  url = "{shown}"')


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
        fail(
            f"{exc}; stop it first (systemctl --user stop omega.service, or Ctrl-C), then restore",
            code=1,
        )
    except (BackupError, OSError) as exc:
        fail(str(exc), code=1)
    typer.echo(f"Restored. What it replaced is in {aside}.")
