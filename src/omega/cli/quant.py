"""`omega quant`: the scriptable side of the quant engine (replay a CSV of bars)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

quant_app = typer.Typer(
    help="Quant engine (advisory signals, not financial advice).", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add `omega quant` to the main app (numpy is imported only when a command runs)."""
    app.add_typer(quant_app, name="quant")


@quant_app.command("replay")
def replay(
    bars: Annotated[Path, typer.Argument(help="CSV with columns time,open,high,low,close,volume.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per bar (JSON lines).")
    ] = False,
    portfolio: Annotated[
        float, typer.Option(help="Portfolio value used for sizing.", min=0)
    ] = 100_000.0,
) -> None:
    """Run every bar of BARS through the engine, in order, and print one signal per bar.

    Offline: no network, and the signal of each bar uses only that bar and earlier ones."""
    from omega.quant.engine import QuantParams
    from omega.quant.replay import BarsError, human_line, replay_file

    if not bars.is_file():
        sys.stderr.write(f"omega: {bars}: no such file\n")
        raise typer.Exit(2)
    out = sys.stdout
    try:
        for signal in replay_file(bars, QuantParams(portfolio=portfolio)):
            if as_json:
                out.write(json.dumps(signal.as_dict(), allow_nan=False) + "\n")
            else:
                out.write(human_line(signal) + "\n")
    except BarsError as exc:
        out.flush()
        sys.stderr.write(f"omega: {bars}: {exc}\n")
        raise typer.Exit(2) from None
    except (OSError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"omega: {bars}: {exc}\n")
        raise typer.Exit(2) from None
