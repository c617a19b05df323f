"""The channel plug-in interface: what a channel declares so `omega start` can run it.

A channel is a `ChannelPlugin` object named by an entry point of the group `omega.channels`
(the built-in ones too, see pyproject.toml). It declares its name, the pydantic model of its
`[channel.<name>]` section, its self-checks, whether it keeps its own health report, its
capabilities and a factory that builds the running `Channel` (omega.channels.base). The
plug-in only turns its wire into `IncomingMessage`s and sends `OutgoingMessage`s: admission,
pairing, limits, the durable inbox and the pipeline are the gateway's, the same for every
channel. docs/channels.md has a complete example.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from omega.channels.base import Channel
from omega.channels.health import HealthReporter
from omega.config import Config
from omega.config.channels import DmPolicySection
from omega.errors import OmegaError
from omega.paths import OmegaPaths
from omega.types import Assurance

if TYPE_CHECKING:
    from omega.channels.state import ChannelState
    from omega.memory import Store
    from omega.ops.selfcheck import Check, CheckContext

__all__ = [
    "Capabilities",
    "ChannelContext",
    "ChannelPlugin",
    "ChannelUnavailableError",
    "MarkdownDialect",
    "PluginChannelConfig",
    "SetupTest",
    "locally_proven",
    "platform_proven",
]

GROUP = "omega.channels"  # the entry point group channels are found through

# How the channel renders the Markdown models write: "plain" (none, sent as written),
# "commonmark", "telegram-html", "whatsapp" (*bold* _italic_ ~strike~), "slack-mrkdwn", "html".
MarkdownDialect = Literal[
    "plain", "commonmark", "telegram-html", "whatsapp", "slack-mrkdwn", "html"
]


# `omega init`'s test of a channel's answers (a login, a token), given its validated section:
# (True, a line to show) when they work, (False, why not) when they do not, None when there is
# nothing to test yet. It must not raise for a wrong answer, and never returns a secret.
SetupTest = Callable[[BaseModel], "tuple[bool, str] | None"]


class PluginChannelConfig(DmPolicySection):
    """The base of a plug-in channel's section: off until `enabled = true`, nobody admitted
    until `allowed_users` names them (or pairing lets them in). A plug-in extends it."""

    enabled: bool = False  # `omega start` runs the channel
    # Ids of the people who may talk ("*": anyone; empty: nobody until pairing lets them in).
    allowed_users: list[str] = Field(default_factory=list)
    # Whether a refused stranger gets `[auth] deny_message` (once a day); false: silence,
    # still audited (where an answer would be noise, such as backscatter to spam).
    tell_strangers: bool = True


class ChannelUnavailableError(OmegaError):
    """The factory cannot build the channel here (no token, a library missing): the channel
    is left out with this message as a warning; the others start."""


@dataclass(frozen=True)
class Capabilities:
    """What the platform can do, for status and for code that adapts a reply to it."""

    typing: bool = False  # a typing indicator (`send_typing` does something)
    photos: bool = False  # pictures in and out
    voice: bool = False  # voice notes in (transcribed by [voice])
    groups: bool = False  # group chats, where Omega answers when mentioned
    edits: bool = False  # sent messages can be edited
    max_message_length: int = 4096  # longer replies are split by the channel
    markdown: MarkdownDialect = "plain"

    def describe(self) -> str:
        """One line: the capabilities it has, the length limit and the dialect."""
        names = ("typing", "photos", "voice", "groups", "edits")
        has = [name for name in names if getattr(self, name)]
        return (
            f"{', '.join(has) or 'text only'}; up to {self.max_message_length} chars, "
            f"{self.markdown}"
        )


@dataclass
class ChannelContext:
    """What a factory gets to build its channel."""

    name: str
    config: Config  # the whole configuration (read-only by convention)
    section: BaseModel  # this channel's validated [channel.<name>] section
    paths: OmegaPaths
    health_file: Path  # where its health report goes ($OMEGA_HOME/<name>.health.json)
    store: Store | None = None
    jsonl: bool = False  # `omega start --jsonl`: JSON lines on stdin/stdout (the terminal)
    root: object = None  # the composition root's Runtime, for built-ins that need more
    # What a factory leaves for the composition root besides its channel (the web server).
    products: dict[str, object] = field(default_factory=dict)

    def state(self) -> ChannelState | None:
        """The channel's durable values in the store (omega.channels.state), shared by every
        replica on every host; None when the channel is built without a store."""
        from omega.channels.state import ChannelState

        return ChannelState(self.store, self.name) if self.store is not None else None

    def health(self, account: Callable[[], str] = lambda: "") -> HealthReporter:
        """A reporter writing this channel's health file, which `omega status` reads."""
        return HealthReporter(self.health_file, account)


