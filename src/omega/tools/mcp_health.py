"""What each skill's MCP server last did: recorded by the call that ran it (the API tool loop,
which also watches it while it is used, or the `claude` CLI's init report), read by `omega
status`, `/status` and the web Health page, and each trouble reported once to the owner as a
limitation.

A server is in one state: "failed" (it did not start), "running" (a call uses it now),
"restarting" (it exited or stopped answering during use; attempt n of the bounded restarts),
"down" (the restarts failed) or "recovered" (a restart, or a later call, brought it back). A
healthy server that no call uses has no entry. The record is a small owner-only file in
$OMEGA_HOME (status runs in another process; replicas may share the home, so every change is
made under a file lock). A reason is a server's own stderr, so it is kept to one short line
and always shown quoted.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega.paths import PRIVATE_FILE_MODE

log = logging.getLogger(__name__)

HEALTH_NAME = "mcp-servers.json"
LOCK_NAME = ".mcp-servers.lock"
MAX_REASON = 300
PROBE_SECS = 15.0
_TAIL_BYTES = 4096
_LOCK = threading.Lock()
TROUBLE_STATES = ("failed", "restarting", "down", "recovered")
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

Entry = dict[str, Any]


@dataclass(frozen=True)
class ServerFailure:
    """One server's recorded state: its trouble (if any) and how many calls run it now."""

    name: str
    reason: str
    at: float
    reported: bool = False
    state: str = "failed"
    detail: str = ""  # "down": why the restarts failed
    attempt: int = 0  # "restarting": the attempt in progress, of `attempts`
    attempts: int = 0
    running: int = 0  # live instances, in Omega processes still alive

    @property
    def trouble(self) -> bool:
        """Whether this is something to tell the owner about (not just "running")."""
        return self.state in TROUBLE_STATES


def health_path(home: Path) -> Path:
    """The record's file in $OMEGA_HOME."""
    return home / HEALTH_NAME


def one_line(text: str, limit: int = MAX_REASON) -> str:
    """`text` as one printable line of at most `limit` characters, keeping its end (the
    last lines of stderr say why)."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else "…" + flat[-(limit - 1) :]


def _load(home: Path) -> dict[str, Entry]:
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
    """Replace the record at once (a reader never sees half a file), owner-only."""
    path = health_path(home)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not record MCP server health in %s: %s", home, exc)


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    """This process's threads and every other process on the record, one at a time."""
    with _LOCK:
        try:
            fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        except OSError:  # a home we cannot write: the save will say so
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _update(home: Path, change: Callable[[dict[str, Entry]], bool]) -> None:
    """Apply `change` to the record; saved when it says something changed."""
    with _locked(home):
        data = _load(home)
        if change(data):
            _save(home, data)


def _trouble(before: Entry, reason: str, state: str) -> Entry:
    """A new trouble; still reported when the same trouble was reported before."""
    reported = bool(before.get("reported")) and before.get("reason") == reason
    return {"state": state, "reason": reason, "at": time.time(), "reported": reported}


def record_failure(home: Path, name: str, reason: str) -> None:
    """Note that `name` did not start; a known failure with the same reason stays reported."""
    reason = one_line(reason) or "it did not start"

    def change(data: dict[str, Entry]) -> bool:
        before = data.get(name) or {}
        data[name] = {**_trouble(before, reason, "failed"), "live": before.get("live", {})}
        return True

    _update(home, change)
    log.warning("MCP server %s did not start: %s", name, reason)


def _started(entry: Entry) -> Entry:
    """The entry of a server that started: a failure is forgotten, a "down" one recovered, a
    recovery shown in an earlier call is over (the trouble stays known while the server runs,
    so the same trouble again is not reported twice)."""
    state = entry.get("state", "failed")
    if state == "down":
        return {**entry, "state": "recovered", "at": time.time()}
    if state == "restarting" and _running({str(entry.get("by")): 1}):
        return entry  # another call of a live Omega is restarting its own instance
    if state in ("failed", "recovered", "restarting"):
        gone = ["detail", "attempt", "attempts", "by"]
        if state == "failed":
            gone += ["reason", "reported"]
        entry = {k: v for k, v in entry.items() if k not in gone}
        entry["state"] = "running"
    return entry


def record_started(home: Path, names: Sequence[str]) -> None:
    """Forget the failures of servers that started (a server no call here runs, as the
    claude CLI's)."""

    def change(data: dict[str, Entry]) -> bool:
        known = [name for name in names if name in data]
        for name in known:
            after = _started(data.pop(name))
            if after["state"] != "running" or _running(_live(after)):
                data[name] = after
        return bool(known)

    _update(home, change)


