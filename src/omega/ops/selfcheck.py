"""The self-check: what must hold for Omega to work, each failure with what to do about it.

Run at `omega start` (in the log), by `omega status` and by `/status`. Checks are cheap: the
provider check reads config and PATH, and only with `network=True` makes one request that costs
nothing (the provider's model list, short timeout) — never a completion.

The security audit (omega.ops.security) feeds one check, `security`, with its worst findings.

Channels add their own checks with `register_check` (a check registered under the name of a
built-in one replaces it), e.g. Telegram validating its token with getMe.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from omega.config import Config
from omega.config.providers import PROVIDER_NAMES
from omega.health_file import read_health
from omega.logs import redact
from omega.memory.db import redacted_location
from omega.memory.migrations import latest_version
from omega.memory.store import Store
from omega.paths import OmegaPaths

log = logging.getLogger(__name__)

MIN_FREE_BYTES = 500 * 1024 * 1024  # below this, memory.db and the WAL may fail to grow
LOW_FREE_BYTES = 2 * 1024 * 1024 * 1024
NETWORK_TIMEOUT = 3.0


@dataclass(frozen=True)
class Check:
    """One check's verdict; `fix` says what to do when it is not ok."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False  # ok, but worth saying (low disk, degraded but usable)

    def verdict(self) -> str:
        """ok / warning / FAILED, the detail and what to do (secrets redacted)."""
        mark = "ok" if self.ok and not self.warning else ("warning" if self.ok else "FAILED")
        return redact(f"{mark} - {self.detail}" + (f" -> {self.fix}" if self.fix else ""))

    def line(self) -> str:
        """One line for the log and `/status`."""
        return f"{self.name}: {self.verdict()}"


@dataclass(frozen=True)
class CheckContext:
    """What checks look at."""

    config: Config
    paths: OmegaPaths
    store: Store | None = None
    provider_name: str = ""
    network: bool = False


CheckFn = Callable[[CheckContext], "Check | None"]
_registered: dict[str, CheckFn] = {}


def register_check(name: str, check: CheckFn) -> None:
    """Add a check (a channel's credentials, say); it returns None when it does not apply."""
    _registered[name] = check


def unregister_check(name: str) -> None:
    """Remove a registered check (tests, a channel that is turned off)."""
    _registered.pop(name, None)


def check_database(ctx: CheckContext) -> Check:
    """memory.db opens, is migrated to this Omega's schema and takes a write lock."""
    if ctx.store is None:
        return Check("database", False, f"{ctx.paths.db} is not open", "see the log for why")
    try:
        version = ctx.store.schema_version()
        with ctx.store.transaction():
            pass  # BEGIN IMMEDIATE: the write lock can be taken
    except Exception as exc:
        return Check(
            "database",
            False,
            f"{redacted_location(ctx.store.location)} is not writable: {exc}",
            f"check that {ctx.paths.home} and its files belong to you and the disk is not full",
        )
    if version != latest_version():
        return Check(
            "database",
            False,
            f"schema {version}, this Omega expects {latest_version()}",
            "restart Omega so it migrates the database, or restore a backup",
        )
    return Check("database", True, f"writable, schema {version}")


def _probe_url(url: str, headers: dict[str, str]) -> tuple[int | None, str]:
    """GET `url` with a short timeout: (status, "") or (None, why it failed)."""
    import httpx

    try:
        response = httpx.get(url, headers=headers, timeout=NETWORK_TIMEOUT)
    except httpx.HTTPError as exc:
        return None, type(exc).__name__ + (f": {exc}" if str(exc) else "")
    return response.status_code, ""


