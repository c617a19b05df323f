"""`omega init`'s channel questions: every channel plug-in discovery finds is offered, in one
list, built-in or third-party alike. A plug-in's questions come from its pydantic section
(omega.channels.setup); Telegram and WhatsApp keep hand-written details (the bot token and
owner id; pairing at the first start) but are offered, tested and re-asked like the rest.
The non-interactive flags (--channel-set, --channel-owner) land in the same answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from pydantic import BaseModel, TypeAdapter, ValidationError
from rich.console import Console
from rich.markup import escape
from rich.prompt import Confirm, Prompt

from omega.channels.plugin import ChannelPlugin
from omega.channels.registry import Discovery, bind_section
from omega.channels.setup import (
    Question,
    canonical_users,
    field_error,
    has_field,
    install_hint,
    offered,
    parse,
    question_for,
    questions,
    run_setup,
)
from omega.config import ConfigError
from omega.logs import register_secret
from omega.ops.setup import Answers, SetupError, apply, current, validate

if TYPE_CHECKING:
    from tomlkit.toml_document import TOMLDocument

POLICY = (
    "What a stranger who writes gets (allowlist: refused; pairing: a code you approve; "
    "open: anyone is answered)"
)


@dataclass(frozen=True)
class HandWritten:
    """A built-in channel's own questions, asked once the owner said yes to it."""

    answered: Callable[[Answers], bool]  # flags already answered it: not offered
    turn: Callable[[Answers, bool], None]  # on or off
    details: Callable[[Answers, TOMLDocument, Console], None]


def _telegram_details(answers: Answers, doc: TOMLDocument, console: Console) -> None:
    token = Prompt.ask(
        "Bot token from @BotFather (Enter keeps the one you have)",
        password=True,
        default="",
        show_default=False,
    )
    answers.telegram_token = token or None
    owner = Prompt.ask("Your Telegram user id (from @userinfobot)", default="")
    answers.telegram_owner = owner or None


def _whatsapp_details(answers: Answers, doc: TOMLDocument, console: Console) -> None:
    console.print("WhatsApp is paired at the first `omega start` (scan the QR code it shows).")


def _set_telegram(answers: Answers, on: bool) -> None:
    answers.telegram = on


def _set_whatsapp(answers: Answers, on: bool) -> None:
    answers.whatsapp = on


HAND_WRITTEN: dict[str, HandWritten] = {
    "telegram": HandWritten(
        lambda a: a.telegram is not None or a.telegram_token is not None,
        _set_telegram,
        _telegram_details,
    ),
    "whatsapp": HandWritten(lambda a: a.whatsapp is not None, _set_whatsapp, _whatsapp_details),
}


def to_toml(model: type[BaseModel], question: Question, value: Any) -> Any:
    """The value as config.toml should hold it (a port as a number, a secret as typed)."""
    if question.kind == "secret" or value in ("", None):
        return value
    annotation = model.model_fields[question.key].annotation
    if annotation is None:
        return value
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        dumped = adapter.dump_python(adapter.validate_python(value), mode="json")
    except ValidationError:
        return value
    return dumped


def _say(console: Console, text: str, *, error: bool = False) -> None:
    """Print `text` as written (a value's brackets are not markup)."""
    console.print(text, markup=False, style="red" if error else None, soft_wrap=True)


def _ask_one(question: Question, have: Any, console: Console) -> str:
    """What the owner typed for `question` ("" keeps what there is)."""
    if question.kind == "secret":
        note = " (Enter keeps the one you have)" if have else ""
        typed = Prompt.ask(
            escape(question.prompt + note), password=True, default="", show_default=False
        )
        register_secret(typed)
        return typed
    if question.kind == "bool":
        default = bool(have) if have is not None else question.default == "yes"
        return "yes" if Confirm.ask(escape(question.prompt), default=default) else "no"
    shown = (
        (", ".join(str(x) for x in have) if isinstance(have, list) else str(have))
        if (have is not None)
        else question.default
    )
    prompt = question.prompt + (" (comma-separated)" if question.kind == "list" else "")
    if question.kind == "choice":
        return (
            Prompt.ask(escape(prompt), choices=list(question.choices), default=shown or None) or ""
        )
    return Prompt.ask(escape(prompt), default=shown, show_default=bool(shown))


