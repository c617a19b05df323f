"""Checks of what confines the model's processes: the sandbox's walls, the keys in the
environment those processes would inherit, what skills' MCP servers may write and reach, and
the claude CLI's permission mode and its own login folder."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Mapping

from omega.ops.security.model import AuditContext, Finding, Severity
from omega.ops.security.pins import loaded_skills
from omega.providers import chain_names, resolve_provider_name
from omega.providers.claude.cli import cli_environment, tool_mode
from omega.providers.claude.home import CONFIG_PREFIX
from omega.sandbox import Sandbox
from omega.sandbox.runner import TMP_NAME
from omega.tools import tool_environment

# Variable names that usually hold a credential, and values that carry one in a URL.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE", re.I)
_URL_CREDENTIALS = re.compile(r"://[^/\s:@]+:[^/\s@]+@")


# The CLI's mode -> how bad: bypassPermissions with nothing around it is high; the CLI's own
# acceptEdits (no sandbox here) and the owner's allowed_tools are low; confined is info.
CLAUDE_MODE_SEVERITY: dict[str, Severity] = {
    "unrestricted": "high",
    "restricted": "low",
    "configured": "low",
}


def looks_secret(name: str, value: str) -> bool:
    """Whether a variable looks like it holds a credential (by its name or a URL's password)."""
    return bool(_SECRET_NAME.search(name) or _URL_CREDENTIALS.search(value))


def check_sandbox(ctx: AuditContext) -> list[Finding]:
    """The configured mode is enforced here, and which walls are up."""
    status = ctx.sandbox
    line = status.describe()
    if status.degraded:
        return [
            Finding(
                "sandbox",
                "critical",
                "the OS sandbox is not enforced",
                f"{line}: commands the model runs can read config.toml and memory.db",
                "use Linux 5.13+ with Landlock enabled (or macOS)",
            )
        ]
    if status.mode == "rwx":
        return [
            Finding(
                "sandbox",
                "high",
                "the sandbox is off (rwx)",
                f"{line}",
                'set [sandbox] mode = "sandbox" in config.toml',
            )
        ]
    if status.missing:
        return [
            Finding(
                "sandbox",
                "medium",
                "a sandbox wall is missing",
                line,
                "install bubblewrap (e.g. `apt install bubblewrap`, or run `omega init`)"
                if not status.namespace
                else "use a kernel with seccomp",
            )
        ]
    return [Finding("sandbox", "info", "sandbox walls up", line)]


def _claude_in_use(ctx: AuditContext) -> bool:
    name = resolve_provider_name(ctx.config, ctx.environ)
    return "claude-code" in chain_names(name, ctx.config)


def _passed(ctx: AuditContext) -> dict[str, tuple[str, Mapping[str, str]]]:
    """Who gets which part of the environment: {variable: (who, that environment)}."""
    found: dict[str, tuple[str, Mapping[str, str]]] = {}
    for name, value in tool_environment(ctx.environ).items():
        found[name] = ("every command the model runs (run_shell)", {name: value})
    if _claude_in_use(ctx):
        for name, value in cli_environment(ctx.environ).items():
            found.setdefault(name, ("the claude CLI and the commands it runs", {name: value}))
    return found


def check_environment(ctx: AuditContext) -> list[Finding]:
    """No credential in Omega's environment reaches a process the model runs."""
    found = []
    for name, (who, env) in sorted(_passed(ctx).items()):
        if not looks_secret(name, env[name]):
            continue
        found.append(
            Finding(
                "env-keys",
                "high",
                f"{name} reaches the model's processes",
                f"{name} is set in Omega's environment and is passed to {who}; "
                "a command the model runs can read it",
                f"unset {name} before starting Omega"
                + (
                    " (give the CLI its login with [provider.claude-code] oauth_token or "
                    "api_key, which go through a pipe)"
                    if name.startswith(("ANTHROPIC_", "CLAUDE_"))
                    else " (or remove the password from the proxy URL)"
                ),
                subject=name,
            )
        )
    return found


def _landlock_abi(ctx: AuditContext) -> int:
    found = re.search(r"landlock ABI (\d+)", ctx.sandbox.enforcement)
    return int(found.group(1)) if found else 0


def check_mcp_servers(ctx: AuditContext) -> list[Finding]:
    """What each MCP server that loads may write and reach, as the sandbox gives it."""
    sandbox = Sandbox(ctx.config.sandbox, ctx.paths, environ=ctx.environ, status=ctx.sandbox)
    ports = sandbox.tcp_ports("tool")
    tcp_filtered = ctx.sandbox.enforcement == "seatbelt" or _landlock_abi(ctx) >= 4
    found = []
    for skill in loaded_skills(ctx):
        if not skill.available:
            continue  # its programs are missing here: its servers never start
        for server in skill.mcp_servers:
            secrets = [k for k, v in server.env if looks_secret(k, v)]
            floating = any(a.endswith("@latest") for a in server.args)
            severity: Severity
            if not ctx.confined:
                severity, reach = "high", "runs unconfined: it can write and read all you can"
            elif not ports and tcp_filtered:
                severity, reach = "info", "may write the person's folder only, and no network"
            else:
                net = f"TCP ports {', '.join(map(str, ports))}" if tcp_filtered else "any TCP port"
                severity, reach = "low", f"may write the person's folder and reach {net}"
            notes, fixes = [], []
            if not ctx.confined:
                fixes.append('set [sandbox] mode = "sandbox"')
            elif severity == "low":
                fixes.append("narrow [sandbox] tcp_ports to what your servers need")
            if secrets:
                notes.append(f"the skill hands it {', '.join(secrets)}")
                fixes.append("give it a token scoped to what it needs")
                severity = "medium" if severity != "high" else severity
            if floating:
                notes.append("it starts whatever version is latest (@latest)")
                fixes.append("pin the package's version in the skill")
                severity = "low" if severity == "info" else severity
            # an argument may carry a credential (--api-key=...): shown masked
            argv = [server.command, *("***" if looks_secret(a, a) else a for a in server.args)]
            found.append(
                Finding(
                    "mcp-servers",
                    severity,
                    f"MCP server {server.name} of skill {skill.name}",
                    f"{' '.join(argv)}: {reach}" + "".join(f"; {note}" for note in notes),
                    "; ".join(fixes),
                    subject=f"{skill.name}/{server.name}",
                )
            )
    return found


def _leftover_homes(ctx: AuditContext) -> list[Finding]:
    """Private CLAUDE_CONFIG_DIRs a killed call left in the workspace (a running call's are
    younger than the CLI's timeout), where later commands the model runs can read them."""
    limit = time.time() - ctx.config.provider.claude_code.timeout_secs - 60
    tmpdirs = [ctx.paths.workspace / TMP_NAME, *ctx.paths.workspace.glob(f"people/*/{TMP_NAME}")]
    old = [
        folder
        for tmpdir in tmpdirs
        for folder in tmpdir.glob(CONFIG_PREFIX + "*")
        if folder.is_dir() and folder.lstat().st_mtime < limit
    ]
    if not old:
        return []
    return [
        Finding(
            "claude-cli",
            "medium",
            f"{len(old)} leftover claude CLI home(s) in the workspace",
            f"{old[0]}{' and others' if len(old) > 1 else ''}: a call that was killed left its "
            "private CLAUDE_CONFIG_DIR (settings, history, maybe its session) where later "
            "commands the model runs can read it",
            "delete them while Omega is stopped: rm -r " + " ".join(str(p) for p in old[:3]),
            subject="leftover-homes",
        )
    ]


def check_claude(ctx: AuditContext) -> list[Finding]:
    """The claude CLI's permission mode here, and that its own login folder is private."""
    if not _claude_in_use(ctx):
        return []
    mode = tool_mode(ctx.config.provider.claude_code, ctx.sandbox, root=ctx.euid == 0)
    # configured: exactly the owner's allowed_tools; restricted: the CLI's own acceptEdits.
    severity = CLAUDE_MODE_SEVERITY.get(mode.name, "info")
    found = [
        Finding(
            "claude-cli",
            severity,
            f"claude CLI: {mode.permission_mode} ({mode.name})",
            mode.describe() + "; each call gets a fresh private CLAUDE_CONFIG_DIR, never ~/.claude",
            'set [sandbox] mode = "sandbox" so the OS sandbox confines the CLI'
            if mode.name in ("unrestricted", "restricted")
            else "",
            subject="mode",
        )
    ]
    found += _leftover_homes(ctx)
    home = ctx.user_home
    for name in (".claude", ".claude.json"):
        path = home / name if home is not None else None
        if path is None or not path.exists() or path.is_symlink():
            continue
        mode_bits = stat.S_IMODE(os.lstat(path).st_mode)
        if mode_bits & 0o077:
            found.append(
                Finding(
                    "claude-cli",
                    "medium",
                    f"~/{name} can be read by others",
                    f"{path} (your own claude login and history) has mode {mode_bits:04o}",
                    f"chmod {'0700' if path.is_dir() else '0600'} {path}",
                    subject=name,
                )
            )
    return found
