"""The documentation's generated references, made from the code so that they cannot drift.

    python scripts/gen_docs.py config      # the configuration reference (Markdown)
    python scripts/gen_docs.py commands    # the command reference (Markdown)
    python scripts/gen_docs.py missing     # config keys with no description (exit 1 if any)

`mkdocs build` makes both pages through scripts/docs_hooks.py (they are never written into
docs/). A key's description is its `Field(description=...)` and the comment written with it in
the model: the comment lines right above the key and the comment at the end of its line (never
one of another key). tests/unit/test_docs.py fails when a key has none.
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import sys
import textwrap
import tokenize
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import typer  # noqa: E402
from pydantic import BaseModel, SecretStr  # noqa: E402
from pydantic.fields import FieldInfo  # noqa: E402

# The pages this script makes, as mkdocs sees them (docs/ relative).
CONFIG_PAGE = "reference/configuration.md"
COMMANDS_PAGE = "reference/commands.md"


@dataclass(frozen=True)
class Key:
    """One key of config.toml: where it is, what it takes, its default and what it does."""

    table: str
    name: str
    type: str
    default: str
    description: str


# -- comments written with a model's fields ---------------------------------------------------


def _comments(source: str) -> dict[int, str]:
    """Line number (1-based, within `source`) -> the text of the comment on that line."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            text = token.string.lstrip("#").strip()
            if not text.startswith(("noqa", "type:")):
                found[token.start[0]] = text
    return found


def field_comments(model: type[BaseModel]) -> dict[str, str]:
    """Each field defined in `model`'s own body -> the comment written with it: the block of
    comment lines right above it (no blank line between) and the comment at the end of its
    lines. A comment is never shared: a field with none has none."""
    try:
        source = textwrap.dedent(inspect.getsource(model))
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    comments = _comments(source)
    tree = ast.parse(source)
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for statement in body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        start, end = statement.lineno, statement.end_lineno or statement.lineno
        above: list[str] = []
        line = start - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            above.insert(0, comments.get(line, ""))
            line -= 1
        inline = [comments[n] for n in range(start, end + 1) if n in comments]
        found[statement.target.id] = " ".join(part for part in [*above, *inline] if part)
    return found


def describe(model: type[BaseModel], name: str) -> str:
    """What the field `name` of `model` does: its description and the comment written with it,
    in the nearest class of the model's hierarchy that defines it with either (a subclass that
    only changes a default keeps its base's words)."""
    field = model.model_fields[name]
    parts = [field.description.strip()] if field.description else []
    for owner in model.__mro__:
        if isinstance(owner, type) and name in inspect.get_annotations(owner):
            comment = field_comments(owner).get(name, "")
            if comment and comment not in parts:
                parts.append(comment)
            if comment or parts:
                break
    return " ".join(_sentence(part) for part in parts)


def _sentence(text: str) -> str:
    """`text` with a capital first letter and a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


# -- types and defaults -------------------------------------------------------------------------


def _type_name(annotation: Any) -> str:
    """A TOML reader's name for a field's type."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in args)
    if origin in (list, tuple, set):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"table of {_type_name(args[1])}" if len(args) == 2 else "table"
    if annotation is SecretStr:
        return "string (secret)"
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in simple:
        return simple[annotation]
    if annotation is type(None):
        return "unset"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(field: FieldInfo) -> str:
    """The numeric bounds of a field (`>= 1`, `<= 3600`), as written in its model."""
    marks = []
    for item in field.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                marks.append(f"{sign} {value}")
    return ", ".join(marks)


def _default(field: FieldInfo) -> str:
    """The default, as it would be written in config.toml."""
    value = field.get_default(call_default_factory=True)
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, BaseModel):
        return ""
    if value is None:
        return "(unset)"
    return json.dumps(value, ensure_ascii=False)


# -- the configuration reference ---------------------------------------------------------------