def _live(entry: Entry) -> dict[str, int]:
    live = entry.get("live")
    return {str(k): int(v) for k, v in live.items()} if isinstance(live, dict) else {}


def mark_running(home: Path, names: Sequence[str]) -> None:
    """Servers this process started for a call: running (a failure forgotten, as above)."""
    me = str(os.getpid())

    def change(data: dict[str, Entry]) -> bool:
        for name in names:
            entry = _started(data.get(name) or {"state": "running"})
            live = _live(entry)
            live[me] = live.get(me, 0) + 1
            data[name] = {**entry, "live": live}
        return bool(names)

    _update(home, change)


def mark_stopped(home: Path, names: Sequence[str]) -> None:
    """Servers this process stopped at the end of a call; a healthy one no call runs is
    forgotten."""
    me = str(os.getpid())

    def change(data: dict[str, Entry]) -> bool:
        for name in names:
            entry = data.get(name)
            if entry is None:
                continue
            live = _live(entry)
            if live.get(me, 0) > 1:
                live[me] -= 1
            else:
                live.pop(me, None)
            if entry.get("state") == "running" and not _running(live):
                del data[name]
            else:
                data[name] = {**entry, "live": live}
        return bool(names)

    _update(home, change)


def record_trouble(home: Path, name: str, reason: str, attempts: int) -> None:
    """`name` exited or stopped answering during use and is being restarted (attempt 0 of
    `attempts`): reported once, not per attempt; the same trouble again stays reported."""
    reason = one_line(reason)

    def change(data: dict[str, Entry]) -> bool:
        before = data.get(name) or {}
        trouble = _trouble(before, reason, "restarting")
        data[name] = {
            **trouble,
            "attempt": 0,
            "attempts": attempts,
            "by": os.getpid(),
            "live": _live(before),
        }
        return True

    _update(home, change)
    log.warning("MCP server %s: %s; restarting it", name, reason)


def _restate(home: Path, name: str, **fields: object) -> None:
    """Change a recorded trouble's state (the trouble and whether it was reported stay)."""

    def change(data: dict[str, Entry]) -> bool:
        entry = data.get(name)
        if entry is None:
            return False
        data[name] = {**entry, **fields, "at": time.time()}
        return True

    _update(home, change)


def record_attempt(home: Path, name: str, attempt: int) -> None:
    """Restart `attempt` of the trouble's bounded attempts is under way."""
    _restate(home, name, attempt=attempt)


def record_recovered(home: Path, name: str, attempt: int) -> None:
    """The restart worked at `attempt`."""
    _restate(home, name, state="recovered", attempt=attempt)
    log.warning("MCP server %s recovered (restart attempt %d)", name, attempt)


def record_down(home: Path, name: str, detail: str) -> None:
    """Every restart failed; `detail` says why (the server's stderr, or the last error)."""
    detail = one_line(detail) or "it did not start again"
    _restate(home, name, state="down", detail=detail)
    log.warning("MCP server %s is down: %s", name, detail)


def _running(live: Mapping[str, int]) -> int:
    """The instances of live Omega processes (a crashed process's are not counted)."""
    count = 0
    for pid, n in live.items():
        try:
            os.kill(int(pid), 0)
        except (ProcessLookupError, ValueError, OverflowError):  # gone, or no pid at all
            continue
        except PermissionError:  # alive, someone else's
            pass
        count += n
    return count


def failures(home: Path) -> list[ServerFailure]:
    """Every recorded server (in trouble, or running now), oldest first."""
    found = []
    for name, entry in _load(home).items():
        at = entry.get("at")
        found.append(
            ServerFailure(
                name=name,
                reason=str(entry.get("reason") or ""),
                at=float(at) if isinstance(at, int | float) else 0.0,
                reported=bool(entry.get("reported")),
                state=str(entry.get("state") or "failed"),
                detail=str(entry.get("detail") or ""),
                attempt=int(entry.get("attempt") or 0),
                attempts=int(entry.get("attempts") or 0),
                running=_running(_live(entry)),
            )
        )
    return sorted(found, key=lambda f: f.at)


def mark_reported(home: Path, name: str) -> bool:
    """Mark a trouble reported; False when it was already (or is no longer recorded)."""
    marked = False

    def change(data: dict[str, Entry]) -> bool:
        nonlocal marked
        entry = data.get(name)
        if entry is None or entry.get("reported") or not entry.get("reason"):
            return False
        data[name] = {**entry, "reported": True}
        marked = True
        return True

    _update(home, change)
    return marked


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