def _ask_fields(plugin: ChannelPlugin, values: dict[str, Any], have: dict[str, Any]) -> None:
    console = Console()
    model = plugin.config_model
    for question in questions(model):
        while True:
            typed = _ask_one(question, have.get(question.key), console)
            if typed == "" and question.kind == "secret" and have.get(question.key):
                break  # kept
            if question.key not in have and typed == question.default and not question.required:
                break  # the default: nothing to write
            value = parse(question, typed)
            error = field_error(model, {**have, **values, question.key: value}, question.key)
            if not error:
                values[question.key] = to_toml(model, question, value)
                break
            _say(console, f"{question.key}: {error} - try again", error=True)


def _ask_people(
    plugin: ChannelPlugin, values: dict[str, Any], have: dict[str, Any], answers: Answers
) -> None:
    """The owner, the others allowed, and what strangers get."""
    console = Console()
    model, name = plugin.config_model, plugin.name
    if has_field(model, "allowed_users"):
        allowed = [str(user) for user in have.get("allowed_users") or []]
        owner = Prompt.ask(
            f"Your own {name} address or id (you become Omega's owner there; Enter: none)",
            default="",
            show_default=False,
        ).strip()
        others = Prompt.ask(
            f"Who else may talk to Omega on {name} (comma-separated; Enter: as it is)",
            default=", ".join(allowed),
            show_default=bool(allowed),
        )
        users = [owner] if owner else []
        users += [user.strip() for user in others.split(",") if user.strip()]
        users = canonical_users(model, {**have, **values, "allowed_users": users})
        values["allowed_users"] = list(dict.fromkeys(users))
        if owner:
            answers.owners.append(f"{name}:{users[0]}")
    if has_field(model, "dm_policy"):
        while True:
            policy = Prompt.ask(
                POLICY,
                choices=["allowlist", "pairing", "open"],
                default=str(have.get("dm_policy") or "allowlist"),
            )
            users = list(values.get("allowed_users", have.get("allowed_users") or []))
            if policy == "open" and "*" not in users:
                users.append("*")  # "open" is said with "*", so it is never a typo
            if policy == "pairing" and "*" in users:
                users.remove("*")  # nobody would ever need to pair
            section = {**have, **values, "dm_policy": policy, "allowed_users": users}
            error = field_error(model, section, "dm_policy", whole=True)
            if not error:
                values.update(dm_policy=policy, allowed_users=users)
                break
            _say(console, f"{error} - try again", error=True)


def _loaded_section(
    doc: TOMLDocument, answers: Answers, home: Path, plugin: ChannelPlugin
) -> BaseModel | None:
    """The plug-in's section as Omega would load it with these answers (env included)."""
    trial = tomlkit.parse(tomlkit.dumps(doc))
    try:
        apply(trial, answers)
        return bind_section(validate(trial, home), plugin)
    except (SetupError, ConfigError, ValueError) as exc:
        _say(Console(), str(exc), error=True)
        return None