def _network_target(name: str, config: Config) -> tuple[str, dict[str, str]] | None:
    """The free request that tells whether an API provider answers and takes its key."""
    p = config.provider
    if name in ("openai", "ollama", "openrouter"):
        section = {"openai": p.openai, "ollama": p.ollama, "openrouter": p.openrouter}[name]
        key = section.api_key.get_secret_value()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return section.base_url.rstrip("/") + "/models", headers
    if name == "anthropic":
        base = (p.anthropic.base_url or "https://api.anthropic.com").rstrip("/")
        return base + "/v1/models", {
            "x-api-key": p.anthropic.api_key.get_secret_value(),
            "anthropic-version": "2023-06-01",
        }
    return None


def check_provider(ctx: CheckContext) -> Check:
    """The provider is configured (CLI on PATH, key set, model present) and, with network,
    answers a free request."""
    from omega.providers import build_provider, resolve_provider_name

    known = ctx.provider_name in PROVIDER_NAMES
    name = ctx.provider_name if known else resolve_provider_name(ctx.config)
    try:
        ok, reason = build_provider(name, ctx.config, ctx.paths).availability()
    except Exception as exc:
        ok, reason = False, f"cannot be built: {exc}"
    if not ok:
        return Check(
            f"provider {name}",
            False,
            reason,
            "run `omega init` to choose a provider, or fix [provider] in config.toml",
        )
    target = _network_target(name, ctx.config) if ctx.network else None
    if target is None:
        return Check(f"provider {name}", True, reason)
    url, headers = target
    status, error = _probe_url(url, headers)
    where = f"{urlsplit(url).scheme}://{urlsplit(url).hostname}:{urlsplit(url).port or ''}"
    if status is None:
        return Check(
            f"provider {name}",
            False,
            f"{where.rstrip(':')} does not answer ({error})",
            "check base_url in config.toml and the network (or that the server is running)",
        )
    if status in (401, 403):
        return Check(
            f"provider {name}",
            False,
            f"the API key was refused (HTTP {status})",
            "set a valid api_key with `omega init` or in config.toml",
        )
    return Check(f"provider {name}", True, f"{reason}; answers (HTTP {status})")


def check_sandbox(ctx: CheckContext) -> Check:
    """Commands the model runs are confined as configured; says which walls are up and
    warns about a missing one (bubblewrap, the seccomp filter)."""
    from omega.sandbox import probe

    status = probe(ctx.config.sandbox.mode)
    if status.degraded:
        return Check(
            "sandbox",
            False,
            status.describe(),
            "use Linux 5.13+ with Landlock enabled (or macOS); until then Omega's commands "
            "run unconfined",
        )
    if status.mode == "rwx":
        return Check(
            "sandbox",
            True,
            status.describe(),
            'set [sandbox] mode = "sandbox" to confine commands',
            warning=True,
        )
    if status.missing:
        return Check(
            "sandbox",
            True,
            status.describe(),
            "install bubblewrap (e.g. `apt install bubblewrap`, or run `omega init`)"
            if not status.namespace
            else "",
            warning=True,
        )
    return Check("sandbox", True, status.describe())


def check_disk(ctx: CheckContext) -> Check:
    """Free space where memory.db lives."""
    try:
        free = shutil.disk_usage(ctx.paths.home).free
    except OSError as exc:
        return Check("disk", False, f"cannot tell free space: {exc}", "check the data folder")
    text = f"{free / 1024**3:.1f} GiB free in {ctx.paths.home}"
    if free < MIN_FREE_BYTES:
        return Check("disk", False, text, "free some space: memory.db cannot grow")
    if free < LOW_FREE_BYTES:
        return Check("disk", True, text, "free some space soon", warning=True)
    return Check("disk", True, text)


