"""The e-mail channel's self-check: its settings complete, its servers reachable (with
`--network`), and what the running channel last reported."""

from __future__ import annotations

import socket

from omega.channels.email.config import EmailConfig
from omega.health_file import read_health
from omega.ops.selfcheck import Check, CheckContext

FIX = "set it in [channel.email] (see config.example.toml)"


def missing_settings(config: EmailConfig) -> list[str]:
    """The settings the channel cannot run without, by key."""
    needed = {
        "imap_host": config.imap_host,
        "imap_user": config.imap_user,
        "imap_password": config.imap_password.get_secret_value(),
        "smtp_host": config.smtp_host,
        "from_address (or imap_user)": config.sender(),
    }
    return [key for key, value in needed.items() if not value.strip()]


def _unreachable(config: EmailConfig) -> list[str]:
    down = []
    for label, host, port in (
        ("IMAP", config.imap_host, config.imap_port_or_default()),
        ("SMTP", config.smtp_host, config.smtp_port_or_default()),
    ):
        try:
            socket.create_connection((host, port), timeout=5).close()
        except OSError as exc:
            down.append(f"{label} {host}:{port} ({exc.strerror or exc})")
    return down


def check_email(ctx: CheckContext) -> Check | None:
    """An enabled e-mail channel has its credentials, reaches its servers and is reading."""
    section = getattr(ctx.config.channel, "email", None)
    if not isinstance(section, EmailConfig) or not section.enabled:
        return None
    missing = missing_settings(section)
    if missing:
        return Check("email", False, f"missing {', '.join(missing)}", FIX)
    if section.authserv_id and not section.own_addresses():
        return Check(
            "email",
            True,
            "no address of Omega's is known (imap_user is no address): every mail is refused as "
            "not addressed to Omega",
            "set [channel.email] from_address (and aliases) to the addresses people write to",
            warning=True,
        )
    if ctx.network and (down := _unreachable(section)):
        return Check("email", False, f"cannot reach {'; '.join(down)}", "check the hosts and ports")
    report = read_health(ctx.paths.channel_health("email")) or {}
    if report.get("state") == "failed":
        return Check(
            "email",
            False,
            f"the mailbox failed: {report.get('detail') or 'see omega.log'}",
            "check [channel.email] hosts, ports, security and credentials",
        )
    if not section.allowed_users and section.dm_policy == "allowlist":
        return Check(
            "email",
            True,
            f"reading {section.imap_user}'s {section.folder}; nobody is allowed to write yet",
            "add your address to [channel.email] allowed_users",
            warning=True,
        )
    return Check("email", True, f"reading {section.imap_user}'s {section.folder}")
