"""The message channels `omega start` runs: every enabled channel plug-in found through the
`omega.channels` entry points (omega.channels.registry), the built-in ones (JSON lines with
--jsonl, Telegram, WhatsApp, the web page) included.

A channel that cannot run here (ChannelUnavailableError) is left out with a warning on stderr; a
plug-in that fails to load, whose section is invalid or whose factory raises is a failure:
logged, written to its health file (status), told to the owner once the service runs, and the
others start. A web page that cannot listen stops the start (StartError)."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel

from omega.app.fleet import Fleet
from omega.app.leadership import lead
from omega.app.runtime import Runtime
from omega.channels.plugin import (
    Capabilities,
    ChannelContext,
    ChannelPlugin,
    ChannelUnavailableError,
    locally_proven,
)
from omega.config.channels import WebChannelConfig
from omega.errors import OmegaError
from omega.types import VERIFIED

if TYPE_CHECKING:
    from omega.channels.base import Channel
    from omega.channels.registry import Discovery, PluginFailure
    from omega.channels.supervised import SupervisedChannel
    from omega.memory import Store
    from omega.web.app import WebServer

log = logging.getLogger(__name__)


class StartError(OmegaError):
    """The service cannot start here; the message is for the person at the terminal."""


@dataclass
class StartedChannels:
    """What `message_channels` built: the channels in order, the web page's server (whose
    channel is among them), the third-party ones under watch, and the plug-ins that failed."""

    channels: list[Channel] = field(default_factory=list)
    web: WebServer | None = None
    supervised: list[SupervisedChannel] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)
    # The system prompt's platform line of every plug-in found (a channel may be started on
    # another replica, and the heartbeat writes to the owner's channel): by channel name.
    hints: dict[str, str] = field(default_factory=dict)


def message_channels(
    runtime: Runtime,
    store: Store,
    *,
    jsonl: bool = False,
    found: Discovery | None = None,
    fleet: Fleet | None = None,
) -> StartedChannels:
    """Build every enabled channel plug-in that can run here (built-ins first, in order).

    With `fleet`, a channel whose plug-in is not `shared` receives only on the replica holding
    its lease (omega.app.leadership); every replica sends through it."""
    from omega.channels.registry import discover, register_checks, unclaimed_sections

    found = discover() if found is None else found
    started = StartedChannels(hints=found.platform_hints())
    for name, plugin in found.plugins.items():
        failure = _start(runtime, store, plugin, found.is_builtin(name), jsonl, started, fleet)
        if failure is not None:
            _fail(runtime, started, failure)
    config = runtime.config
    # Plug-ins that could not be loaded, and [channel.*] tables no plug-in reads: a failure
    # when their table turns them on, a line in the log otherwise.
    for failure in [*found.failures.values(), *unclaimed_sections(config, found)]:
        if _raw_enabled(runtime, failure.name):
            _fail(runtime, started, failure)
        else:
            log.warning("channel plug-in %s: %s", failure.name, failure.reason)
    register_checks(config, runtime.paths, found)
    if not started.channels:
        sys.stderr.write(
            "omega: note: no message channel is running; only the scheduler, "
            "heartbeat and summarizer work\n"
        )
    return started


def _raw_enabled(runtime: Runtime, name: str) -> bool:
    from omega.channels.registry import raw_enabled

    return raw_enabled(runtime.config, name)


def _start(
    runtime: Runtime,
    store: Store,
    plugin: ChannelPlugin,
    builtin: bool,
    jsonl: bool,
    started: StartedChannels,
    fleet: Fleet | None = None,
) -> PluginFailure | None:
    """Build `plugin`'s channel into `started` when it is enabled; its failure, if any."""
    from omega.channels.registry import PluginFailure, bind_section, make_context
    from omega.channels.supervised import SupervisedChannel

    try:
        section = bind_section(runtime.config, plugin)
    except ValueError as exc:
        if not _raw_enabled(runtime, plugin.name):
            return None
        return PluginFailure(plugin.name, f"has an invalid [channel.{plugin.name}]: {exc}")
    ctx = make_context(
        plugin, runtime.config, section, runtime.paths, store, jsonl=jsonl, root=runtime
    )
    try:
        if not plugin.enabled(ctx):
            return None
        channel = plugin.factory(ctx)
    except StartError:
        raise
    except ChannelUnavailableError as exc:
        if not builtin:  # a third-party channel that cannot run is told to the owner
            return PluginFailure(plugin.name, f"cannot run here: {exc}")
        sys.stderr.write(f"omega: warning: {exc}\n")
        return None
    except Exception as exc:
        log.debug("channel plug-in %s could not start", plugin.name, exc_info=True)
        return PluginFailure(plugin.name, f"could not start: {exc!r}")
    if web := ctx.products.get("web"):
        started.web = web  # type: ignore[assignment]
    _warn_unproven_owners(runtime, plugin, section)
    anywhere = plugin.sends_anywhere
    # A channel may receive on every replica under its section even when its plug-in is led
    # by one in general (Telegram's webhook): it says so with `shared = True`.
    shared = plugin.shared or getattr(channel, "shared", False) is True
    if builtin:
        rebuild = lambda: plugin.factory(ctx)  # noqa: E731 - a fresh one after a lost lease
        if fleet is not None and not shared:
            channel = lead(channel, fleet, rebuild, sends_anywhere=anywhere)
        started.channels.append(channel)
        return None
    supervised = SupervisedChannel(plugin, channel, ctx)
    started.supervised.append(supervised)
    if fleet is not None and not shared:
        started.channels.append(lead(supervised, fleet, sends_anywhere=anywhere))
    else:
        started.channels.append(supervised)
    log.info("channel plug-in %s started (%s)", plugin.name, plugin.capabilities.describe())
    return None


