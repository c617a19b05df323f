"""`omega init`: the set-up wizard's command line - flags, or questions asked one by one
(secrets typed hidden), then the config written and bubblewrap offered. What the answers mean
and how the config is written is omega.ops.setup."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omega.cli.support import fail, service_kind

if TYPE_CHECKING:
    from tomlkit.toml_document import TOMLDocument

    from omega.channels.registry import Discovery
    from omega.config import Config
    from omega.ops.setup import Answers, Detected


def _ask_interactively(
    answers: Answers,
    doc: TOMLDocument,
    detected: Detected,
    found: Discovery,
    home: Path,
    *,
    test: bool,
) -> set[str]:
    """Fill every unanswered question with rich prompts (secrets typed hidden, never shown);
    the channels whose answers were tested on the way."""
    from rich.console import Console
    from rich.prompt import Confirm, IntPrompt, Prompt

    from omega.cli.setup_channels import ask_channels
    from omega.config.providers import PROVIDER_NAMES
    from omega.ops.setup import NEEDS_KEY, current

    console = Console()
    console.print("[bold]Omega set-up[/bold] (Enter keeps the value in brackets)")
    if detected.claude:
        console.print(f"Found the Claude Code CLI: {detected.claude}")
    for keyed, var in detected.keys.items():
        console.print(f"Found an API key for {keyed} in ${var}")
    if answers.provider is None:
        answers.provider = Prompt.ask(
            "AI provider",
            choices=list(PROVIDER_NAMES),
            default=current(doc, "provider", "default") or detected.suggested_provider(),
        )
    name = answers.provider or "local"
    if name not in ("claude-code", "local"):
        has_key = bool(current(doc, "provider", name, "api_key")) or name in detected.keys
        if answers.api_key is None and (name in NEEDS_KEY or name == "openai"):
            typed = Prompt.ask(
                f"{name} API key" + (" (Enter keeps the one you have)" if has_key else ""),
                password=True,
                default="",
                show_default=False,
            )
            answers.api_key = typed or None
        if answers.base_url is None and name in ("openai", "ollama"):
            answers.base_url = Prompt.ask(
                "Server address (base_url)",
                default=current(doc, "provider", name, "base_url")
                or (
                    "https://api.openai.com/v1" if name == "openai" else "http://localhost:11434/v1"
                ),
            )
    if answers.model is None and name != "local":
        answers.model = (
            Prompt.ask(
                "Model (Enter: the provider's default)",
                default=current(doc, "provider", name, "model") or "",
                show_default=bool(current(doc, "provider", name, "model")),
            )
            or None
        )
    tested = ask_channels(answers, doc, found, home, test=test)
    if (
        answers.voice_base_url is None
        and answers.voice_api_key is None
        and Confirm.ask(
            "Transcribe voice messages (OpenAI-compatible endpoint)?",
            default=bool(current(doc, "voice", "enabled")),
        )
    ):
        answers.voice_base_url = Prompt.ask(
            "Transcription base_url",
            default=current(doc, "voice", "base_url") or "https://api.openai.com/v1",
        )
        answers.voice_api_key = (
            Prompt.ask("Its API key", password=True, default="", show_default=False) or None
        )
        answers.voice_model = Prompt.ask(
            "Its model", default=current(doc, "voice", "model") or "whisper-1"
        )
    if answers.sandbox is None:
        answers.sandbox = Prompt.ask(
            "Sandbox for commands Omega runs (sandbox: workspace only; rx: read anywhere; "
            "rwx: unrestricted)",
            choices=["sandbox", "rx", "rwx"],
            default=current(doc, "sandbox", "mode") or "sandbox",
        )
    if answers.heartbeat is None:
        answers.heartbeat = Confirm.ask(
            "Periodic check-ins (heartbeat)?",
            default=bool(current(doc, "heartbeat", "enabled")),
        )
        if answers.heartbeat and answers.heartbeat_minutes is None:
            answers.heartbeat_minutes = IntPrompt.ask(
                "Every how many minutes",
                default=int(current(doc, "heartbeat", "interval_minutes") or 30),
            )
    if answers.web is None:
        answers.web = Confirm.ask(
            "Serve the local web page?", default=bool(current(doc, "web", "enabled"))
        )
    return tested


def _offer_bubblewrap(*, interactive: bool) -> None:
    """Say how to install bubblewrap when it is missing (the sandbox's second wall on Linux);
    when interactive and root, ask and run the package manager."""
    import shlex
    import subprocess

    from omega.ops.setup import bubblewrap_install

    command = bubblewrap_install()
    if command is None:
        return
    typer.echo(
        "bubblewrap is not installed: commands run under Landlock alone, without the mount "
        f"namespace that hides the rest of the system. Install it with: {shlex.join(command)}"
    )
    if not interactive or os.geteuid() != 0:
        return
    from rich.prompt import Confirm

    if Confirm.ask(f"Run `{shlex.join(command)}` now?", default=True):
        done = subprocess.run(command, check=False)
        typer.echo("bubblewrap installed." if done.returncode == 0 else "The install failed.")


def _check_channels(
    config: Config, found: Discovery, changed: list[str], *, test: bool, tested: set[str]
) -> None:
    """The channel sections this run changed: validated by their plug-ins (init fails on a
    bad one), a missing library named, and each plug-in's setup test run (not twice)."""
    from omega.channels.registry import bind_section
    from omega.channels.setup import install_hint, run_setup

    for name in changed:
        plugin = found.plugins.get(name)
        if plugin is None:
            if name in found.failures:
                hint = install_hint(name)
                typer.echo(
                    f"[channel.{name}] is written, but its plug-in {found.failures[name].reason}"
                    + (f"; install its library with: {hint}" if hint else "")
                )
            continue
        try:
            section = bind_section(config, plugin)
        except ValueError as exc:
            fail(str(exc), code=1)
        if not getattr(section, "enabled", False):
            continue
        hint = install_hint(name)
        if hint:
            typer.echo(f"The {name} channel needs a library that is not installed: {hint}")
        if not test or name in tested:
            continue
        outcome = run_setup(plugin, section)
        if outcome is not None and not outcome[0]:
            fail(f"[channel.{name}] {outcome[1]} (or pass --no-check)", code=1)
        if outcome is not None:
            typer.echo(outcome[1])


def init(
    non_interactive: Annotated[
        bool,
        typer.Option("--non-interactive", help="Ask nothing: use the flags, keep the rest."),
    ] = False,
    home: Annotated[
        Path | None, typer.Option("--home", help="Data folder (default: $OMEGA_HOME or ~/.omega).")
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(help="claude-code, anthropic, openai, ollama, openrouter, gemini or local."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(help="The provider's API key (default: its usual env var, when set)."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="The provider's model.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An OpenAI-compatible server's address.")
    ] = None,
    telegram_token: Annotated[
        str | None, typer.Option(help="Telegram bot token (validated with getMe).")
    ] = None,
    telegram_owner: Annotated[
        str | None, typer.Option(help="Your Telegram user id: allowed, and the owner.")
    ] = None,
    telegram: Annotated[
        bool | None, typer.Option("--telegram/--no-telegram", help="Enable Telegram.")
    ] = None,
    whatsapp: Annotated[
        bool | None, typer.Option("--whatsapp/--no-whatsapp", help="Enable WhatsApp.")
    ] = None,
    voice_base_url: Annotated[
        str | None, typer.Option(help="Voice transcription endpoint (OpenAI-compatible).")
    ] = None,
    voice_api_key: Annotated[str | None, typer.Option(help="Its API key.")] = None,
    voice_model: Annotated[str | None, typer.Option(help="Its model (e.g. whisper-1).")] = None,
    sandbox: Annotated[str | None, typer.Option(help="sandbox, rx or rwx.")] = None,
    heartbeat: Annotated[
        bool | None, typer.Option("--heartbeat/--no-heartbeat", help="Periodic check-ins.")
    ] = None,
    heartbeat_minutes: Annotated[
        int | None, typer.Option(help="Minutes between check-ins (1-1440).")
    ] = None,
    web: Annotated[bool | None, typer.Option("--web/--no-web", help="The local web page.")] = None,
    no_check: Annotated[
        bool,
        typer.Option(
            "--no-check",
            help="Do not test the provider or the channels' answers (a token, a login).",
        ),
    ] = False,
    service: Annotated[
        bool | None,
        typer.Option("--service/--no-service", help="Install the background service after."),
    ] = None,
    channel_set: Annotated[
        list[str] | None,
        typer.Option(
            "--channel-set",
            help="NAME.KEY=VALUE, e.g. email.imap_host=imap.example.org: a key of the "
            "section channel.NAME of any channel plug-in (lists comma-separated); turns it on "
            "unless NAME.enabled is given. Repeatable.",
        ),
    ] = None,
    channel_owner: Annotated[
        list[str] | None,
        typer.Option(
            "--channel-owner",
            help="e.g. email:ana@example.org - allowed on that channel plug-in, and an owner. "
            "Repeatable.",
        ),
    ] = None,
) -> None:
    """Set Omega up: provider, channels, voice, sandbox, heartbeat, web page. Writes
    config.toml (0600); run again to change answers, other keys and comments are kept."""
    from omega.channels.registry import discover
    from omega.cli.setup_channels import from_flags
    from omega.config import ConfigError
    from omega.ops.setup import (
        KEY_ENV,
        Answers,
        SetupError,
        apply,
        current,
        detect,
        read_document,
        try_provider,
        validate,
        write_config,
    )
    from omega.paths import OmegaPaths, default_home

    paths = OmegaPaths((home or default_home()).expanduser().resolve())
    paths.ensure()
    answers = Answers(
        provider=provider,
        api_key=api_key,
        model=model,
        base_url=base_url,
        telegram_token=telegram_token,
        telegram_owner=telegram_owner,
        telegram=telegram,
        whatsapp=whatsapp,
        voice_base_url=voice_base_url,
        voice_api_key=voice_api_key,
        voice_model=voice_model,
        sandbox=sandbox,
        heartbeat=heartbeat,
        heartbeat_minutes=heartbeat_minutes,
        web=web,
    )
    detected = detect()
    found = discover()
    tested: set[str] = set()
    try:
        doc = read_document(paths.config)
        from_flags(answers, doc, found, channel_set or [], channel_owner or [])
        if not non_interactive:
            if not sys.stdin.isatty():
                fail("no terminal to ask on: pass --non-interactive and the answers as flags")
            tested = _ask_interactively(
                answers, doc, detected, found, paths.home, test=not no_check
            )
        name = answers.provider
        if (
            name in KEY_ENV
            and not answers.api_key
            and not current(doc, "provider", name, "api_key")
            and name in detected.keys
        ):
            # the service does not see your shell's env: the key goes into config.toml
            answers.api_key = os.environ.get(KEY_ENV[name], "") or None
        before = dict(current(doc, "channel") or {})
        apply(doc, answers)
        config = validate(doc, paths.home)
    except (SetupError, ConfigError) as exc:
        fail(str(exc), code=1)
    changed = [
        name
        for name, section in (current(doc, "channel") or {}).items()
        if section != before.get(name)
    ]
    _check_channels(config, found, changed, test=not no_check, tested=tested)
    if not no_check and answers.provider is not None:
        ok, detail = try_provider(config, paths)
        if not ok:
            fail(f"the provider did not answer: {detail} (or pass --no-check)", code=1)
        typer.echo(f"Provider answered: {detail}")
    existed = paths.config.exists()
    write_config(paths.config, doc)
    typer.echo(f"{'Updated' if existed else 'Wrote'} {paths.config} (only you can read it).")
    if paths.home != default_home().expanduser().resolve():
        typer.echo(f"Omega finds this folder with: export OMEGA_HOME={paths.home}")
    if config.sandbox.mode != "rwx":
        _offer_bubblewrap(interactive=not non_interactive)
    if service is None and not non_interactive:
        from rich.prompt import Confirm

        service = Confirm.ask("Install Omega as a background service now?", default=False)
    if service:
        from omega.ops import service as service_ops

        kind = service_kind()
        outcome = service_ops.install(kind, service_ops.default_spec(paths.home))
        for line in outcome.lines:
            typer.echo(line)
        if not outcome.ok:
            raise typer.Exit(1)
    else:
        typer.echo(
            "Start it with `omega start`, or run it in the background: omega service install"
        )
