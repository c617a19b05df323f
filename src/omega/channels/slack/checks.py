"""The Slack channel's self-check: its tokens present and of the right kind, and what the
running channel last reported."""

from __future__ import annotations

import os

from omega.channels.slack.config import SlackConfig
from omega.health_file import read_health
from omega.ops.selfcheck import Check, CheckContext

FIX = "set it in [channel.slack] (see config.example.toml)"


def missing_settings(config: SlackConfig, env: dict[str, str]) -> list[str]:
    """The settings the channel cannot run without (or that hold the wrong kind of token)."""
    missing = []
    bot, app = config.bot_token_value(env), config.app_token_value(env)
    if not bot:
        missing.append("bot_token (or SLACK_BOT_TOKEN)")
    elif not bot.startswith("xoxb-"):
        missing.append("a bot token starting with xoxb- in bot_token")
    if not app:
        missing.append("app_token (or SLACK_APP_TOKEN)")
    elif not app.startswith("xapp-"):
        missing.append("an app-level token starting with xapp- in app_token")
    return missing


def check_slack(ctx: CheckContext) -> Check | None:
    """An enabled Slack channel has both tokens, and its socket is running."""
    section = getattr(ctx.config.channel, "slack", None)
    if not isinstance(section, SlackConfig) or not section.enabled:
        return None
    missing = missing_settings(section, dict(os.environ))
    if missing:
        return Check("slack", False, f"missing {', '.join(missing)}", FIX)
    report = read_health(ctx.paths.channel_health("slack")) or {}
    if report.get("state") in ("failed", "token rejected"):
        return Check(
            "slack",
            False,
            f"{report.get('state')}: {report.get('detail') or 'see omega.log'}",
            "check [channel.slack] bot_token and app_token (Socket Mode must be on)",
        )
    if not section.allowed_users and section.dm_policy == "allowlist":
        return Check(
            "slack",
            True,
            "Socket Mode app; nobody is allowed to write yet",
            "add your Slack member id to [channel.slack] allowed_users",
            warning=True,
        )
    return Check("slack", True, "Socket Mode app, answering DMs and mentions")
