"""The `omega` command line's typer app: chat, start, ask, status, people and limitations.

`omega ask QUESTION` usually never builds it (cli.main answers it through cli.ask); its help and
its errors come from here. Each command is a thin, flat sequence (bootstrap, open, act, print);
what `omega start` and `omega chat` run is built in the composition root (omega.app).
Operations (service, backup, restore) are in cli/ops.py, `omega init` in cli/setup.py, the
evolution review commands in cli/evolution.py, the self-evolution report and prompt fragments
in cli/report.py, the quant commands in cli/quant.py and `omega security audit` in
cli/security.py."""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer

from omega import __version__
from omega.cli.evolution import register as register_evolution
from omega.cli.limitations import register as register_limitations
from omega.cli.ops import register as register_ops
from omega.cli.people import register as register_people
from omega.cli.quant import register as register_quant
from omega.cli.report import register as register_report
from omega.cli.security import register as register_security
from omega.cli.support import database_line, prologue, set_up_once
from omega.cli.support import fail as _fail
from omega.cli.support import load_runtime as _runtime
from omega.cli.support import open_store as _open_store

app = typer.Typer(
    name="omega",
    help="Omega: a personal AI agent that knows what it cannot do yet and evolves safely.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# `omega chat --jsonl` ended (a signal, [omega] chat_stall_secs) with messages unanswered.
EXIT_UNANSWERED = 3


def _print_version(value: bool) -> None:
    """`--version`: runs before any command is required (an eager option)."""
    if value:
        from omega.memory.migrations import latest_version

        typer.echo(f"omega {__version__} (database schema {latest_version()})")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    prologue()


@app.command()
def chat(
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl",
            help="Read one JSON object per line on stdin; write one per message on stdout.",
        ),
    ] = False,
) -> None:
    """Talk with Omega in the terminal (history is kept in memory.db)."""
    with set_up_once():
        from omega.app import build_chat, run_service
        from omega.channels.terminal import public_id

        runtime = _runtime()
        store = _open_store(runtime)
        service = build_chat(runtime, store, jsonl=jsonl)
    try:
        asyncio.run(run_service(service))
    except KeyboardInterrupt:
        sys.stderr.write("\n")
    finally:
        store.close()
    pending = service.gateway.unfinished()
    if jsonl and pending:  # interrupted: the exit code and stderr say which were not answered
        sys.stderr.write(
            f"omega: {len(pending)} message(s) not answered yet (kept in the inbox, answered at "
            f"the next start): {', '.join(public_id(p) for p in pending)}\n"
        )
        raise typer.Exit(EXIT_UNANSWERED)


@app.command()
def start(
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl", help="Also take messages as JSON lines on stdin (for scripts and tests)."
        ),
    ] = False,
) -> None:
    """Run Omega: every enabled channel plus the scheduler, heartbeat and summarizer.

    SIGINT or SIGTERM stops intake, lets in-flight replies finish, summarizes open
    conversations, stops the channels and exits 0.
    """
    with set_up_once():
        from omega.app import StartError, build_service, serve

        runtime = _runtime(stderr_level="info")
        store = _open_store(runtime)
        try:
            service = build_service(runtime, store, jsonl=jsonl)
        except StartError as exc:
            store.close()
            _fail(str(exc))
    serve(service)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question to ask.")],
    tools: Annotated[
        bool,
        typer.Option(
            "--tools", help="Let the model use Omega's workspace tools (slower to start)."
        ),
    ] = False,
) -> None:
    """Ask one question and print the answer (no memory, no channels, no tools unless
    --tools). Without tools an OpenAI-compatible provider is reached on a lean path. The call
    is audited (event `ask`, with its tokens and cost) and its tool calls recorded; the daily
    spending cap applies."""
    from omega.cli.ask import answer

    answer(question, tools)


