"""The Discord channel's self-check: a token, and what the running channel last reported."""

from __future__ import annotations

from omega.channels.discord.config import DiscordConfig
from omega.health_file import read_health
from omega.ops.selfcheck import Check, CheckContext


def check_discord(ctx: CheckContext) -> Check | None:
    """An enabled Discord channel has a token and is connected."""
    section = getattr(ctx.config.channel, "discord", None)
    if not isinstance(section, DiscordConfig) or not section.enabled:
        return None
    if not section.token():
        return Check(
            "discord",
            False,
            "no bot token",
            "set [channel.discord] bot_token or DISCORD_BOT_TOKEN (discord.com/developers)",
        )
    report = read_health(ctx.paths.channel_health("discord")) or {}
    account = str(report.get("account") or "the bot")
    if report.get("state") in ("failed", "token rejected", "intent refused"):
        return Check(
            "discord",
            False,
            f"{account}: {report.get('state')} ({report.get('detail') or 'see omega.log'})",
            "check [channel.discord] bot_token and the bot's settings at discord.com/developers",
        )
    if not section.allowed_users and section.dm_policy == "allowlist":
        return Check(
            "discord",
            True,
            f"{account} is connected; nobody is allowed to write yet",
            "add your Discord user id to [channel.discord] allowed_users",
            warning=True,
        )
    return Check("discord", True, f"{account}: {report.get('state') or 'not started'}")
