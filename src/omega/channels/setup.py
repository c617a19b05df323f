"""What `omega init` asks about a channel plug-in, read from the plug-in alone: the questions
its pydantic `config_model` implies, an answer turned into a value and checked by the model,
the library its package's optional extra would install, and its `setup` test run safely.

Nothing here names a channel: a third-party plug-in is offered exactly like a built-in one.
The prompts themselves are omega.cli.setup_channels'.
"""

from __future__ import annotations

import logging
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution, entry_points
from typing import Any, Literal

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from omega.channels.plugin import GROUP, ChannelPlugin
from omega.logs import redact

log = logging.getLogger(__name__)

# Keys init asks about in questions of their own (the allow-list, the owner, the policy).
OWN_QUESTIONS = frozenset({"enabled", "allowed_users", "dm_policy"})
_SECRET_NAME = re.compile(r"(password|passwd|secret|token|api_key|apikey|credential)", re.I)
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
FieldKind = Literal["text", "secret", "bool", "list", "choice"]


@dataclass(frozen=True)
class Question:
    """One key of a channel's section as init asks it."""

    key: str
    prompt: str  # the field's description, else its name in words
    kind: FieldKind
    choices: tuple[str, ...] = ()
    default: str = ""  # the model's default as typed ("" for none, always "" for a secret)
    required: bool = False  # the model has no default


def _bare(annotation: Any) -> Any:
    """The annotation without Annotated's metadata and Optional's None."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _bare(args[0])
    if origin in (typing.Union, types.UnionType):
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) == 1:
            return _bare(rest[0])
    return annotation


def _kind(key: str, info: FieldInfo) -> tuple[FieldKind, tuple[str, ...]]:
    annotation = _bare(info.annotation)
    origin = typing.get_origin(annotation)
    if annotation is SecretStr or (_SECRET_NAME.search(key) and annotation is str):
        return "secret", ()
    if annotation is bool:
        return "bool", ()
    if origin is Literal:
        return "choice", tuple(str(arg) for arg in typing.get_args(annotation))
    if origin in (list, tuple, set, frozenset):
        return "list", ()
    return "text", ()


def _typed(value: Any) -> str:
    """A default as the owner would type it."""
    if isinstance(value, SecretStr) or value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(str(item) for item in value)
    return str(value)


def _empty(value: Any) -> bool:
    if isinstance(value, SecretStr):
        return not value.get_secret_value()
    return value is None or value == "" or (isinstance(value, list | tuple | dict) and not value)


def _asked(info: FieldInfo) -> bool:
    extra = info.json_schema_extra
    if isinstance(extra, Mapping) and "init" in extra:
        return bool(extra["init"])
    if info.is_required():
        return True
    return bool(info.description) or _empty(info.get_default(call_default_factory=True))


def question_for(model: type[BaseModel], key: str) -> Question:
    """The question for the key `key` of `model`'s sections (asked by init or not)."""
    info = model.model_fields[key]
    kind, choices = _kind(key, info)
    required = info.is_required()
    default = (
        "" if required or kind == "secret" else _typed(info.get_default(call_default_factory=True))
    )
    prompt = info.description or key.replace("_", " ").capitalize()
    return Question(key, prompt, kind, choices, default, required)


def questions(model: type[BaseModel]) -> list[Question]:
    """The questions for a section of `model`, in its field order: every field with no
    default, an empty default or a description (`json_schema_extra={"init": False}` leaves one
    out, `{"init": True}` puts one in), except those with questions of their own."""
    return [
        question_for(model, key)
        for key, info in model.model_fields.items()
        if key not in OWN_QUESTIONS and _asked(info)
    ]


def has_field(model: type[BaseModel], key: str) -> bool:
    """Whether sections of `model` have the key `key`."""
    return key in model.model_fields


def parse(question: Question, typed: str) -> Any:
    """What the owner typed as the value the TOML file gets (the model checks it after):
    a list from comma-separated items, yes/no as a bool, anything else as typed."""
    text = typed.strip()
    if question.kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    if question.kind == "bool":
        lowered = text.lower()
        if lowered in ("y", "yes", "true", "1", "on"):
            return True
        if lowered in ("n", "no", "false", "0", "off"):
            return False
    return typed if question.kind == "secret" else text


