"""`omega limitations`: list what Omega knows it cannot do yet, resolve one, merge two."""

from __future__ import annotations

from typing import Annotated

import typer

from omega.cli.support import fail as _fail
from omega.cli.support import load_runtime as _runtime
from omega.cli.support import open_store as _open_store
from omega.text import MAX_ROW_ID

limitations_app = typer.Typer(help="What Omega knows it cannot do yet.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add `omega limitations` to the command line."""
    app.add_typer(limitations_app, name="limitations")


@limitations_app.command("list")
def limitations_list(
    all_: Annotated[bool, typer.Option("--all", help="Include resolved ones.")] = False,
) -> None:
    """List open limitations (with --all, resolved ones too)."""
    from omega.evolution.gaps import LimitationStore

    runtime = _runtime()
    store = _open_store(runtime)
    try:
        items = LimitationStore(store).list(None if all_ else "open")
    finally:
        store.close()
    if not items:
        typer.echo("No limitations." if all_ else "No open limitations.")
        return
    for item in items:
        typer.echo(
            f"[{item.id}] {item.status:<8} {item.title}"
            + (f" — {item.description}" if item.description else "")
        )
        if item.proposed_plan:
            typer.echo(f"      plan: {item.proposed_plan}")
        if item.status == "resolved":
            typer.echo(
                f"      resolved {item.resolved_at} by {item.resolved_by}: {item.resolution or '-'}"
            )


@limitations_app.command("resolve")
def limitations_resolve(
    key: Annotated[str, typer.Argument(help="The limitation's id (or exact title).")],
    note: Annotated[str, typer.Option("--note", help="How it was resolved.")] = "",
) -> None:
    """Mark a limitation resolved: it leaves HEARTBEAT.md and stays in the record."""
    from omega.evolution.gaps import resolve_by_owner

    runtime = _runtime()
    store = _open_store(runtime)
    try:
        resolved = resolve_by_owner(
            store,
            runtime.paths.heartbeat,
            key,
            note,
            by="owner (cli)",
            channel="cli",
            sender_id="owner",
            request=f"resolve {key}",
        )
        if resolved is None:
            _fail(f"no open limitation {key!r} (see `omega limitations list`)", code=1)
    finally:
        store.close()
    typer.echo(f"Resolved [{resolved.id}] {resolved.title}.")


@limitations_app.command("merge")
def limitations_merge(
    merged: Annotated[
        int, typer.Argument(min=1, max=MAX_ROW_ID, help="The limitation that is a repeat (its id).")
    ],
    into: Annotated[
        int,
        typer.Argument(min=1, max=MAX_ROW_ID, help="The one it repeats (its id): it stays open."),
    ],
) -> None:
    """Merge two open limitations that are one gap: the first's sightings count for the
    second, and the first is resolved as merged."""
    from omega.evolution.gaps import merge_limitations

    runtime = _runtime()
    store = _open_store(runtime)
    try:
        kept = merge_limitations(
            store,
            runtime.paths.heartbeat,
            merged,
            into,
            channel="cli",
            sender_id="owner",
            request=f"merge {merged} {into}",
        )
    except ValueError as exc:
        _fail(f"{exc} (see `omega limitations list`)", code=1)
    finally:
        store.close()
    typer.echo(f"Merged [{merged}] into [{kept.id}] {kept.title}.")
