"""Finding the channel plug-ins: the `omega.channels` entry points, their sections bound to
the config, their self-checks registered.

Every channel, built-in or not, is found here. The built-in ones are entry points of Omega's
own package (pyproject.toml); when the installed metadata lacks them (a checkout run from
source, an install older than the entry points) `BUILTIN` and `SHIPPED` name the same objects,
so Omega's own channels never vanish and no other package can take their names. A plug-in
that cannot be loaded, or whose section does not validate, is a `PluginFailure`: reported,
never fatal to the others.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from omega.channels.health import describe_health
from omega.channels.plugin import GROUP, ChannelContext, ChannelPlugin
from omega.config import Config
from omega.health_file import read_health, write_health
from omega.owner import OWNER
from omega.paths import OmegaPaths

if TYPE_CHECKING:
    from omega.memory import Store
    from omega.ops.selfcheck import Check, CheckContext, CheckFn

log = logging.getLogger(__name__)

# The built-in channels, in the order they start: name -> "module:object".
BUILTIN: dict[str, str] = {
    "terminal": "omega.channels.builtin:TERMINAL",
    "telegram": "omega.channels.builtin:TELEGRAM",
    "whatsapp": "omega.channels.builtin:WHATSAPP",
    "web": "omega.app.channels:WEB",
}
# The channel plug-ins shipped in Omega's package (its other entry points): supervised like any
# plug-in, but their names are Omega's as much as the built-ins' (another package's entry
# point under one is refused), and they are found without the entry points too.
SHIPPED: dict[str, str] = {
    "email": "omega.channels.email:PLUGIN",
    "slack": "omega.channels.slack:PLUGIN",
    "discord": "omega.channels.discord:PLUGIN",
    "matrix": "omega.channels.matrix:PLUGIN",
}
NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")  # a TOML key, a file name, an audit name


@dataclass(frozen=True)
class PluginFailure:
    """A plug-in that could not be used, and why (for the log, status and the owner)."""

    name: str
    reason: str
    source: str = ""  # the entry point's "module:object", or the distribution


@dataclass
class Discovery:
    """The plug-ins found, built-ins first, and those that failed."""

    plugins: dict[str, ChannelPlugin] = field(default_factory=dict)
    failures: dict[str, PluginFailure] = field(default_factory=dict)

    def is_builtin(self, name: str) -> bool:
        """Whether `name` is one of Omega's own channels."""
        return name in BUILTIN

    def platform_hints(self) -> dict[str, str]:
        """The system prompt's platform line of every plug-in found, by channel name."""
        return {name: plugin.platform_hint() for name, plugin in self.plugins.items()}


def _declared() -> list[EntryPoint]:
    try:
        return list(entry_points(group=GROUP))
    except Exception:  # a broken distribution's metadata must not stop the start
        log.exception("could not read the %s entry points", GROUP)
        return []


def _load(value: str) -> object:
    """The object an entry point's value ("module:attr.attr") names."""
    module, _, attr = value.partition(":")
    found: object = importlib.import_module(module.strip())
    for part in attr.strip().split(".") if attr.strip() else []:
        found = getattr(found, part)
    return found


def _plugin_problem(name: str, plugin: object) -> str:
    """Why `plugin` cannot serve as the channel `name`, or "" when it can."""
    if not isinstance(plugin, ChannelPlugin):
        return f"the entry point names {type(plugin).__name__}, not an omega ChannelPlugin"
    if plugin.name != name:
        return f"the entry point is named {name!r} but the plug-in calls itself {plugin.name!r}"
    if not (isinstance(plugin.config_model, type) and issubclass(plugin.config_model, BaseModel)):
        return "its config_model is not a pydantic model"
    return ""


def discover(declared: Iterable[EntryPoint] | None = None) -> Discovery:
    """Every channel plug-in: the built-ins (entry points, else `BUILTIN`), then the others
    by name, Omega's shipped plug-ins (`SHIPPED`) always among them. A name of either is
    Omega's: another package's entry point under it is refused. Loading imports each
    plug-in's module; one that fails is a failure, not an error."""
    found = Discovery()
    points = list(_declared() if declared is None else declared)
    values: dict[str, list[EntryPoint]] = {}
    for point in points:
        values.setdefault(point.name, []).append(point)
    for name, value in BUILTIN.items():
        _add(found, name, _own(name, value, values.pop(name, [])))
    for name in sorted({*values, *SHIPPED}):
        if name in SHIPPED:
            _add(found, name, _own(name, SHIPPED[name], values.get(name, [])))
            continue
        for point in values[name][1:]:
            log.warning("channel plug-in %r is declared twice; %s is ignored", name, point.value)
        point = values[name][0]
        if not NAME.match(name) or name == OWNER:
            found.failures[name] = PluginFailure(
                name, "a channel name is lowercase letters, digits and _", point.value
            )
            continue
        _add(found, name, point.value)
    return found


def _own(name: str, value: str, points: list[EntryPoint]) -> str:
    """What to load for one of Omega's own channels: its entry point `value`, whether the
    metadata lists it or not (an install older than the entry points). Another package's
    entry point under the name is refused: the name is Omega's."""
    for point in points:
        if point.value.replace(" ", "") != value:
            log.error(
                "channel plug-in %s is ignored: %r is one of Omega's own channels",
                point.value,
                name,
            )
    if not any(point.value.replace(" ", "") == value for point in points):
        log.debug("no entry point for Omega's channel %s; using %s", name, value)
    return value


