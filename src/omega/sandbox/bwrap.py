"""Linux: the policy as a bubblewrap (`bwrap`) mount namespace, the wall outside Landlock.

The command sees only what its `Policy` grants, bound at the same paths (so its working
folder, the Landlock rules applied inside and its arguments stay valid): read grants read-only,
write grants read-write, a fresh `/dev`, a new `/proc` of its own PID namespace. `$HOME` and
`$OMEGA_HOME` exist only where a grant lies below them. In `rx` mode `/` is bound read-only and
the protected paths, plus the folders where Unix sockets with a path live (`/tmp`, `/var/tmp`,
`/run`, `/var/run`, `$XDG_RUNTIME_DIR`; `/dev/shm` is part of the fresh `/dev`), are covered
by empty tmpfs. The network namespace stays shared: TCP is filtered by Landlock's port rules.

The launcher enters the namespace itself (it runs `bwrap`, which runs the launcher again to
confine and exec), so a launcher started inside one (an MCP server of the confined `claude`)
stays in it instead of nesting another: there the seccomp filter is always applied.

`--new-session`: every caller already starts its command in a new session without a terminal
(a timeout kills the process group: the outer `bwrap`, whose death takes the PID namespace
down, `--die-with-parent`), so job control is unaffected; it keeps an MCP server started by an
interactive `omega chat` from injecting keystrokes into the owner's terminal (TIOCSTI).
Only the standard library is imported.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache

from omega.sandbox.landlock import WRITE_FILE
from omega.sandbox.modes import SYSTEM_PATHS, Policy, inside, real

# Where path sockets usually live; never shown to a command (its own grants inside excepted).
SOCKET_PLACES = ("/tmp", "/var/tmp", "/run", "/var/run")  # noqa: S108 (hidden, not used)
RESOLV_CONF = "/etc/resolv.conf"
# Provided by bwrap itself (a fresh /dev, a new /proc).
_OWN_MOUNTS = ("/dev", "/proc")
FLAGS = (
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
)
_PROBE_TIMEOUT = 10
# Made in every namespace: a launcher that finds it is inside one already (an MCP server the
# confined `claude` starts) does not nest another; Landlock forbids mounting there anyway.
MARKER = "/run/omega-sandbox"
_MAX_LINKS = 40


def find(path: str | None = None) -> str:
    """The `bwrap` executable on PATH ('' when missing)."""
    return shutil.which("bwrap", path=path) or ""


@cache
def usable(program: str) -> tuple[bool, str]:
    """Whether `program` can build the namespace here (user namespaces may be disabled), and
    why not; asked once per process."""
    argv = [program, *FLAGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return False, reason
    return True, ""


def _own_mount(path: str) -> bool:
    return any(inside(path, m) for m in _OWN_MOUNTS)


def _hide(path: str) -> list[str]:
    """Cover an existing path with nothing: an empty tmpfs, or /dev/null for a file."""
    if os.path.isdir(path):
        return ["--tmpfs", path]  # traversable: later grants may be bound below it
    if os.path.lexists(path):
        return ["--ro-bind", "/dev/null", path]
    return []


class _Builder:
    """The bwrap arguments, with what is visible so far (to know what needs covering)."""

    def __init__(self) -> None:
        self.args: list[str] = list(FLAGS)
        # Mounts in the order bwrap makes them: (shown, path). A later mount covers what an
        # earlier one made visible below it, and a bind below a cover shows its path again.
        self.layers: list[tuple[bool, str]] = []

    def visible(self, path: str) -> bool:
        """Whether `path` is shown: the last mount at or above it is a bind."""
        for shown, mounted in reversed(self.layers):
            if inside(path, mounted):
                return shown
        return False

    def bind(self, option: str, path: str) -> None:
        if not path or _own_mount(path) or not os.path.lexists(path):
            return
        if os.path.islink(path):  # /bin -> usr/bin: the same link, and its target bound
            self.args += ["--symlink", os.readlink(path), path]
            path = real(path)
            if self.visible(path) or _own_mount(path):
                return
        self.args += [option, path, path]
        self.layers.append((True, path))

    def hide(self, path: str) -> None:
        if path and not _own_mount(path) and self.visible(path):
            self.args += _hide(path)
            self.layers.append((False, path))


def arguments(
    policy: Policy, *, runtime_dir: str = "", program: str = "", resolv_conf: str = RESOLV_CONF
) -> list[str]:
    """The `bwrap` options (before the command) that show a command only what `policy`
    grants; `runtime_dir` is $XDG_RUNTIME_DIR (hidden with the other socket places);
    `program` is the command's executable, whose symlinks are recreated where they are not
    shown (npm's `node_modules/.bin/claude`: Landlock follows them without a grant)."""
    places = [real(p) for p in SOCKET_PLACES if os.path.lexists(p)]
    if runtime_dir:
        places.append(real(runtime_dir))
    closed = [*policy.exclude, *([policy.home] if policy.home else [])]
    build = _Builder()
    for path in policy.read:
        if any(inside(real(path), c) for c in closed):
            continue
        if path in SYSTEM_PATHS and any(inside(real(path), p) for p in places):
            continue  # /run/systemd/resolve: only resolv.conf's target (below), no sockets
        build.bind("--ro-bind-try", path)
    build.args += ["--dev", "/dev", "--proc", "/proc"]
    for path in [*places, *closed]:
        build.hide(path)
    for path in policy.read_own:
        if not any(inside(real(path), e) for e in policy.exclude):
            build.bind("--ro-bind-try", path)
    for path in policy.exclude:
        build.hide(path)
    # rx reads "/" and then covers the socket places (/tmp, /run): a command's own grant that
    # lies in one (an MCP server's script below /tmp) is shown again, as `sandbox` shows it.
    for path in policy.read:
        if path == "/" or path in SYSTEM_PATHS or build.visible(path):
            continue
        # Never one inside a closed place, nor one holding it or a socket place (/tmp itself
        # stays covered, as in `sandbox`): that would show them again.
        held = [*closed, *places]
        if not any(inside(real(path), c) for c in closed) and not any(
            inside(h, real(path)) for h in held
        ):
            build.bind("--ro-bind-try", path)
    target = real(resolv_conf)
    shown = not any(inside(target, e) for e in policy.exclude) and not build.visible(target)
    if os.path.isfile(target) and shown and any(inside(target, p) for p in places):
        build.bind("--ro-bind-try", target)
    for path in policy.write:
        build.bind("--bind-try", path)
    for path, rights in policy.files:
        build.bind("--bind-try" if rights & WRITE_FILE else "--ro-bind-try", path)
    # A program folder inside a writable grant stays read-only (stricter than Landlock, which
    # can only add rights): what the command may not change cannot be replaced for later.
    for path in policy.read_own:
        if any(inside(real(path), w) and real(path) != w for w in policy.write):
            build.bind("--ro-bind-try", path)
    if program:
        _links(build, program)
    return build.args


def _links(build: _Builder, program: str) -> None:
    """Recreate the symlinks leading to `program` that the namespace does not show."""
    path = os.path.abspath(program)
    for _ in range(_MAX_LINKS):
        if not os.path.islink(path):
            return
        target = os.readlink(path)
        shown = os.path.join(real(os.path.dirname(path)), os.path.basename(path))
        if not build.visible(shown):  # (/bin/sh: /bin is a link to /usr/bin, which is shown)
            build.args += ["--symlink", target, path]
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))


def wrap(namespace: Sequence[str], argv: Sequence[str]) -> list[str]:
    """`argv` run in the namespace (`bwrap` and its options from `arguments`)."""
    return [*namespace, "--dir", MARKER, "--", *argv]


def inside_one() -> bool:
    """Whether this process already runs confined in a namespace Omega made: the marker is
    there and the process may not gain privileges (a stray /run/omega-sandbox on the host
    alone never switches the namespace off)."""
    if not os.path.isdir(MARKER):
        return False
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            return any(line.split() == ["NoNewPrivs:", "1"] for line in status)
    except OSError:
        return False
