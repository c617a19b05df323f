"""Checks of who can reach Omega: the web page's address, each channel's DM policy and
allow-list, and whether an owner is named where a channel is enabled.

`channel_access` is the one place that reads how a channel admits people; it reads
`dm_policy` when a channel has one (pairing, allow-list, open) and otherwise infers it from
the allow-list, so the checks stay right whichever way allow-lists are kept."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from omega.ops.security.model import AuditContext, Finding
from omega.owner import owner_addresses

LOOPBACK = "127.0.0.1"
# Channels reachable from outside this machine (the terminal and the local page are not).
REMOTE_CHANNELS = ("telegram", "whatsapp")
# Tools that act on the machine: given to people a wildcard admits, they are anyone's.
ACTING_TOOLS = ("run_shell", "write_file")


def is_loopback(host: str) -> bool:
    """Whether a bind address stays on this machine ('localhost', 127.0.0.0/8, ::1)."""
    host = host.strip().strip("[]") or LOOPBACK
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ChannelAccess:
    """How one channel admits people who write to it."""

    name: str
    enabled: bool
    policy: str  # "pairing", "allowlist" or "open"
    wildcard: bool  # "*" is in its allow-list


def _setting(section: object, key: str, default: object) -> object:
    """One setting of a channel's section: a built-in's model, a plug-in's model, or a plug-in
    table not validated yet (the audit runs without loading plug-ins)."""
    if isinstance(section, dict):
        return section.get(key, default)
    return getattr(section, key, default)


def channel_access(ctx: AuditContext) -> list[ChannelAccess]:
    """Each remote channel's policy (the built-in ones and every plug-in channel's table): its
    `dm_policy` when set, else "open" for a "*" in the allow-list and "allowlist" otherwise."""
    found = []
    plugins = dict(getattr(ctx.config.channel, "model_extra", None) or {})  # plug-ins' tables
    for name in (*REMOTE_CHANNELS, *sorted(plugins)):
        section = plugins[name] if name in plugins else getattr(ctx.config.channel, name)
        users = _setting(section, "allowed_users", [])
        allowed = [str(entry).strip() for entry in users] if isinstance(users, list) else []
        wildcard = "*" in allowed
        policy = _setting(section, "dm_policy", None) or ("open" if wildcard else "allowlist")
        enabled = bool(_setting(section, "enabled", False))
        found.append(ChannelAccess(name, enabled, str(policy), wildcard))
    return found


def check_dm_policy(ctx: AuditContext) -> list[Finding]:
    """No enabled channel lets anyone in (an open policy, a "*"), nor is the check off."""
    if not ctx.config.auth.enabled:
        return [
            Finding(
                "dm-policy",
                "critical",
                "the allow-list check is off",
                "[auth] enabled = false: anyone who finds Omega on any enabled channel may "
                "talk to it and use the tools people get",
                "set [auth] enabled = true",
                subject="auth",
            )
        ]
    acting = [t for t in ctx.config.auth.people_tools if t in ACTING_TOOLS]
    found = []
    for access in channel_access(ctx):
        if not access.enabled or not (access.policy == "open" or access.wildcard):
            continue
        why = 'dm_policy = "open"' if access.policy == "open" else '"*" in allowed_users'
        found.append(
            Finding(
                "dm-policy",
                "critical" if acting else "high",
                f"anyone may talk to Omega on {access.name}",
                f"[channel.{access.name}] admits everyone ({why})"
                + (f"; people get {', '.join(acting)}" if acting else "")
                + ": every stranger spends your provider budget and reaches the tools people get",
                f'list the people you know in [channel.{access.name}] allowed_users instead of "*"',
                subject=access.name,
            )
        )
    return found


def granted_owners(ctx: AuditContext) -> set[str]:
    """Channels where `omega people allow --owner` gave someone the owner's rights at run time
    (memory.db, read-only)."""
    from omega.ops.security.pins import read_rows

    rows = read_rows(
        ctx.paths.db, "SELECT channel FROM access_grants WHERE role = 'owner'", ctx.store_url
    )
    return {str(row[0]) for row in rows}


# How the channels shipped with Omega know their senders (their plug-ins' sender_assurance;
# the audit reads config tables without loading plug-ins). A plug-in not named here proves
# nothing unless the caller says otherwise (AuditContext.proofs).
PLATFORM_PROVEN = frozenset({"telegram", "whatsapp", "slack", "discord", "matrix"})
LOCAL = frozenset({"terminal", "web"})


def sender_proof(ctx: AuditContext, name: str, section: object) -> str:
    """How channel `name` knows who writes to it: "platform", "mail_server", "local" or
    "unverified" (e-mail without a trusted authserv-id, an unknown plug-in)."""
    if name in ctx.proofs:
        return ctx.proofs[name]
    if name in PLATFORM_PROVEN:
        return "platform"
    if name in LOCAL:
        return "local"
    if name == "email":
        return "mail_server" if str(_setting(section, "authserv_id", "")).strip() else "unverified"
    return "unverified"


def check_sender_proof(ctx: AuditContext) -> list[Finding]:
    """No owner or allowed person is named on a channel that cannot prove its senders: there a
    name is only a claim (anyone can write `From: you@...`), so the owner is refused and an
    allowed person talks without tools; naming them suggests a protection that is not there."""
    plugins = dict(getattr(ctx.config.channel, "model_extra", None) or {})
    granted = granted_identities(ctx)
    found = []
    for name in (*REMOTE_CHANNELS, *sorted(plugins)):
        section = plugins[name] if name in plugins else getattr(ctx.config.channel, name)
        if not bool(_setting(section, "enabled", False)):
            continue
        if sender_proof(ctx, name, section) != "unverified":
            continue
        owners = [
            ident.strip()
            for channel, _, ident in (o.partition(":") for o in ctx.config.auth.owners)
            if channel.strip() == name
        ]
        users = _setting(section, "allowed_users", [])
        allowed = [str(u).strip() for u in users] if isinstance(users, list) else []
        named = [*owners, *allowed, *granted.get(name, [])]
        if not named:
            continue
        fix = (
            "set [channel.email] authserv_id to your mail provider's authserv-id "
            "(mx.google.com for Gmail; see docs/channels/email.md)"
            if name == "email"
            else f"use a channel that authenticates its senders, or remove them from {name}"
        )
        found.append(
            Finding(
                "sender-proof",
                "high",
                f"{name} cannot prove who is writing",
                f"{name} names {len(named)} owner or allowed identit"
                f"{'y' if len(named) == 1 else 'ies'} ({', '.join(repr(n) for n in named[:5])}), "
                "but nothing proves a sender there: anyone can claim those ids, so owners are "
                "refused and allowed people get no tools",
                fix,
                subject=name,
            )
        )
    return found


def granted_identities(ctx: AuditContext) -> dict[str, list[str]]:
    """Ids memory.db lets in at run time (pairing, `omega people allow`), by channel."""
    from omega.ops.security.pins import read_rows

    rows = read_rows(ctx.paths.db, "SELECT channel, sender_id FROM access_grants", ctx.store_url)
    found: dict[str, list[str]] = {}
    for channel, sender in rows:
        found.setdefault(str(channel), []).append(str(sender))
    return found


def check_owners(ctx: AuditContext) -> list[Finding]:
    """Every enabled remote channel has an owner ([auth] owners, or one let in at run time
    with `omega people allow --owner`), so approvals and alerts can reach them."""
    owners = {channel for channel, _ in owner_addresses(ctx.config)}
    granted = granted_owners(ctx)
    found = []
    for access in channel_access(ctx):
        if not access.enabled or access.name in owners:
            continue
        if access.name == "whatsapp" and ctx.config.channel.whatsapp.mode == "personal":
            continue  # personal mode answers only the owner's own "message yourself" chat
        if access.name in granted:
            continue  # an owner let in at run time approves there and gets the alerts
        found.append(
            Finding(
                "owners",
                "medium",
                f"no owner on {access.name}",
                f"{access.name} is enabled but [auth] owners names nobody there: nobody on it "
                "can approve or resolve, and owner alerts cannot reach you there",
                f'add "{access.name}:<your id>" to [auth] owners',
                subject=access.name,
            )
        )
    return found


def _set_loopback(ctx: AuditContext) -> str:
    """Put [web] host back to 127.0.0.1 in config.toml, keeping its comments and other keys."""
    from omega.ops.setup import read_document, write_config

    doc = read_document(ctx.paths.config)
    web = doc.get("web")
    old = web.get("host") if web is not None else None
    if web is None or old is None or is_loopback(str(old)):
        return f"{ctx.paths.config}: [web] host not set there, left alone"
    web["host"] = LOOPBACK
    write_config(ctx.paths.config, doc)
    return f"{ctx.paths.config}: [web] host {str(old)!r} -> {LOOPBACK!r}"


def check_web(ctx: AuditContext) -> list[Finding]:
    """The web page (whoever holds its login link is the owner) listens on loopback only."""
    web = ctx.config.web
    if is_loopback(web.host):
        return []
    served = web.enabled and web.allow_remote
    from omega.ops.setup import SetupError, read_document

    try:
        in_file = str((read_document(ctx.paths.config).get("web") or {}).get("host", ""))
    except (SetupError, OSError, AttributeError):  # unreadable, or [web] is not a table
        in_file = ""
    fixable = in_file.strip() == web.host.strip()
    return [
        Finding(
            "web-bind",
            "high" if served else "medium",
            "the web page listens beyond this machine",
            f"[web] host = {web.host!r}"
            + (
                " with allow_remote: anyone who reaches it can try to log in as the owner"
                if served
                else " (not served now: it needs enabled and allow_remote)"
            )
            + ("" if fixable else "; set by the environment (OMEGA_WEB__HOST), not config.toml"),
            f'set [web] host = "{LOOPBACK}" and reach it through an SSH tunnel',
            repair=(lambda: _set_loopback(ctx)) if fixable else None,
        )
    ]