def _add(found: Discovery, name: str, value: str) -> None:
    try:
        plugin = _load(value)
    except (Exception, SystemExit) as exc:  # an ImportError, or what its module raises
        # The traceback is for the plug-in's author ([logging] level = "debug").
        log.debug("channel plug-in %s (%s) could not be loaded", name, value, exc_info=True)
        found.failures[name] = PluginFailure(name, f"could not be loaded: {exc!r}", value)
        return
    problem = _plugin_problem(name, plugin)
    if problem:
        found.failures[name] = PluginFailure(name, problem, value)
    else:
        assert isinstance(plugin, ChannelPlugin)
        found.plugins[name] = plugin


def bind_section(config: Config, plugin: ChannelPlugin) -> BaseModel:
    """The plug-in's validated section, kept in `config.channel` (so admission, pairing and
    the audit read the model, not the raw table). Raises ValueError with a message naming
    the keys when the section does not validate."""
    current = getattr(config.channel, plugin.name, None)
    if isinstance(current, plugin.config_model):
        return current
    raw = current.model_dump() if isinstance(current, BaseModel) else (current or {})
    try:
        section = plugin.config_model.model_validate(raw)
    except ValidationError as exc:
        problems = [
            f"key 'channel.{plugin.name}.{'.'.join(str(p) for p in e['loc'])}': {e['msg']}"
            if e["loc"]
            else f"[channel.{plugin.name}]: {e['msg']}"
            for e in exc.errors()
        ]
        raise ValueError("; ".join(problems)) from None
    setattr(config.channel, plugin.name, section)
    return section


def raw_enabled(config: Config, name: str) -> bool:
    """Whether [channel.<name>] says `enabled = true`, read before any plug-in validates it."""
    section = getattr(config.channel, name, None)
    if isinstance(section, dict):
        return section.get("enabled") is True
    return bool(getattr(section, "enabled", False))


def unclaimed_sections(config: Config, found: Discovery) -> list[PluginFailure]:
    """[channel.*] tables no installed plug-in reads: a typo, or a package not installed."""
    known = set(found.plugins) | {f.name for f in found.failures.values()}
    left = []
    for name in config.channel.plugin_sections():
        if name in known:
            continue
        close = difflib.get_close_matches(name, sorted(set(found.plugins)), n=1, cutoff=0.7)
        hint = f" (did you mean [channel.{close[0]}]?)" if close else ""
        left.append(
            PluginFailure(name, f"no installed channel plug-in is named {name!r}{hint}", "")
        )
    return left


def make_context(
    plugin: ChannelPlugin,
    config: Config,
    section: BaseModel,
    paths: OmegaPaths,
    store: Store | None = None,
    *,
    jsonl: bool = False,
    root: object = None,
) -> ChannelContext:
    """The context `plugin`'s factory (and its `enabled`) is given."""
    return ChannelContext(
        plugin.name,
        config,
        section,
        paths,
        paths.channel_health(plugin.name),
        store=store,
        jsonl=jsonl,
        root=root,
    )


def report_failure(paths: OmegaPaths, failure: PluginFailure) -> None:
    """Keep the failure in the channel's health file, where `omega status` and the
    self-check read it."""
    write_health(paths.channel_health(failure.name), state="failed", detail=failure.reason)


def register_checks(config: Config, paths: OmegaPaths, found: Discovery | None = None) -> None:
    """Register with the self-check, for every enabled channel plug-in, the checks it
    declares, and for each one not built in a check that says whether it runs (or why it
    failed). Plug-ins are loaded when `found` is not given."""
    from omega.ops.selfcheck import register_check

    found = discover() if found is None else found
    for name, plugin in found.plugins.items():
        try:
            section = bind_section(config, plugin)
        except ValueError as exc:
            if raw_enabled(config, name):
                register_check(name, _failed_check(name, f"[channel.{name}] is invalid: {exc}"))
            continue
        if not plugin.enabled(make_context(plugin, config, section, paths)):
            continue
        for check_name, check in plugin.checks.items():
            register_check(check_name, check)
        if not found.is_builtin(name) and name not in plugin.checks:
            register_check(name, _running_check(name))
    for failure in [*found.failures.values(), *unclaimed_sections(config, found)]:
        if raw_enabled(config, failure.name):
            register_check(failure.name, _failed_check(failure.name, failure.reason))


def _failed_check(name: str, reason: str) -> CheckFn:
    def check(ctx: CheckContext) -> Check:
        from omega.ops.selfcheck import Check

        return Check(
            name,
            False,
            f"channel plug-in {reason}",
            f"fix or remove the package that provides it, or set [channel.{name}] enabled = false",
        )

    return check


def _running_check(name: str) -> CheckFn:
    def check(ctx: CheckContext) -> Check:
        from omega.ops.selfcheck import Check

        report = read_health(ctx.paths.channel_health(name)) or {}
        if report.get("state") == "failed":
            return Check(
                name,
                False,
                f"channel plug-in failed: {report.get('detail') or 'see omega.log'}",
                "see omega.log; fix the plug-in's settings or package and restart Omega",
            )
        return Check(
            name, True, f"channel plug-in: {describe_health(ctx.paths.channel_health(name))}"
        )

    return check
