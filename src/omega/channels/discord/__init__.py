"""The Discord channel plug-in: DMs and @mentions in guild channels, on discord.py (the
optional extra `discord`). Declared as the `discord` entry point of the `omega.channels`
group; discord.py is imported only when the channel is built."""

from __future__ import annotations

from omega.channels.base import Channel
from omega.channels.discord.checks import check_discord
from omega.channels.discord.config import DiscordConfig
from omega.channels.discord.pieces import MAX_MESSAGE_CHARS
from omega.channels.plugin import (
    Capabilities,
    ChannelContext,
    ChannelPlugin,
    ChannelUnavailableError,
    platform_proven,
)

__all__ = ["PLUGIN", "DiscordConfig"]

INSTALL = 'pip install "omega-agent[discord]"'


def _build(ctx: ChannelContext) -> Channel:
    """The running channel; unavailable without discord.py or a token."""
    assert isinstance(ctx.section, DiscordConfig)
    section = ctx.section
    if not section.token():
        raise ChannelUnavailableError(
            "[channel.discord] needs bot_token (or the DISCORD_BOT_TOKEN environment variable)"
        )
    try:
        from omega.channels.discord.channel import DiscordChannel
    except ImportError as exc:
        raise ChannelUnavailableError(
            f"the Discord channel needs discord.py ({exc.name or exc}): {INSTALL}"
        ) from None
    from omega.channels.builtin import report_dropped
    from omega.channels.discord.state import DiscordState

    state = DiscordState.load(ctx.paths.home / "discord.state.json", ctx.state())
    # A message given up unread is audited and told to the owner, as Telegram's updates are.
    dropped = report_dropped(ctx.store, "discord", "message") if ctx.store is not None else None
    channel: DiscordChannel
    channel = DiscordChannel(section, state, ctx.health(lambda: channel.account), dropped)
    return channel


PLUGIN = ChannelPlugin(
    name="discord",
    config_model=DiscordConfig,
    factory=_build,
    capabilities=Capabilities(
        typing=True,
        photos=True,
        groups=True,
        max_message_length=MAX_MESSAGE_CHARS,
        markdown="commonmark",
    ),
    checks={"discord": check_discord},
    reports_health=True,
    description="Discord: DMs and @mentions in servers (discord.py)",
    sender_assurance=platform_proven,
    prompt_hint="Platform: Discord. Markdown is supported (bold, italic, code blocks; no tables).",
)
