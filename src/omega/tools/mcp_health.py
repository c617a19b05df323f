"""Which skills' MCP servers did not start, and why: recorded by the call that tried (the API
tool loop, or the `claude` CLI's init report), read by `omega status` and `/status`, and
reported once to the owner as a limitation.

The record is a small owner-only file in $OMEGA_HOME (status runs in another process). The
reason is a server's own stderr, so it is kept to one short line and always shown quoted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from omega.paths import write_private

log = logging.getLogger(__name__)

HEALTH_NAME = "mcp-servers.json"
MAX_REASON = 300
PROBE_SECS = 15.0
_TAIL_BYTES = 4096
_LOCK = threading.Lock()
# What a server is asked first: any answer on stdout means it started.
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "omega-probe", "version": "1"},
    },
}


@dataclass(frozen=True)
class ServerFailure:
    """One server that did not start the last time it was tried."""

    name: str
    reason: str
    at: float
    reported: bool = False


def health_path(home: Path) -> Path:
    """The record's file in $OMEGA_HOME."""
    return home / HEALTH_NAME


def one_line(text: str, limit: int = MAX_REASON) -> str:
    """`text` as one printable line of at most `limit` characters, keeping its end (the
    last lines of stderr say why)."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else "…" + flat[-(limit - 1) :]


def _load(home: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(health_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return (
        {str(k): v for k, v in data.items() if isinstance(v, dict)}
        if isinstance(data, dict)
        else {}
    )


def _save(home: Path, data: Mapping[str, object]) -> None:
    try:
        write_private(health_path(home), json.dumps(data, indent=1))
    except OSError as exc:
        log.warning("could not record MCP server health in %s: %s", home, exc)


def record_failure(home: Path, name: str, reason: str) -> None:
    """Note that `name` did not start; a known failure with the same reason stays reported."""
    reason = one_line(reason) or "it did not start"
    with _LOCK:
        data = _load(home)
        before = data.get(name) or {}
        reported = bool(before.get("reported")) and before.get("reason") == reason
        data[name] = {"reason": reason, "at": time.time(), "reported": reported}
        _save(home, data)
    log.warning("MCP server %s did not start: %s", name, reason)


def record_started(home: Path, names: Sequence[str]) -> None:
    """Forget the failures of servers that started."""
    with _LOCK:
        data = _load(home)
        if any(name in data for name in names):
            _save(home, {k: v for k, v in data.items() if k not in names})


def failures(home: Path) -> list[ServerFailure]:
    """The servers that did not start the last time, oldest first."""
    found = []
    for name, entry in _load(home).items():
        at = entry.get("at")
        found.append(
            ServerFailure(
                name=name,
                reason=str(entry.get("reason") or ""),
                at=float(at) if isinstance(at, int | float) else 0.0,
                reported=bool(entry.get("reported")),
            )
        )
    return sorted(found, key=lambda f: f.at)


def mark_reported(home: Path, name: str) -> bool:
    """Mark a failure reported; False when it was already (or is no longer recorded)."""
    with _LOCK:
        data = _load(home)
        entry = data.get(name)
        if entry is None or entry.get("reported"):
            return False
        data[name] = {**entry, "reported": True}
        _save(home, data)
    return True


def status_lines(home: Path) -> list[tuple[str, str]]:
    """(`mcp <name>`, state) for status: each server that did not start, with its reason."""
    return [(f"mcp {f.name}", f'did not start: "{f.reason}"') for f in failures(home)]


async def probe_server(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, wait_secs: float = PROBE_SECS
) -> str:
    """Why a server (already wrapped in the sandbox) does not start: its stderr's end when it
    exits or stays silent to `initialize`; "" when it answers."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return f"cannot run {argv[0]}: {exc.strerror or exc}"
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write((json.dumps(_INITIALIZE) + "\n").encode())
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        answered = bool(await asyncio.wait_for(proc.stdout.readline(), wait_secs))
        verdict = "" if answered else f"it exited (status {await proc.wait()})"
    except TimeoutError:
        verdict = f"no answer to initialize within {wait_secs:.0f} s"
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, 9)
        await proc.wait()
    if not verdict:
        return ""
    tail = (await proc.stderr.read())[-_TAIL_BYTES:].decode(errors="replace")
    return one_line(f"{verdict}: {tail}" if tail.strip() else verdict)
