"""What every `omega` subcommand shares: failing with one line, the runtime, the store.

Kept apart from cli.py so that command modules (cli_evolution, cli_ops) import it without
importing the app that registers them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from omega.app import Runtime
    from omega.memory import Store


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `omega: message` on stderr and exit with `code`."""
    sys.stderr.write(f"omega: {message}\n")
    raise typer.Exit(code)


def load_runtime(stderr_level: str = "warning") -> Runtime:
    """Bootstrap $OMEGA_HOME and the config; a broken one ends the command with its message."""
    from omega.app import bootstrap
    from omega.config import ConfigError

    try:
        return bootstrap(stderr_level=stderr_level)
    except ConfigError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot prepare the data directory: {exc}")


def open_store(runtime: Runtime) -> Store:
    """Open the store (memory.db, or `[store] url`), migrating it; a database too new, broken
    or unreachable ends the command."""
    import sqlite3

    from omega.memory import SchemaTooNewError, Store
    from omega.memory.db import redacted_location, store_location
    from omega.memory.postgres import StoreUnavailableError

    location = store_location(runtime.paths.db, runtime.config.store.url)
    shown = redacted_location(location)
    try:
        return Store(location)
    except SchemaTooNewError as exc:
        fail(f"{shown}: {exc}")
    except StoreUnavailableError as exc:
        fail(f"{shown}: {exc}")
    except sqlite3.DatabaseError as exc:
        fail(f"{shown}: cannot open the database: {exc}")


def service_kind() -> str:
    """The service manager here (systemd or launchd); none known ends the command."""
    from omega.ops.service import platform_kind

    kind = platform_kind()
    if kind == "unsupported":
        fail(f"no service manager Omega knows on {sys.platform} (systemd or launchd)", code=1)
    return kind


def database_line(runtime: Runtime, db_size: int) -> str:
    """The store's engine and where it is (a URL without its password)."""
    from omega.memory.db import redacted_location, store_location

    location = store_location(runtime.paths.db, runtime.config.store.url)
    if isinstance(location, str):
        return f"PostgreSQL {redacted_location(location)}"
    return f"{location} ({db_size / 1024:.1f} KiB)"
