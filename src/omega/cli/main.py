"""The `omega` command line: chat, start, ask, status, people and limitations.

Over 400 lines because each command is a thin, flat sequence (bootstrap, open, act, print)
that reads best whole; operations (init, service, backup, restore) are in cli_ops.py and
the evolution review commands in cli_evolution.py."""

from __future__ import annotations

import asyncio
import math
import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from omega import __version__
from omega.cli.evolution import register as register_evolution
from omega.cli.ops import register as register_ops
from omega.cli.quant import register as register_quant
from omega.cli.support import fail as _fail
from omega.cli.support import load_runtime as _runtime
from omega.cli.support import open_store as _open_store

if TYPE_CHECKING:
    from omega.app import Runtime
    from omega.channels.base import Channel
    from omega.memory import Store
    from omega.web.app import WebServer

app = typer.Typer(
    name="omega",
    help="Omega: a personal AI agent that knows what it cannot do yet and evolves safely.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ALLOW_ROOT_ENV = "OMEGA_ALLOW_ROOT"
# `omega chat --jsonl` stopped (a signal) before every accepted message was answered.
EXIT_UNANSWERED = 3


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
    _fail(
        "refusing to run as root. Omega acts on your behalf and must run as an ordinary user. "
        f"Set {ALLOW_ROOT_ENV}=1 to override (not recommended).",
        code=1,
    )


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
    os.umask(0o077)  # everything Omega writes is for its owner only
    check_not_root()


def _warn_sandbox(runtime: Runtime) -> None:
    """Warn at start (stderr and log) when commands the model runs are not confined."""
    import logging

    from omega.sandbox import probe

    status = probe(runtime.config.sandbox.mode)
    if status.mode == "rwx" or status.degraded:
        logging.getLogger("omega.sandbox").warning("sandbox: %s", status.describe())
        sys.stderr.write(f"omega: warning: sandbox {status.describe()}\n")


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
    from omega.app import pipeline_deps
    from omega.channels.terminal import InteractiveChannel, JsonlChannel, public_id
    from omega.gateway.gateway import Gateway
    from omega.ops.runlock import hold_running

    runtime = _runtime()
    store = _open_store(runtime)
    hold_running(runtime.paths.home)  # `omega restore` waits until this process ends
    deps = pipeline_deps(runtime, store)
    _warn_sandbox(runtime)
    ok, reason = deps.provider.availability()
    if not ok:
        sys.stderr.write(
            f"omega: warning: provider {deps.provider.name} is not available: {reason}\n"
        )
    downloads = runtime.paths.downloads
    channel: Channel = (
        JsonlChannel(downloads=downloads)
        if jsonl
        else InteractiveChannel(runtime.config.omega.name, downloads=downloads)
    )
    gateway = Gateway(deps, [channel])
    try:
        # At the end of JSON input every answer is waited for (a script reads them all); a
        # person who quits leaves at once (an unanswered message stays in the inbox).
        asyncio.run(gateway.run(grace=math.inf if jsonl else 0.0))
    except KeyboardInterrupt:
        sys.stderr.write("\n")
    finally:
        store.close()
    pending = gateway.unfinished()
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
    import signal

    from omega.app import pipeline_deps
    from omega.channels.terminal import JsonlChannel
    from omega.gateway.gateway import Gateway
    from omega.ops.notify import sd_notify
    from omega.ops.runlock import hold_running
    from omega.ops.selfcheck import CheckContext, log_checks, run_checks

    runtime = _runtime(stderr_level="info")
    store = _open_store(runtime)
    hold_running(runtime.paths.home)  # `omega restore` waits until this process ends
    deps = pipeline_deps(runtime, store)
    _warn_sandbox(runtime)
    log_checks(
        run_checks(
            CheckContext(
                runtime.config,
                runtime.paths,
                store,
                network=True,
            )
        )
    )
    channels: list[Channel] = [JsonlChannel(downloads=runtime.paths.downloads)] if jsonl else []
    telegram = runtime.config.channel.telegram
    if telegram.enabled:
        if telegram.bot_token.get_secret_value().strip():
            from omega.channels.telegram import TelegramChannel

            channels.append(
                TelegramChannel(telegram, health_file=runtime.paths.channel_health("telegram"))
            )
        else:
            sys.stderr.write(
                "omega: warning: [channel.telegram] is enabled but has no bot_token (or "
                "TELEGRAM_BOT_TOKEN); the telegram channel is not started\n"
            )
    if runtime.config.channel.whatsapp.enabled:
        whatsapp = _whatsapp_channel(runtime)
        if whatsapp is not None:
            channels.append(whatsapp)
    web = _prepare_web(runtime, store) if runtime.config.web.enabled else None
    if web is not None:
        channels.append(web.channel)
    if not channels:
        sys.stderr.write(
            "omega: note: no message channel is running; only the scheduler, "
            "heartbeat and summarizer work\n"
        )

    # The quant feed starts once the owner sends /quant enable (no config needed); numpy and
    # ib_async are imported only then.
    from omega.quant.service import feed_unavailable, run_when_enabled

    if runtime.config.quant.enabled and (why := feed_unavailable()):
        sys.stderr.write(f"omega: warning: [quant] is enabled but {why}; not started\n")

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stopping() -> None:
            sd_notify("STOPPING=1")
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopping)
        gateway = Gateway(deps, channels)
        page = asyncio.create_task(web.serve(deps, gateway), name="web") if web else None
        feed_task = asyncio.create_task(
            run_when_enabled(store, runtime.config.quant, stop), name="quant"
        )
        try:
            await gateway.run(
                stop=stop, summarize_on_exit=True, on_ready=lambda: sd_notify("READY=1")
            )
        finally:
            if web is not None and page is not None:
                web.shutdown()
                await asyncio.gather(page, return_exceptions=True)
            stop.set()
            feed_task.cancel()
            await asyncio.gather(feed_task, return_exceptions=True)

    try:
        asyncio.run(serve())
    finally:
        store.close()


