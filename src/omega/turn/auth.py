"""Who may talk to Omega: per-channel allow-lists, enforced before anything else.

Two sources, merged on every message (nothing cached, so a revocation holds from the next
message): the config (`[channel.*] allowed_users`, `[auth] owners`: the seed and the override,
an id it names is always allowed, whatever memory.db says) and memory.db's run-time grants
(pairing, `omega people allow`; memory/access.py), read by `granted_role` and passed in as
`granted`. Without `granted` only the config counts (fail closed).
"""

from __future__ import annotations

import getpass
import logging
from dataclasses import dataclass
from typing import Literal

from omega.config import Config
from omega.memory.access import GrantRole
from omega.memory.store import Store
from omega.owner import OWNER
from omega.types import IncomingMessage

log = logging.getLogger(__name__)
DmPolicyName = Literal["pairing", "allowlist", "open"]


def _setting(config: Config, channel: str, key: str, default: object) -> object:
    """One setting of a channel's section: a model (built in, or a plug-in's once bound) or a
    plug-in's table not validated yet."""
    section = getattr(config.channel, channel, None)
    if isinstance(section, dict):
        return section.get(key, default)
    return getattr(section, key, default)


def allowed_users(config: Config, channel: str) -> list[str] | None:
    """The channel's allow-list as strings, or None when the channel has no config section."""
    users = _setting(config, channel, "allowed_users", None)
    if not isinstance(users, list | tuple):
        return None
    return [str(user) for user in users]


def tells_strangers(config: Config, channel: str) -> bool:
    """Whether a refused stranger on `channel` is told so (the deny message); a channel whose
    section says `tell_strangers = false` (e-mail, where a refusal would be backscatter to
    spammers) refuses in silence."""
    return _setting(config, channel, "tell_strangers", True) is not False


def dm_policy(config: Config, channel: str) -> DmPolicyName:
    """What a stranger writing to `channel` in a direct chat gets ("allowlist" for a channel
    without a section)."""
    policy = _setting(config, channel, "dm_policy", "allowlist")
    return "pairing" if policy == "pairing" else "open" if policy == "open" else "allowlist"


async def granted_role(store: Store, message: IncomingMessage) -> GrantRole | None:
    """The role memory.db gives the sender's channel id, read now; None when it gives none
    or cannot be read (then only the config counts)."""
    try:
        return await store.call(store.granted_role, message.channel, message.channel_id)
    except Exception:
        log.exception("could not read the grants of %s", message.channel_id)
        return None


def check_auth(
    config: Config, message: IncomingMessage, granted: GrantRole | None = None
) -> str | None:
    """None when the sender may talk to Omega, else the reason they may not (for the audit).

    Every channel uses its own allow-list: `"*"` admits anyone, an empty list admits nobody;
    an id memory.db grants (`granted`) is admitted too. A channel without a config section
    admits nobody. A sender the channel's check refuted (a forged mail) is a stranger; one the
    channel cannot prove at all is one too when the id they give is an owner's (a claim is not
    a proof).
    """
    if not config.auth.enabled:
        return None
    users = allowed_users(config, message.channel)
    if users is None:
        return f"channel {message.channel!r} has no allow-list in the config"
    if message.assurance == "refuted":
        why = f" ({message.assurance_detail})" if message.assurance_detail else ""
        return f"{message.channel} sender {message.channel_id!r} failed verification{why}"
    if not message.verified and names_owner(config, message, granted):
        why = f" ({message.assurance_detail})" if message.assurance_detail else ""
        return (
            f"{message.channel} sender {message.channel_id!r} names an owner but is not "
            f"verified{why}: owner rights need a proven sender"
        )
    if "*" in users or message.channel_id in users or granted is not None:
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


def names_owner(config: Config, message: IncomingMessage, granted: GrantRole | None = None) -> bool:
    """Whether the sender's channel id is one the owner's rights belong to (`[auth] owners`,
    a granted owner, the heartbeat's target), whether or not the channel proved it."""
    channel, sender = message.channel, message.channel_id
    if f"{channel}:{sender}" in config.auth.owners or granted == "owner":
        return True
    hb = config.heartbeat
    return bool(hb.reply_target and channel == hb.channel and sender == hb.reply_target)


def is_owner(config: Config, message: IncomingMessage, granted: GrantRole | None = None) -> bool:
    """Whether the sender is the owner: a proven sender (message.verified) whose id is in
    `[auth] owners` ("channel:id") or made an owner in memory.db (`granted`), or the heartbeat
    target; the web page; or at the terminal the local user (unless `[auth] owners` names
    terminal ids, then exactly those). Only the owner may resolve, approve or reject."""
    channel, sender = message.channel, message.channel_id
    if channel == OWNER:
        return True
    if not message.verified:
        return False
    if names_owner(config, message, granted):
        return True
    if channel == "web":
        return True
    if channel == "terminal":
        named = [o for o in config.auth.owners if o.partition(":")[0].strip() == "terminal"]
        return not named and sender == local_owner_id()
    return False


def stored_owner(store: Store, config: Config, channel: str, person: str) -> bool:
    """Whether what memory keeps for `person` on `channel` (conversations, tool calls: kept
    under the person of the channel id that made them) is the owner's: every channel id of
    `channel` whose person it is (identities, read now) must be a proven owner's (`is_owner`
    with its memory.db grant), since a link joins another id's memory to a person, never the
    owner's rights; with none, the person is the channel id itself. No channel: Omega's own
    (a background call). Call on the store's thread."""
    if not channel:
        return True
    rows = store.query(
        "SELECT sender_id FROM identities WHERE channel = ? AND person = ? ORDER BY sender_id",
        (channel, person),
    )
    for sender in [str(row["sender_id"]) for row in rows] or [person]:
        who = IncomingMessage(channel, sender, "", assurance="stored")
        if not is_owner(config, who, store.granted_role(channel, sender)):
            return False
    return True


@dataclass(frozen=True)
class ChannelPolicy:
    """One channel's admission as configured and granted (for `omega security audit`)."""

    channel: str
    enabled: bool
    dm_policy: DmPolicyName
    wildcard: bool  # "*" in the config's allow-list: anyone is admitted
    config_allowed: tuple[str, ...]
    granted: tuple[str, ...]  # ids memory.db lets in (person or owner)
    owners: tuple[str, ...]  # ids with the owner's rights: [auth] owners and granted owners


def dm_policies(config: Config, store: Store | None = None) -> list[ChannelPolicy]:
    """Every channel's policy, allow-list and owners, from the config and (when given)
    memory.db's grants: what an audit checks for open DM policies and wildcard lists."""
    grants = store.grants() if store is not None else []
    found = []
    for name in [*type(config.channel).model_fields, *sorted(config.channel.plugin_sections())]:
        users = allowed_users(config, name) or []
        mine = [g for g in grants if g.channel == name]
        owners = [
            ident.strip()
            for channel, _, ident in (o.partition(":") for o in config.auth.owners)
            if channel.strip() == name
        ]
        enabled = config.web.enabled if name == "web" else _setting(config, name, "enabled", True)
        found.append(
            ChannelPolicy(
                channel=name,
                enabled=bool(enabled),
                dm_policy=dm_policy(config, name),
                wildcard="*" in users,
                config_allowed=tuple(users),
                granted=tuple(g.sender_id for g in mine),
                owners=tuple(
                    dict.fromkeys([*owners, *(g.sender_id for g in mine if g.role == "owner")])
                ),
            )
        )
    return found
