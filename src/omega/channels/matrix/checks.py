"""The Matrix channel's self-check: its settings complete, the homeserver reachable (with
`--network`), what the running channel last reported, and the encrypted rooms it cannot read."""

from __future__ import annotations

import urllib.error
import urllib.request

from omega.channels.matrix.config import MatrixConfig
from omega.channels.matrix.state import SyncState
from omega.health_file import read_health
from omega.ops.selfcheck import Check, CheckContext

FIX = "set it in [channel.matrix] (see config.example.toml)"
STATE_FILE = "matrix.state.json"


def missing_settings(config: MatrixConfig) -> list[str]:
    """The settings the channel cannot run without, by key."""
    missing = [key for key in ("homeserver", "user_id") if not getattr(config, key).strip()]
    if not (config.password.get_secret_value() or config.access_token.get_secret_value()):
        missing.append("password (or access_token)")
    return missing


def _unreachable(config: MatrixConfig) -> str:
    try:
        with urllib.request.urlopen(  # noqa: S310 - the configured homeserver, http(s) only
            f"{config.homeserver}/_matrix/client/versions", timeout=10
        ):
            return ""
    except (OSError, urllib.error.URLError, ValueError) as exc:
        return str(exc)


def check_matrix(ctx: CheckContext) -> Check | None:
    """An enabled Matrix channel has its credentials, reaches its homeserver, is syncing, and
    says which encrypted rooms it cannot read."""
    section = getattr(ctx.config.channel, "matrix", None)
    if not isinstance(section, MatrixConfig) or not section.enabled:
        return None
    missing = missing_settings(section)
    if missing:
        return Check("matrix", False, f"missing {', '.join(missing)}", FIX)
    if not section.homeserver.startswith(("http://", "https://")):
        return Check("matrix", False, "homeserver is not an http(s) address", FIX)
    if ctx.network and (down := _unreachable(section)):
        return Check("matrix", False, f"cannot reach {section.homeserver}: {down}", "check it")
    report = read_health(ctx.paths.channel_health("matrix")) or {}
    if report.get("state") in ("failed", "login refused"):
        return Check(
            "matrix",
            False,
            f"{report.get('state')}: {report.get('detail') or 'see omega.log'}",
            "check [channel.matrix] homeserver, user_id and password or access_token",
        )
    encrypted = SyncState.load(ctx.paths.home / STATE_FILE).told_encrypted
    if encrypted:
        return Check(
            "matrix",
            True,
            f"{len(encrypted)} end-to-end encrypted room(s) are not answered: Omega cannot "
            "read encryption",
            "talk to Omega in a room without encryption (in Element: a new room with "
            "encryption turned off)",
            warning=True,
        )
    if not section.allowed_users and section.dm_policy == "allowlist":
        return Check(
            "matrix",
            True,
            f"{section.user_id} on {section.homeserver}; nobody is allowed to write yet",
            "add your Matrix id to [channel.matrix] allowed_users",
            warning=True,
        )
    return Check("matrix", True, f"{section.user_id} on {section.homeserver}")