def _prepare_web(runtime: Runtime, store: Store) -> WebServer:
    """Bind the web page's socket and print its login link (also in $OMEGA_HOME/web.url)."""
    from omega.web.app import WebConfigError, is_loopback, prepare

    try:
        web = prepare(runtime, store)
    except WebConfigError as exc:
        store.close()
        _fail(str(exc))
    if not is_loopback(runtime.config.web.host.strip() or "127.0.0.1"):
        sys.stderr.write(
            f"omega: warning: the web page listens on {runtime.config.web.host} "
            "([web] allow_remote = true): anyone who reaches it can try to log in\n"
        )
    # Written to the terminal only, never to the log: the token works once, and a fresh
    # link is always in web.url (readable by the owner alone).
    sys.stderr.write(
        f"omega: web page at {web.base_url} - log in with this one-time link:\n"
        f"  {web.login_link}\n  (a fresh link is always in {runtime.paths.web_url})\n"
    )
    return web


def _whatsapp_channel(runtime: Runtime) -> Channel | None:
    """The WhatsApp channel over neonize, or None (with a warning) when it cannot run here."""
    from omega.channels.whatsapp import WhatsAppChannel

    config = runtime.config.channel.whatsapp
    session = runtime.paths.whatsapp
    try:
        from omega.channels.whatsapp.neonize_client import NeonizeClient

        session.mkdir(parents=True, exist_ok=True)
        os.chmod(session, 0o700)
        client = NeonizeClient(session)
    except (ImportError, OSError) as exc:
        sys.stderr.write(
            "omega: warning: [channel.whatsapp] is enabled but its library cannot load "
            f"({exc}); install it with: pip install 'omega-agent[whatsapp]'. The whatsapp "
            "channel is not started\n"
        )
        return None
    if not config.allowed_users:
        sys.stderr.write(
            "omega: warning: [channel.whatsapp] allowed_users is empty: nobody is answered on "
            'WhatsApp (add your number, e.g. "+351900000000")\n'
        )
    return WhatsAppChannel(
        config, client, session, health_file=runtime.paths.channel_health("whatsapp")
    )


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
    --tools). Without tools an OpenAI-compatible provider is reached on a lean path."""
    import dataclasses

    from omega.memory.context import ContextRequest, build_context
    from omega.providers import (
        ProviderError,
        build_chain,
        chain_timeout,
        resolve_provider_name,
    )
    from omega.providers.base import friendly_error
    from omega.turn import PromptSituation, compose_system_prompt
    from omega.types import IncomingMessage

    if not question.strip():
        _fail("the question is empty")
    runtime = _runtime()
    name = resolve_provider_name(runtime.config)
    provider = build_chain(name, runtime.config, runtime.paths, one_shot=not tools)
    message = IncomingMessage(channel="cli", sender_id="cli", text=question)
    system_prompt = compose_system_prompt(
        runtime.prompts,
        PromptSituation(
            channel="terminal",
            sandbox_mode=runtime.config.sandbox.mode,
            workspace=str(runtime.paths.workspace),
        ),
    )
    context = dataclasses.replace(
        build_context(None, ContextRequest(message, system_prompt, {}, "English", 0)),
        use_tools=tools,
    )

    async def one_shot() -> str:
        try:
            # The whole chain's time: a hanging first provider still leaves the fallbacks theirs.
            reply = await asyncio.wait_for(
                provider.complete(context), chain_timeout(name, runtime.config)
            )
        except TimeoutError:
            raise ProviderError("timed out", kind="timeout") from None
        return reply.text

    try:
        typer.echo(asyncio.run(one_shot()))
    except ProviderError as exc:
        import logging

        logging.getLogger("omega.ask").error("provider %s failed: %s", name, exc)
        _fail(friendly_error(exc), code=1)


@app.command()
def status() -> None:
    """Show the provider and its availability, the data directory, database size and counts."""
    from omega.channels.health import channel_health_lines
    from omega.logs import redact
    from omega.memory.migrations import latest_version
    from omega.ops.selfcheck import CheckContext, run_checks
    from omega.providers import build_provider, chain_names, resolve_provider_name
    from omega.quant.feedstatus import status_row as quant_row
    from omega.sandbox import probe
    from omega.tools.mcp_health import status_lines as mcp_status_lines

    runtime = _runtime()
    store = _open_store(runtime)
    try:
        counts = store.counts()
        quant = quant_row(store)
        schema = store.schema_version()
        kept_alerts = store.pending_owner_alerts(10)
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
        ("database", f"{runtime.paths.db} ({db_size / 1024:.1f} KiB)"),
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


people_app = typer.Typer(help="Who is who across channels.", no_args_is_help=True)
app.add_typer(people_app, name="people")


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


limitations_app = typer.Typer(help="What Omega knows it cannot do yet.", no_args_is_help=True)
app.add_typer(limitations_app, name="limitations")


@limitations_app.command("list")
def limitations_list(
    all_: Annotated[bool, typer.Option("--all", help="Include resolved ones.")] = False,
) -> None:
    """List open limitations (with --all, resolved ones too)."""
    from omega.evolution.limitations import LimitationStore

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
    from omega.evolution.limitations import resolve_by_owner

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


register_evolution(app)
register_ops(app)
register_quant(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
