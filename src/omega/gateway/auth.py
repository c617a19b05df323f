"""Who may talk to Omega: per-channel allow-lists, enforced before anything else."""

from __future__ import annotations

from omega.config import Config
from omega.types import IncomingMessage


def allowed_users(config: Config, channel: str) -> list[str] | None:
    """The channel's allow-list as strings, or None when the channel has no config section."""
    section = getattr(config.channel, channel, None)
    users = getattr(section, "allowed_users", None)
    if users is None:
        return None
    return [str(user) for user in users]


def check_auth(config: Config, message: IncomingMessage) -> str | None:
    """None when the sender may talk to Omega, else the reason they may not (for the audit).

    Every channel uses its own allow-list: `"*"` admits anyone, an empty list admits nobody.
    A channel without a config section admits nobody.
    """
    if not config.auth.enabled:
        return None
    users = allowed_users(config, message.channel)
    if users is None:
        return f"channel {message.channel!r} has no allow-list in the config"
    if "*" in users or message.sender_id in users:
        return None
    if not users:
        return f"{message.channel} allow-list is empty"
    return f"{message.channel} user {message.sender_id!r} is not in allowed_users"


LOCAL_CHANNELS = frozenset({"terminal", "web"})


def is_owner(config: Config, message: IncomingMessage) -> bool:
    """Whether the sender is the owner: the local terminal or web page, the heartbeat target,
    or an id listed in `[auth] owners`. Only the owner may resolve, approve or reject."""
    if message.channel in LOCAL_CHANNELS:
        return True
    hb = config.heartbeat
    if hb.reply_target and message.channel == hb.channel and message.sender_id == hb.reply_target:
        return True
    return f"{message.channel}:{message.sender_id}" in config.auth.owners