def check_telegram(ctx: CheckContext) -> Check | None:
    """An enabled Telegram channel has a token and someone allowed to talk (validating the
    token with getMe is the channel's own check)."""
    telegram = ctx.config.channel.telegram
    if not telegram.enabled:
        return None
    if not telegram.bot_token.get_secret_value():
        return Check(
            "telegram",
            False,
            "enabled without a bot token",
            "set [channel.telegram] bot_token (or TELEGRAM_BOT_TOKEN), e.g. with `omega init`",
        )
    if not telegram.allowed_users:
        return Check(
            "telegram",
            True,
            "token set; nobody is allowed to talk yet",
            "add your Telegram user id to [channel.telegram] allowed_users",
            warning=True,
        )
    report = read_health(ctx.paths.channel_health("telegram")) or {}
    if report.get("state") == "token rejected":
        return Check(
            "telegram",
            False,
            "Telegram rejected the bot token (getMe)",
            "set a valid [channel.telegram] bot_token from @BotFather (or TELEGRAM_BOT_TOKEN)",
        )
    account = str(report.get("account") or "")
    return Check("telegram", True, f"token set ({account})" if account else "token set")


def check_whatsapp(ctx: CheckContext) -> Check | None:
    """An enabled WhatsApp channel is paired, as the running channel last reported."""
    if not ctx.config.channel.whatsapp.enabled:
        return None
    report = read_health(ctx.paths.channel_health("whatsapp")) or {}
    account = str(report.get("account") or "")
    state = str(report.get("state") or "")
    if account and state != "logged out":
        return Check("whatsapp", True, f"paired as {account}")
    what = "logged out on the phone" if state == "logged out" else "not paired"
    return Check(
        "whatsapp",
        False,
        what,
        "run `omega start` and scan the QR it prints (WhatsApp > Linked devices), or send "
        "/whatsapp from the terminal or Telegram",
    )


SAID_ELSEWHERE = ("sandbox", "process-root")


def check_security(ctx: CheckContext) -> Check:
    """The security audit's findings (`omega security audit`): critical ones fail, high ones
    warn. The sandbox and running as root are said elsewhere (the sandbox check, the warning
    at every start), so not twice."""
    from omega.ops.security import AuditContext, audit

    report = audit(AuditContext(ctx.config, ctx.paths))
    found = [f for f in report.at_or_above("high") if f.check not in SAID_ELSEWHERE]
    if not found:
        return Check("security", True, "no critical or high finding")
    worst = found[0].severity
    fixable = sum(f.fixable for f in found)
    return Check(
        "security",
        worst != "critical",
        f"{len(found)} {'critical or high' if worst == 'critical' else 'high'} finding(s): "
        + ", ".join(f.id for f in found[:5])
        + (", ..." if len(found) > 5 else ""),
        "run `omega security audit`" + (f" (--fix repairs {fixable} of them)" if fixable else ""),
        warning=worst != "critical",
    )


BUILTIN: dict[str, CheckFn] = {
    "database": check_database,
    "provider": check_provider,
    "sandbox": check_sandbox,
    "disk": check_disk,
    "telegram": check_telegram,
    "whatsapp": check_whatsapp,
    "security": check_security,
}


def run_checks(ctx: CheckContext) -> list[Check]:
    """Every built-in and registered check; one that crashes is a failed check, not an error."""
    checks = {**BUILTIN, **_registered}
    results: list[Check] = []
    for name, fn in checks.items():
        try:
            result = fn(ctx)
        except Exception as exc:
            log.exception("self-check %s crashed", name)
            result = Check(name, False, f"the check itself failed: {exc!r}", "see omega.log")
        if result is not None:
            results.append(result)
    return results


def log_checks(results: list[Check]) -> None:
    """Write the self-check to the log: failures as warnings, the rest as info."""
    for check in results:
        level = logging.INFO if check.ok and not check.warning else logging.WARNING
        log.log(level, "self-check %s", check.line())


def summary(results: list[Check]) -> str:
    """The lines `/status` shows: failures and warnings in full, a count for the rest."""
    bad = [c for c in results if not c.ok or c.warning]
    head = f"Self-check: {len(results) - len(bad)} of {len(results)} ok"
    return "\n".join([head, *(f"- {c.line()}" for c in bad)])