def field_error(
    model: type[BaseModel], section: Mapping[str, Any], key: str, *, whole: bool = False
) -> str:
    """Why the model refuses `section`'s `key` ("" when it takes it); other keys' errors,
    such as a required key not answered yet, are not this key's. `whole`: the model's own
    checks of several keys together (e.g. dm_policy against allowed_users) count too."""
    try:
        model.model_validate(dict(section))
    except ValidationError as exc:
        for error in exc.errors():
            if (error["loc"] and error["loc"][0] == key) or (whole and not error["loc"]):
                return str(error["msg"])
    return ""


def section_error(model: type[BaseModel], section: Mapping[str, Any]) -> str:
    """Why the model refuses the whole section ("" when it takes it), key by key."""
    try:
        model.model_validate(dict(section))
    except ValidationError as exc:
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" if e["loc"] else str(e["msg"])
            for e in exc.errors()
        )
    return ""


def canonical_users(model: type[BaseModel], section: Mapping[str, Any]) -> list[str]:
    """`allowed_users` as the model keeps them (e-mail lower-cased, phone numbers as digits),
    which is how messages name their sender; as given when the section does not validate."""
    users = list(section.get("allowed_users") or [])
    try:
        validated = model.model_validate(dict(section))
    except ValidationError:
        return [str(user) for user in users]
    return [str(user) for user in getattr(validated, "allowed_users", users)]


def offered(plugins: Mapping[str, ChannelPlugin]) -> list[ChannelPlugin]:
    """The plug-ins init offers: those their section turns on (`enabled`); the terminal and
    the web page follow other settings."""
    return [
        plugin
        for plugin in plugins.values()
        if plugin.follows_section() and has_field(plugin.config_model, "enabled")
    ]


def _extra_requirements(dist_name: str, extra: str) -> list[str] | None:
    """The requirement names the extra `extra` of `dist_name` adds; None: no such extra."""
    try:
        dist = distribution(dist_name)
    except PackageNotFoundError:
        return None
    if extra not in (dist.metadata.get_all("Provides-Extra") or []):
        return None
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    names = []
    for line in dist.requires or []:
        requirement, _, markers = line.partition(";")
        match = _REQUIREMENT_NAME.match(requirement)
        if match and marker.search(markers):
            names.append(match.group(1))
    return names


def _provider(name: str) -> str | None:
    """The distribution that declares the channel `name`'s entry point."""
    try:
        for point in entry_points(group=GROUP, name=name):
            if point.dist is not None:
                return str(point.dist.name)
    except Exception:  # broken metadata: no hint rather than no init
        log.debug("could not read the %s entry points", GROUP, exc_info=True)
    return None


def install_hint(name: str, default_dist: str = "omega-agent") -> str:
    """The pip command that installs the libraries channel `name` lacks: its package's
    optional extra named like the channel, when one of its requirements is missing; "" when
    nothing is missing (or there is no such extra)."""
    dist = _provider(name) or default_dist
    needed = _extra_requirements(dist, name)
    if not needed:
        return ""
    for requirement in needed:
        try:
            distribution(requirement)
        except PackageNotFoundError:
            return f"pip install '{dist}[{name}]'"
    return ""


def run_setup(plugin: ChannelPlugin, section: BaseModel) -> tuple[bool, str] | None:
    """The plug-in's `setup` test of `section` (None: it has none, or nothing to test); an
    exception it raises is a failed test, and what it says is redacted."""
    if plugin.setup is None:
        return None
    try:
        outcome = plugin.setup(section)
    except Exception as exc:
        log.debug("the setup test of channel %s failed", plugin.name, exc_info=True)
        return False, redact(f"the test failed: {type(exc).__name__}: {exc}")
    if outcome is None:
        return None
    ok, detail = outcome
    return bool(ok), redact(str(detail))


__all__ = [
    "Question",
    "canonical_users",
    "field_error",
    "has_field",
    "install_hint",
    "offered",
    "parse",
    "question_for",
    "questions",
    "run_setup",
    "section_error",
]
