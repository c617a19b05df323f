"""The MCP servers of one `claude` call: written to the workspace's `.claude/settings.local.json`
(each started through the sandbox's launcher) for the call, and the owner's file put back after."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import stat
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from omega.providers.base import ProviderError
from omega.sandbox import Sandbox
from omega.sandbox.servers import server_environment
from omega.tools.mcp_health import probe_server, record_failure, record_started
from omega.types import McpServer

log = logging.getLogger(__name__)

SETTINGS_NAME = "settings.local.json"
BACKUP_NAME = "settings.local.json.omega-backup"
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")  # ends up in tool ids and a comma-joined list

# One lock per workspace and event loop: MCP calls rewrite the same settings file.
_MCP_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def mcp_lock(workspace: Path) -> asyncio.Lock:
    """The lock serializing MCP calls in this workspace (asyncio locks belong to one loop)."""
    locks = _MCP_LOCKS.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(workspace.resolve(), asyncio.Lock())


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically replace `path` with `data`, readable only by its owner (`mode`)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), mode)  # a leftover tmp file would keep its old mode
        handle.write(data)
    os.replace(tmp, path)


def server_launch(server: McpServer, sandbox: Sandbox | None) -> tuple[list[str], dict[str, str]]:
    """The argv and environment the CLI starts a server with: through the sandbox's launcher
    (inside the CLI's own, wider sandbox) with the server's read grants, in its folder."""
    argv = [server.command, *server.args]
    env = server_environment(dict(server.env))
    if sandbox is not None and sandbox.mode != "rwx":  # rwx: the CLI's limits are inherited
        paths = sandbox.server_paths(server.command, server.args)
        argv = sandbox.command(argv, extra_read=paths)
        env = sandbox.environment(env)
    return argv, env


async def report_servers(
    statuses: Mapping[str, str],
    servers: Sequence[McpServer],
    sandbox: Sandbox,
    folder: Path,
    base_env: Mapping[str, str],
) -> None:
    """Record what the CLI's init report said of each server: a failed one is started again
    alone (same argv) to learn why, for status and the owner."""
    log.info("claude-code: MCP servers at start: %s", dict(statuses) or "none reported")
    started = [s.name for s in servers if statuses.get(s.name) == "connected"]
    record_started(sandbox.paths.home, started)
    for server in servers:
        if statuses.get(server.name) != "failed":  # "pending": still connecting, not failed
            continue
        argv, env = server_launch(server, sandbox)
        reason = await probe_server(argv, {**base_env, **env}, str(folder))
        record_failure(
            sandbox.paths.home, server.name, reason or "the claude CLI reports it failed"
        )


def _settings_with_servers(
    previous: bytes | None, servers: Sequence[McpServer], sandbox: Sandbox | None = None
) -> bytes:
    """The settings file for this call: the owner's settings (if any) plus our MCP servers,
    each started through the sandbox's launcher (inside the CLI's own, wider sandbox)."""
    settings: dict[str, Any] = {}
    if previous:
        try:
            loaded = json.loads(previous)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            settings = dict(loaded)
    existing = settings.get("mcpServers")
    entries: dict[str, Any] = dict(existing) if isinstance(existing, dict) else {}
    for server in servers:
        argv, env = server_launch(server, sandbox)
        entries[server.name] = {"command": argv[0], "args": argv[1:], "env": env}
    settings["mcpServers"] = entries
    return json.dumps(settings, indent=2).encode()


def _restore_settings(path: Path, previous: bytes | None, mode: int) -> None:
    """Put back the owner's file, or remove ours when there was none."""
    if previous is None:
        path.unlink(missing_ok=True)
    else:
        _write_private(path, previous, mode)


def _recover_crashed_call(claude_dir: Path) -> None:
    """Undo a settings file left behind by a call that died before its cleanup ran."""
    backup = claude_dir / BACKUP_NAME
    if not backup.exists():
        return
    try:
        saved = json.loads(backup.read_text(encoding="utf-8"))
        previous = saved["previous"]
        _restore_settings(
            claude_dir / SETTINGS_NAME,
            None if previous is None else str(previous).encode(),
            int(saved.get("mode", 0o600)),
        )
        log.warning("claude-code: restored %s after an interrupted call", SETTINGS_NAME)
    except (OSError, ValueError, KeyError, TypeError):
        log.exception("claude-code: could not recover %s from its backup", SETTINGS_NAME)
        return
    backup.unlink(missing_ok=True)


@contextlib.contextmanager
def mcp_settings(
    workspace: Path, servers: Sequence[McpServer], sandbox: Sandbox | None = None
) -> Iterator[None]:
    """Write `.claude/settings.local.json` with the servers; restore what was there on exit."""
    claude_dir = workspace / ".claude"
    path = claude_dir / SETTINGS_NAME
    backup = claude_dir / BACKUP_NAME
    created_dir = not claude_dir.is_dir()
    previous: bytes | None = None
    mode = 0o600
    try:
        claude_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _recover_crashed_call(claude_dir)
        if path.is_symlink():
            raise ProviderError(f"{path} is a symlink; not overwriting it")
        if path.exists():
            previous = path.read_bytes()
            mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        raise ProviderError(f"cannot prepare the MCP settings: {exc}") from None
    try:
        # On disk too, so a crash (no finally) can still give the owner their file back.
        # The owner's own file is expected to be UTF-8 JSON; bytes that are not are replaced.
        record = {"previous": None if previous is None else previous.decode(errors="replace")}
        try:
            _write_private(backup, json.dumps({**record, "mode": mode}).encode())
            _write_private(path, _settings_with_servers(previous, servers, sandbox))
        except OSError as exc:
            raise ProviderError(f"cannot write the MCP settings: {exc}") from None
        yield
    finally:
        try:
            _restore_settings(path, previous, mode)
            backup.unlink(missing_ok=True)
            if created_dir:
                with contextlib.suppress(OSError):  # not empty: the CLI put things there
                    claude_dir.rmdir()
        except OSError:
            log.exception("claude-code: could not restore %s", path)


def usable_servers(servers: Sequence[McpServer]) -> tuple[McpServer, ...]:
    """The servers whose names are safe in tool ids; the others are skipped with a warning."""
    usable = []
    for server in servers:
        if _SERVER_NAME.match(server.name):
            usable.append(server)
        else:
            log.warning("claude-code: skipping MCP server with unusable name %r", server.name)
    return tuple(usable)