def _warn_unproven_owners(runtime: Runtime, plugin: ChannelPlugin, section: BaseModel) -> None:
    """A channel that cannot prove its senders gives nobody the owner's rights: say so at
    start when `[auth] owners` names someone there (they would be refused)."""
    if plugin.sender_assurance(section) in VERIFIED:
        return
    named = [o for o in runtime.config.auth.owners if o.partition(":")[0].strip() == plugin.name]
    if not named:
        return
    hint = (
        " (set [channel.email] authserv_id to your mail provider's, e.g. mx.google.com)"
        if plugin.name == "email"
        else ""
    )
    warning = (
        f"omega: warning: {plugin.name} cannot prove who sends a message{hint}: "
        f"{', '.join(named)} in [auth] owners will be refused there, not given owner rights\n"
    )
    sys.stderr.write(warning)
    log.warning(warning.strip())


def _fail(runtime: Runtime, started: StartedChannels, failure: PluginFailure) -> None:
    """Report a plug-in that failed: the log, stderr, its health file (status); the owner is
    told once the service runs (Service.channel_failures)."""
    from omega.channels.registry import report_failure

    log.error("channel plug-in %s %s; the other channels start", failure.name, failure.reason)
    report_failure(runtime.paths, failure)
    started.failures.append(failure)


def _web(ctx: ChannelContext) -> Channel:
    """Bind the web page's socket and print its login link (also in $OMEGA_HOME/web.url)."""
    from omega.web.app import WebConfigError, is_loopback, prepare

    runtime, store = ctx.root, ctx.store
    assert isinstance(runtime, Runtime) and store is not None
    try:
        web = prepare(runtime.config, runtime.paths, store)
    except WebConfigError as exc:
        raise StartError(str(exc)) from None
    if not is_loopback(runtime.config.web.host.strip() or "127.0.0.1"):
        sys.stderr.write(
            f"omega: warning: the web page listens on {runtime.config.web.host} "
            "([web] allow_remote = true): anyone who reaches it can try to log in\n"
        )
    # Written to a terminal only, never to the log: the token works once, and a fresh link is
    # always in web.url (readable by the owner alone). Where stderr is no terminal (a systemd
    # journal, a file others may read) only where to find it.
    if sys.stderr.isatty():
        sys.stderr.write(
            f"omega: web page at {web.base_url} - log in with this one-time link:\n"
            f"  {web.login_link}\n  (a fresh link is always in {runtime.paths.web_url})\n"
        )
    else:
        sys.stderr.write(
            f"omega: web page at {web.base_url} - log in with the one-time link in "
            f"{runtime.paths.web_url}\n"
        )
    ctx.products["web"] = web
    return web.channel


WEB = ChannelPlugin(
    name="web",
    config_model=WebChannelConfig,
    factory=_web,
    capabilities=Capabilities(
        typing=True, photos=True, max_message_length=1_000_000, markdown="commonmark"
    ),
    # [web] enabled turns the page on; a factory needs the runtime (not given to status).
    enabled=lambda ctx: ctx.config.web.enabled and ctx.root is not None,
    description="the local web page ([web])",
    sender_assurance=locally_proven,
    shared=True,  # every replica serves it (its sessions are in the store)
    prompt_hint="Platform: Omega's local web page. Markdown is supported.",
)