def _enabled_by_section(ctx: ChannelContext) -> bool:
    return bool(getattr(ctx.section, "enabled", False))


def _unproven(section: BaseModel) -> Assurance:
    return "unverified"


def platform_proven(section: BaseModel) -> Assurance:
    """For a platform that authenticates every account it delivers a message from."""
    return "platform"


def locally_proven(section: BaseModel) -> Assurance:
    """For a channel only the person at this machine (or its web login) can write to."""
    return "local"


@dataclass(frozen=True)
class ChannelPlugin:
    """One channel as Omega finds it through the `omega.channels` entry point group."""

    name: str  # the channel's name: [channel.<name>], IncomingMessage.channel, audit
    config_model: type[BaseModel]  # validates [channel.<name>]; PluginChannelConfig's kin
    factory: Callable[[ChannelContext], Channel]  # may raise ChannelUnavailableError
    capabilities: Capabilities = Capabilities()
    # Self-checks run by `omega start`, `omega status` and `/status` while the channel is
    # enabled (ops.selfcheck.register_check), by name; each returns None when it has nothing
    # to say.
    checks: Mapping[str, Callable[[CheckContext], Check | None]] = field(default_factory=dict)
    # True: the channel writes its own health report (ctx.health()); False: Omega keeps one
    # for it (running, stopped, failed).
    reports_health: bool = False
    # Whether the channel runs; by default the section's `enabled`.
    enabled: Callable[[ChannelContext], bool] = _enabled_by_section
    description: str = ""  # one line for `omega status`
    # Run by `omega init` once the owner answered the channel's questions (and by
    # `omega init --non-interactive` for a section it changed, unless --no-check): wrong answers
    # are asked again. None: init has nothing to test.
    setup: SetupTest | None = None

    def follows_section(self) -> bool:
        """Whether `enabled = true` in its section is what runs it (so `omega init` offers
        it); the terminal and the web page follow other settings."""
        return self.enabled is _enabled_by_section

    # With several replicas on one database: True when every replica may run the channel at
    # once (the web page, stdin); False when only one may receive (one getUpdates consumer,
    # one WhatsApp session): the replica holding the lease `channel:<name>` receives, every
    # replica still sends through it. Plug-ins are single-leader unless they say otherwise.
    shared: bool = False
    # An unshared channel whose platform takes a message from any process with the credentials
    # (the Bot API): every replica sends itself. False: a replica that is not the leader hands
    # its messages to the leader through the store (one WhatsApp session).
    sends_anywhere: bool = False
    # The system prompt's line about the platform ("Platform: ...": what formatting shows),
    # the only source of that line for every channel, Omega's own included; "" for one made
    # from `capabilities` (platform_hint()).
    prompt_hint: str = ""
    # How the channel knows its senders under this section (omega.types.Assurance): what its
    # messages' `assurance` will be at best. "unverified" unless the plug-in says: then its
    # owners are refused (`omega start` warns) and `omega security audit` reports it as high.
    sender_assurance: Callable[[BaseModel], Assurance] = _unproven

    def platform_hint(self) -> str:
        """The line the system prompt gets for this channel: the plug-in's own, else one that
        follows its Markdown dialect (a plain-text platform is told to use none)."""
        if self.prompt_hint:
            return self.prompt_hint
        title = self.name[:1].upper() + self.name[1:]
        if self.capabilities.markdown == "plain":
            return f"Platform: {title}. Plain text only; no Markdown."
        return f"Platform: {title}. Markdown is supported (bold, italic, code blocks; no tables)."
