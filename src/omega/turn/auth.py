"""Who may talk to Omega: per-channel allow-lists, enforced before anything else."""

from __future__ import annotations

import getpass

from omega.config import Config
from omega.owner import OWNER
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
    if "*" in users or message.channel_id in users:
        return None
    if not users:
        return f"{message.channel} allow-list is empty"
    return f"{message.channel} user {message.channel_id!r} is not in allowed_users"


def local_owner_id() -> str:
    """The sender id of whoever runs Omega at this machine (the default terminal sender)."""
    try:
        return getpass.getuser()
    except Exception:  # no user name (a container without a passwd entry)
        return "owner"


def is_owner(config: Config, message: IncomingMessage) -> bool:
    """Whether the sender is the owner: an id in `[auth] owners` ("channel:id"), the heartbeat
    target, the web page, or at the terminal the local user (unless `[auth] owners` names
    terminal ids, then exactly those). Only the owner may resolve, approve or reject."""
    channel, sender = message.channel, message.channel_id
    if channel == OWNER or f"{channel}:{sender}" in config.auth.owners:
        return True
    hb = config.heartbeat
    if hb.reply_target and channel == hb.channel and sender == hb.reply_target:
        return True
    if channel == "web":
        return True
    if channel == "terminal":
        named = [o for o in config.auth.owners if o.partition(":")[0].strip() == "terminal"]
        return not named and sender == local_owner_id()
    return False