@app.command()
def status() -> None:
    """Show the provider and its availability, the data directory, database size and counts."""
    from omega.channels.health import channel_health_lines
    from omega.channels.registry import register_checks
    from omega.logs import redact
    from omega.memory.migrations import latest_version
    from omega.ops.fleet import fleet_rows
    from omega.ops.selfcheck import CheckContext, run_checks
    from omega.providers import build_provider, chain_names, resolve_provider_name
    from omega.quant.feedstatus import status_row as quant_row
    from omega.sandbox import probe
    from omega.tools.mcp_status import status_lines as mcp_status_lines

    runtime = _runtime()
    register_checks(runtime.config, runtime.paths)  # each enabled channel plug-in's checks
    store = _open_store(runtime)
    try:
        counts = store.counts()
        quant = quant_row(store)
        schema = store.schema_version()
        kept_alerts = store.pending_owner_alerts(10)
        fleet = fleet_rows(store, runtime.config.store.lease_seconds)
        checks = run_checks(CheckContext(runtime.config, runtime.paths, store, network=True))
    finally:
        store.close()
    config = runtime.config
    name = resolve_provider_name(config)
    ok, reason = build_provider(name, config, runtime.paths).availability()
    db_size = sum(p.stat().st_size for p in runtime.paths.home.glob("memory.db*") if p.is_file())
    source = "" if config.provider.default != "auto" else " (auto-selected)"
    rows: list[tuple[str, str]] = [
        ("version", __version__),
        ("provider", f"{name}{source}"),
        ("available", f"{'yes' if ok else 'no'} - {reason}"),
        ("data dir", str(runtime.paths.home)),
        (
            "config",
            str(runtime.paths.config) if runtime.paths.config.exists() else "(none: defaults)",
        ),
        ("database", database_line(runtime, db_size)),
        ("schema", f"{schema} (this Omega knows up to {latest_version()})"),
        ("sandbox", probe(config.sandbox.mode).describe()),
    ]
    if "claude-code" in chain_names(name, config):
        from omega.providers.claude.cli import describe_tools

        rows.append(
            (
                "claude tools",
                describe_tools(config.provider.claude_code, probe(config.sandbox.mode)),
            )
        )
    rows += [(name.lower(), state) for name, state in channel_health_lines(config, runtime.paths)]
    rows += mcp_status_lines(runtime.paths.home)
    rows.append(("quant", quant))
    rows += [(key.replace("_", " "), str(value)) for key, value in counts.items()]
    rows += [(f"{row.kind} {row.name}", row.state) for row in fleet]
    rows += [(f"check {check.name}", check.verdict()) for check in checks]
    p = config.provider
    for section, secret in (
        ("anthropic", p.anthropic.api_key),
        ("openai", p.openai.api_key),
        ("gemini", p.gemini.api_key),
        ("openrouter", p.openrouter.api_key),
        ("telegram", config.channel.telegram.bot_token),
    ):
        rows.append((f"{section} key", "set (hidden)" if secret.get_secret_value() else "not set"))
    width = max(len(key) for key, _ in rows) + 2
    # Nothing printed carries a credential: registered secrets, key shapes, URL user-info.
    for key, value in rows:
        typer.echo(redact(f"{key:<{width}}{value}"))
    if kept_alerts:
        typer.echo("\nAlerts kept for the owner (no channel reached you when they were raised):")
        for alert in kept_alerts:
            typer.echo(redact(f"- [{alert.created_at[:16]}] {alert.text}"))


people_app = typer.Typer(
    help="Who is who across channels, and who may talk to Omega.", no_args_is_help=True
)
app.add_typer(people_app, name="people")
register_people(people_app)


def _address(value: str) -> tuple[str, str]:
    channel, _, ident = value.partition(":")
    if not channel.strip() or not ident.strip():
        _fail(f"{value!r}: give an address as channel:id, e.g. telegram:123456789")
    return channel.strip(), ident.strip()


@people_app.command("list")
def people_list() -> None:
    """Every channel id Omega has seen and the person it belongs to."""
    runtime = _runtime()
    store = _open_store(runtime)
    try:
        rows = store.identities()
    finally:
        store.close()
    if not rows:
        typer.echo("Nobody yet.")
    for channel, ident, person in rows:
        typer.echo(f"{channel}:{ident}  ->  {person}")


@people_app.command("link")
def people_link(
    address: Annotated[str, typer.Argument(help="The id to link, as channel:id.")],
    to: Annotated[str, typer.Argument(help="The id it is the same person as, as channel:id.")],
) -> None:
    """Make two channel ids one person: from now on they share facts, memory, tasks and folder.
    Rights stay per channel id (allow-lists and [auth] owners): a link joins memory, never
    authority, and a task is changed or cancelled only with at least its creator's role."""
    runtime = _runtime()
    store = _open_store(runtime)
    try:
        person = store.link_identity(*_address(address), *_address(to))
    finally:
        store.close()
    typer.echo(f"{address} is now the same person as {to} ({person}).")


register_limitations(app)
register_evolution(app)
register_ops(app)
register_quant(app)
register_security(app)
register_report(app)