def ask_channels(
    answers: Answers, doc: TOMLDocument, found: Discovery, home: Path, *, test: bool
) -> set[str]:
    """Offer every channel plug-in found and ask what each needs; with `test`, run each
    one's setup test after its answers and ask again while it fails (unless the owner keeps
    them). The channels tested."""
    console = Console()
    tested: set[str] = set()
    for plugin in offered(found.plugins):
        name = plugin.name
        hand = HAND_WRITTEN.get(name)
        if hand.answered(answers) if hand else name in answers.channels:
            continue
        on = bool(current(doc, "channel", name, "enabled"))
        what = f" ({plugin.description})" if plugin.description else ""
        if not Confirm.ask(escape(f"Talk with Omega on {name}{what}?"), default=on):
            if hand:
                hand.turn(answers, False)
            elif on:
                answers.channels[name] = {"enabled": False}
            continue
        hint = install_hint(name)
        if hint:
            _say(console, f"The {name} channel needs a library that is not installed: {hint}")
            if not Confirm.ask(f"Set {name} up anyway (it starts once installed)?", default=True):
                continue
        while True:  # a second round starts from the first one's answers
            if hand:
                hand.turn(answers, True)
                hand.details(answers, doc, console)
            else:
                values: dict[str, Any] = {**answers.channels.get(name, {}), "enabled": True}
                have = {**(current(doc, "channel", name) or {}), **values}
                answers.owners = [x for x in answers.owners if not x.startswith(f"{name}:")]
                _ask_fields(plugin, values, have)
                _ask_people(plugin, values, have, answers)
                answers.channels[name] = values
            if not test or plugin.setup is None:
                break
            section = _loaded_section(doc, answers, home, plugin)
            outcome = run_setup(plugin, section) if section is not None else None
            tested.add(name)
            if outcome is None or outcome[0]:
                _say(console, outcome[1] if outcome else f"{name}: nothing to test yet")
                break
            _say(console, f"{name}: {outcome[1]}", error=True)
            if not Confirm.ask(f"Answer the {name} questions again?", default=True):
                break
    for failure in found.failures.values():
        hint = install_hint(failure.name)
        _say(
            console,
            f"The channel plug-in {failure.name} {failure.reason}"
            + (f"; install its library with: {hint}" if hint else ""),
        )
        turn_on = f"Turn {failure.name} on anyway (set its keys by hand once it is installed)?"
        if (
            hint
            and failure.name not in answers.channels
            and Confirm.ask(escape(turn_on), default=False)
        ):
            answers.channels[failure.name] = {"enabled": True}
    return tested


def from_flags(
    answers: Answers,
    doc: TOMLDocument,
    found: Discovery,
    assignments: list[str],
    owners: list[str],
) -> None:
    """--channel-set NAME.KEY=VALUE and --channel-owner NAME:ID into the answers; a section
    set this way is turned on unless it says `enabled`. SetupError when one cannot be used."""
    for assignment in assignments:
        target, sep, typed = assignment.partition("=")
        name, dot, key = target.strip().partition(".")
        if not sep or not dot or not key:
            raise SetupError(f"--channel-set {assignment!r}: write it as NAME.KEY=VALUE")
        values = answers.channels.setdefault(name, {})
        plugin = found.plugins.get(name)
        if plugin is None and name not in found.failures:
            raise SetupError(f"no installed channel plug-in is named {name!r}")
        values.setdefault("enabled", True)
        if plugin is None:  # it cannot load: written as typed, for when it can
            values[key] = typed
            continue
        if key == "enabled":
            values[key] = typed.strip().lower() in ("1", "true", "yes", "on")
            continue
        if not has_field(plugin.config_model, key):
            raise SetupError(f"[channel.{name}] has no key {key!r}")
        question = question_for(plugin.config_model, key)
        if question.kind == "secret":
            register_secret(typed)
        values[key] = to_toml(plugin.config_model, question, parse(question, typed))
    for address in owners:
        name, sep, ident = address.partition(":")
        plugin = found.plugins.get(name.strip())
        if not sep or not ident.strip() or plugin is None:
            raise SetupError(f"--channel-owner {address!r}: write it as CHANNEL:ID of a channel")
        values = answers.channels.setdefault(plugin.name, {})
        values.setdefault("enabled", True)
        users = list(
            values.get("allowed_users", current(doc, "channel", name, "allowed_users") or [])
        )
        canonical = canonical_users(plugin.config_model, {"allowed_users": [ident.strip()]})
        values["allowed_users"] = list(dict.fromkeys([*users, *canonical]))
        answers.owners.append(f"{plugin.name}:{canonical[0]}")


__all__ = ["ask_channels", "from_flags", "to_toml"]
