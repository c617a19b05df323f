"""What every `omega` subcommand shares: failing with one line, the runtime, the store.

Kept apart from cli.commands so that command modules (cli.evolution, cli.ops) import it without
importing the app that registers them; it imports no typer, so that `omega ask` answered without
the app (cli.ask) uses it too."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from omega.app import Runtime
    from omega.memory import Store


ALLOW_ROOT_ENV = "OMEGA_ALLOW_ROOT"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `omega: message` on stderr, redacted (an error may quote a registered secret or a
    URL's credentials), and exit with `code` (SystemExit: the same under typer and without
    it)."""
    from omega.logs import redact

    sys.stderr.write(f"omega: {redact(message)}\n")
    raise SystemExit(code)


def check_not_root() -> None:
    """Refuse to run as root unless OMEGA_ALLOW_ROOT=1 (then warn)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    if os.environ.get(ALLOW_ROOT_ENV, "").strip() == "1":
        sys.stderr.write(
            "omega: warning: running as root because OMEGA_ALLOW_ROOT=1; "
            "Omega runs tools and commands on your behalf, so use an ordinary account.\n"
        )
        return
    fail(
        "refusing to run as root. Omega acts on your behalf and must run as an ordinary user. "
        f"Set {ALLOW_ROOT_ENV}=1 to override (not recommended).",
        code=1,
    )


def prologue() -> None:
    """What every command does first: files for their owner only, uncaught exceptions printed
    redacted (a traceback may quote a secret), and the root guard."""
    from omega.logs import install_excepthooks

    os.umask(0o077)  # everything Omega writes is for its owner only
    install_excepthooks()
    check_not_root()


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


@contextlib.contextmanager
def set_up_once() -> Iterator[None]:
    """Import and build what a command keeps to its end with the garbage collector off, then
    freeze it out of the collector's reach: the collector would walk those ~60,000 objects
    again and again to free nothing (about 55 ms of a cold ask's CPU)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