def _submodel(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _plugin_models() -> dict[str, type[BaseModel]]:
    """The `[channel.<name>]` models of Omega's shipped channel plug-ins (e-mail, Slack, ...)."""
    from omega.channels.registry import SHIPPED, _load

    models: dict[str, type[BaseModel]] = {}
    for name, value in SHIPPED.items():
        models[name] = _load(value).config_model  # type: ignore[attr-defined]
    return models


def tables() -> Iterator[tuple[str, type[BaseModel]]]:
    """Every table of config.toml and its model, in the order `Config` declares them, the
    shipped channel plug-ins' after the built-in channels'."""
    from omega.config import Config

    def walk(prefix: str, model: type[BaseModel]) -> Iterator[tuple[str, type[BaseModel]]]:
        yield prefix, model
        for name, field in model.model_fields.items():
            sub = _submodel(field)
            if sub is not None:
                yield from walk(f"{prefix}.{field.alias or name}".strip("."), sub)
        if prefix == "channel":
            for name, sub in _plugin_models().items():
                yield from walk(f"channel.{name}", sub)

    for table, model in walk("", Config):
        if table:
            yield table, model


def config_keys() -> list[Key]:
    """Every key of config.toml with its type, default and description."""
    found = []
    for table, model in tables():
        for name, field in model.model_fields.items():
            if _submodel(field) is not None:
                continue
            kind = _type_name(field.annotation)
            bounds = _bounds(field)
            found.append(
                Key(
                    table=table,
                    name=field.alias or name,
                    type=f"{kind} ({bounds})" if bounds else kind,
                    default=_default(field),
                    description=describe(model, name),
                )
            )
    return found


def undocumented() -> list[str]:
    """`table.key` of every key with no description in its model."""
    return [f"{key.table}.{key.name}" for key in config_keys() if not key.description]


def _prose(text: str) -> str:
    """`text` safe as Markdown prose: `<` and `>` outside code spans are not HTML tags."""
    parts = text.split("`")
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    return _prose(text).replace("|", "\\|").replace("\n", " ")


def _env_var(table: str, name: str) -> str:
    parts = [*table.split("."), name]
    return "OMEGA_" + "__".join(part.upper().replace("-", "_") for part in parts)


def config_reference() -> str:
    """The configuration reference page: one table per section of config.toml."""
    out = [
        "# Configuration reference",
        "",
        "Generated from the configuration models (`src/omega/config/` and the channel plug-ins'",
        "`config.py`) each time the site is built, so it says what this version of Omega reads.",
        "Every key is optional. A key can also be set by the environment variable shown under",
        "it, which wins over `config.toml` (lists and tables as JSON). See",
        "[Configuration](../configuration.md) for the files in `$OMEGA_HOME` and how to choose a",
        "provider, and `config.example.toml` for a commented file.",
        "",
    ]
    by_table: dict[str, list[Key]] = {}
    for key in config_keys():
        by_table.setdefault(key.table, []).append(key)
    for table, model in tables():
        rows = by_table.get(table, [])
        if not rows:
            continue
        out += [f"## `[{table}]`", ""]
        doc = inspect.getdoc(model) or ""
        if doc and model.__doc__ and "__doc__" in model.__dict__:
            out += [" ".join(doc.split()), ""]
        out += ["| key | type | default | what it does |", "|---|---|---|---|"]
        for key in rows:
            name = f"`{key.name}`<br><small>`{_env_var(table, key.name)}`</small>"
            default = f"`{_cell(key.default)}`" if key.default else ""
            out.append(f"| {name} | {_cell(key.type)} | {default} | {_cell(key.description)} |")
        out.append("")
    return "\n".join(out)


# -- the command reference ---------------------------------------------------------------------


def _param_row(param: Any) -> str:
    """One row of a command's table: an option's flags and help, or an argument's name.

    Typer's objects (its own copy of click in recent versions) are read by their attributes."""
    if param.param_type_name == "option":
        names = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        default = ""
        if param.default not in (None, False, (), []) and not param.is_flag:
            default = f" (default: `{param.default}`)"
        return f"| {names} | {_cell(param.help or '')}{_cell(default)} |"
    metavar = (param.name or "").upper()
    required = "" if param.required else " (optional)"
    return f"| `{metavar}`{required} | {_cell(getattr(param, 'help', '') or '')} |"


def _subcommands(command: Any) -> dict[str, Any]:
    commands = getattr(command, "commands", None)
    return dict(sorted(commands.items())) if isinstance(commands, dict) else {}


def _walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, command
    for name, sub in _subcommands(command).items():
        yield from _walk(sub, [*path, name])


def command_reference() -> str:
    """The command reference page: every `omega` command, its usage, arguments and options."""
    from omega.cli.commands import app

    root = typer.main.get_command(app)
    out = [
        "# Command reference",
        "",
        "Generated from the `omega` command line (`src/omega/cli/`) each time the site is built:",
        "every command with its arguments and options, as `omega <command> --help` prints them.",
        "[Commands](../commands.md) says what each one is for; the chat commands (`/help`, ...)",
        "are there too.",
        "",
    ]
    for path, command in _walk(root, ["omega"]):
        if command.hidden:
            continue
        name = " ".join(path)
        usage = _usage(command)
        out += [f"## `{name}`", ""]
        if command.help:
            out += [_prose(inspect.cleandoc(command.help).split("\f")[0].strip()), ""]
        out += ["```", f"{name} {usage}".rstrip(), "```", ""]
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            out += ["| argument or option | what it does |", "|---|---|"]
            out += [_param_row(param) for param in params]
            out.append("")
        subs = [sub for sub, c in _subcommands(command).items() if not c.hidden]
        if subs:
            links = [f"[`{name} {sub}`](#{_anchor(name, sub)})" for sub in subs]
            out += ["Commands: " + ", ".join(links), ""]
    return "\n".join(out)


def _usage(command: Any) -> str:
    """`[OPTIONS] NAME [OPTIONAL]...`, or `[OPTIONS] COMMAND [ARGS]...` for a group."""
    pieces = ["[OPTIONS]"] if any(p.param_type_name == "option" for p in command.params) else []
    for param in command.params:
        if param.param_type_name == "argument":
            name = (param.name or "").upper() + ("..." if param.nargs == -1 else "")
            pieces.append(name if param.required else f"[{name}]")
    if _subcommands(command):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _anchor(*words: str) -> str:
    """The anchor mkdocs' toc gives the heading `` `omega people allow` ``."""
    return "-".join(" ".join(words).split())


def main(argv: list[str]) -> int:
    """Print the page named by argv[1] (`config`, `commands`), or the undocumented keys."""
    what = argv[1] if len(argv) > 1 else ""
    if what == "config":
        print(config_reference())
    elif what == "commands":
        print(command_reference())
    elif what == "missing":
        missing = undocumented()
        print("\n".join(missing) or "every key has a description")
        return 1 if missing else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
