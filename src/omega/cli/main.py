"""The `omega` console script. `omega ask QUESTION [--tools]`, the command run cold most
often, is answered without building the typer app (cli.ask); everything else, `omega ask
--help` and its errors included, goes through the app (cli.commands)."""

from __future__ import annotations

import os
import sys

# Omega uses no pydantic plugins. One that some installed package registers would be imported
# into every `omega` and handed each value pydantic validates (the configuration's secrets
# among them), and looking for one reads every installed package's metadata on each start
# (~8 ms of a cold `omega ask`). Set before anything builds a model; a person who wants a
# plugin sets the variable themselves.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

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
