"""The Slack channel plug-in: Bolt for Python in Socket Mode (no public URL), DMs and
mentions in channels, threads kept as conversations, files both ways, mrkdwn. Declared as the
`slack` entry point of the `omega.channels` group; needs the `slack` extra."""

from __future__ import annotations

import os

from omega.channels.base import Channel
from omega.channels.plugin import (
    Capabilities,
    ChannelContext,
    ChannelPlugin,
    ChannelUnavailableError,
    platform_proven,
)
from omega.channels.slack.checks import check_slack, missing_settings
from omega.channels.slack.config import SlackConfig
from omega.channels.slack.mrkdwn import MAX_MESSAGE_CHARS

__all__ = ["PLUGIN", "SlackConfig"]

INSTALL = "pip install 'omega-agent[slack]'"


def _build(ctx: ChannelContext) -> Channel:
    """The running channel; unavailable while the library or a token is missing."""
    assert isinstance(ctx.section, SlackConfig)
    try:
        from omega.channels.slack.channel import SlackChannel
    except ImportError as exc:
        raise ChannelUnavailableError(
            f"the Slack channel needs slack-bolt, slack-sdk and aiohttp ({exc.name} is "
            f"missing): {INSTALL}"
        ) from None
    from omega.channels.builtin import report_dropped
    from omega.channels.slack.state import SlackState

    env = dict(os.environ)
    missing = missing_settings(ctx.section, env)
    if missing:
        raise ChannelUnavailableError(f"[channel.slack] needs {', '.join(missing)}")
    state = SlackState.load(ctx.paths.home / "slack.state.json", ctx.state())
    channel = SlackChannel(
        ctx.section,
        ctx.section.bot_token_value(env),
        ctx.section.app_token_value(env),
        state,
        ctx.health(lambda: f"@{channel.bot_name}" if channel.bot_name else ""),
        report_dropped(ctx.store, "slack", "message") if ctx.store is not None else None,
    )
    return channel


PLUGIN = ChannelPlugin(
    name="slack",
    config_model=SlackConfig,
    factory=_build,
    capabilities=Capabilities(
        photos=True,
        voice=True,
        groups=True,
        max_message_length=MAX_MESSAGE_CHARS,
        markdown="slack-mrkdwn",
    ),
    checks={"slack": check_slack},
    reports_health=True,
    description="Slack: Socket Mode in, Web API out (DMs, mentions, threads)",
    sender_assurance=platform_proven,
    prompt_hint="Platform: Slack. Markdown is supported (bold, italic, code blocks; no tables).",
)
