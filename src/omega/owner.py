"""Who the owner is and how Omega addresses them, wherever they can be reached.

Code that must tell the owner something (a limitation, an escalation, a proposal, a heartbeat
alert) addresses an `owner_alert`; the gateway delivers it on a running channel where the owner
is known, or keeps it until one is (never to whoever happens to be talking).
"""

from __future__ import annotations

from omega.config import Config
from omega.types import OutgoingKind, OutgoingMessage, Priority

OWNER = "@owner"  # channel and target of a message meant for the owner, resolved by the gateway


def owner_alert(
    text: str, kind: OutgoingKind = "alert", priority: Priority = "normal"
) -> OutgoingMessage:
    """A message for the owner, wherever they can be reached; `priority` says how it passes
    the owner's quiet hours and daily cap (omega.gateway.notify)."""
    return OutgoingMessage(OWNER, OWNER, text, kind=kind, priority=priority)


def owner_addresses(config: Config) -> list[tuple[str, str]]:
    """The owner's configured (channel, id) pairs, in order of preference."""
    found: list[tuple[str, str]] = []
    for entry in config.auth.owners:
        channel, _, ident = entry.partition(":")
        if channel.strip() and ident.strip():
            found.append((channel.strip(), ident.strip()))
    hb = config.heartbeat
    if hb.channel and hb.reply_target:
        found.append((hb.channel, hb.reply_target))
    return list(dict.fromkeys(found))
