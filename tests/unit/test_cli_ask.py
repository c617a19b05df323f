"""`omega ask` answered without the typer app (omega.cli.ask): it reads exactly what typer's
`ask` command reads, and leaves everything else (help, errors) to typer."""

from __future__ import annotations

import pytest
import typer.main
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from omega.cli.ask import OPTIONS, parse_ask
from omega.cli.commands import app

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def _typer_ask() -> tuple[TyperGroup, TyperCommand]:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    command = group.get_command(group.make_context("omega", ["ask", "x"]), "ask")
    assert isinstance(command, TyperCommand)
    return group, command


def test_the_fast_path_knows_the_typer_commands_parameters() -> None:
    """A parameter added to (or renamed in) `omega ask` fails here until cli.ask knows it."""
    group, command = _typer_ask()
    params = command.get_params(group.make_context("omega", ["ask", "x"]))
    arguments = [p for p in params if isinstance(p, TyperArgument)]
    options = [p for p in params if isinstance(p, TyperOption) and p.name != "help"]
    assert [(a.name, a.required, a.nargs) for a in arguments] == [("question", True, 1)]
    # Every option a flag with one name and no --no- form: what parse_ask reads.
    assert all(o.is_flag and not o.secondary_opts and len(o.opts) == 1 for o in options)
    assert {o.opts[0]: o.name for o in options} == OPTIONS
    assert len(params) == len(arguments) + len(options) + 1  # and --help, left to typer


ARGVS = [
    ["ask", "hi"],
    ["ask", "--tools", "hi"],
    ["ask", "hi", "--tools"],
    ["ask", "--tools", "--tools", "hi"],
    ["ask", "--", "--tools"],
    ["ask", "--tools", "--", "-x"],
    ["ask", "-"],
    ["ask", ""],
    ["ask", "  "],
    ["ask", "--", "--"],
    # left to typer: its help and its errors
    ["ask"],
    ["ask", "--tools"],
    ["ask", "a", "b"],
    ["ask", "--help"],
    ["ask", "hi", "--help"],
    ["ask", "-h", "hi"],
    ["ask", "--tools=1", "hi"],
    ["ask", "--tool", "hi"],
    ["ask", "-x"],
    ["ask", "--", "a", "b"],
    ["--version"],
    ["--help"],
    ["status"],
    [],
]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_the_fast_path_reads_an_ask_as_typer_does_or_leaves_it_to_typer(argv: list[str]) -> None:
    parsed = parse_ask(argv)
    if parsed is None:
        return  # typer answers: the same help and errors as ever, by construction
    group, command = _typer_ask()
    assert argv[0] == "ask" and group.get_command(group.make_context("omega", argv), "ask")
    question, flags = parsed
    ctx = command.make_context("ask", argv[1:])
    assert ctx.params == {"question": question, **flags}


def test_the_fast_path_takes_the_ordinary_asks() -> None:
    # Without this the test above would pass with a fast path that never answers.
    accepted = [argv for argv in ARGVS if parse_ask(argv) is not None]
    assert len(accepted) == 10
    assert parse_ask(["ask", "--tools", "hi"]) == ("hi", {"tools": True})
    assert parse_ask(["ask", "--", "--tools"]) == ("--tools", {"tools": False})
