"""The `omega` console script. `omega ask QUESTION [--tools]`, the command run cold most
often, is answered without building the typer app (cli.ask); everything else, `omega ask
--help` and its errors included, goes through the app (cli.commands)."""

from __future__ import annotations

import sys

from omega.cli.ask import parse_ask
from omega.cli.ask import run as run_ask


def main() -> None:
    """Console-script entry point."""
    parsed = parse_ask(sys.argv[1:])
    if parsed is not None:
        run_ask(*parsed)
        return
    from omega.cli.commands import app

    app()


if __name__ == "__main__":
    main()
