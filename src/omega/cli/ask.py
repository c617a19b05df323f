"""`omega ask QUESTION [--tools]` without the typer app: the command run cold most often.

Building typer's app (every command, their parameters and click's adapters) cost about a third
of a cold ask, so cli.main hands `omega ask` here when its arguments are plainly a question and
known options; anything else (--help, an unknown option, a missing or extra argument) goes to
typer, which answers with its help or its error. `OPTIONS` is the typer command's own set of
options, kept equal to it by tests/unit/test_cli_ask.py. The answer itself (`answer`) is the
same function under both.
"""

from __future__ import annotations

import errno
import os
import re
import sys

# The `ask` command's flags, as typer declares them (cli.commands.ask): option -> parameter.
OPTIONS = {"--tools": "tools"}
# click strips ANSI codes from what it prints when the output is not a terminal (typer.echo).
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def parse_ask(argv: list[str]) -> tuple[str, dict[str, bool]] | None:
    """`omega <argv>` as (question, flags) when it is an `ask` click would read the same way;
    None for anything else, left to typer (its help, its errors, every other command)."""
    if not argv or argv[0] != "ask":
        return None
    question: str | None = None
    flags = dict.fromkeys(OPTIONS.values(), False)
    options_end = False
    for arg in argv[1:]:
        if not options_end and arg == "--":
            options_end = True
        elif not options_end and arg.startswith("-") and arg != "-":
            if arg not in OPTIONS:
                return None  # --help, -h, --tools=x, an unknown option: typer answers
            flags[OPTIONS[arg]] = True
        elif question is None:
            question = arg
        else:
            return None  # an extra argument: typer's error
    return None if question is None else (question, flags)


def echo(text: str) -> None:
    """Print a line as typer.echo does: ANSI codes stripped off a terminal, flushed."""
    if not sys.stdout.isatty():
        text = _ANSI.sub("", text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run(question: str, flags: dict[str, bool]) -> None:
    """`omega ask` as typer would run it: the root callback's prologue, the answer, and the
    exits typer's standalone mode gives (Ctrl-C 130, a closed stdout 1, end of input 1)."""
    from omega.cli.support import prologue

    try:
        prologue()
        answer(question, **flags)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        raise SystemExit(1) from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # Nothing more reaches a closed pipe; no complaint from the exit's last flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None


def answer(question: str, tools: bool) -> None:
    """Ask one question and print the answer: audited (event `ask`, tokens and cost), under the
    daily spending cap; lean without tools, a provider error ends with its friendly line."""
    from omega.cli.support import set_up_once

    with set_up_once():  # the imports and set-up, kept to the end: out of the collector's way
        import asyncio
        import dataclasses

        from omega.app.runtime import pipeline_deps
        from omega.channels.base import TERMINAL_HINT
        from omega.cli.support import fail, load_runtime, open_store
        from omega.memory.context import ContextRequest, build_context
        from omega.providers import ProviderError
        from omega.providers.base import friendly_error
        from omega.turn import PromptSituation, ask_provider, compose_system_prompt
        from omega.types import IncomingMessage

        if not question.strip():
            fail("the question is empty")
        runtime = load_runtime()
        message = IncomingMessage(channel="cli", sender_id="cli", text=question)
        system_prompt = compose_system_prompt(
            runtime.prompts,
            PromptSituation(
                channel="terminal",
                platform_hint=TERMINAL_HINT,
                sandbox_mode=runtime.config.sandbox.mode,
                workspace=str(runtime.paths.workspace),
            ),
        )
        context = dataclasses.replace(
            build_context(None, ContextRequest(message, system_prompt, {}, "English", 0)),
            use_tools=tools,
        )
        store = open_store(runtime)
        deps = pipeline_deps(runtime, store, one_shot=not tools)

    async def one_shot() -> str:
        # Within the whole chain's time (deps.provider_timeout): a hanging first provider still
        # leaves the fallbacks theirs.
        reply = await ask_provider(deps, context, audit_as="ask")
        return reply.text

    try:
        echo(asyncio.run(one_shot()))
    except ProviderError as exc:
        import logging

        logging.getLogger("omega.ask").error("provider %s failed: %s", deps.provider.name, exc)
        fail(friendly_error(exc), code=1)
    finally:
        store.close()
