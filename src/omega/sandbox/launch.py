"""The launcher: `python -I launch.py <policy json> -- command args...`.

It confines itself (resource limits, root's capabilities dropped, Landlock, the seccomp filter
refusing new Unix sockets) and then executes the command, which inherits every restriction;
nothing it runs can lift them. When the policy asks for Landlock or the filter and either
cannot be enforced, the command is not run (exit 126): fail closed. When the policy names a
bubblewrap namespace, the launcher first runs `bwrap`, which runs the launcher again inside it
(see bwrap.py). Only the standard library and the stdlib-only sandbox modules are imported.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys
from dataclasses import replace
from pathlib import Path

if __package__ in (None, ""):  # run as a file with -I: find the `omega` package it belongs to
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from omega.sandbox.bwrap import inside_one, wrap
from omega.sandbox.landlock import LandlockError, abi_version
from omega.sandbox.modes import Policy, ruleset
from omega.sandbox.seccomp import SeccompError, refuse_unix_sockets

EXIT_REFUSED = 126
EXIT_NOT_FOUND = 127
PR_CAPBSET_DROP = 24
LAST_CAP = 63
_RLIMITS = {
    "cpu_secs": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "file_size_bytes": resource.RLIMIT_FSIZE,
}


def _user_processes() -> int:
    """How many processes this real user runs now (RLIMIT_NPROC counts them all)."""
    uid = os.getuid()
    count = 0
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    count += entry.stat().st_uid == uid
                except OSError:
                    continue
    except OSError:
        return 0
    return count


def _lower(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value))


def apply_limits(limits: dict[str, int]) -> None:
    """Lower CPU time, address space, file size and process count to the policy's limits
    (0 or absent: unchanged). Processes are counted on top of the user's running ones."""
    for name, kind in _RLIMITS.items():
        if limits.get(name, 0) > 0:
            _lower(kind, limits[name])
    extra = limits.get("processes", 0)
    if extra > 0 and hasattr(resource, "RLIMIT_NPROC"):
        _lower(resource.RLIMIT_NPROC, _user_processes() + extra)


def drop_root_capabilities() -> None:
    """As root, empty the capability bounding set so the command cannot regain them on exec
    (no raw disk or kernel memory access, no mounts); a no-op for other users."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(LAST_CAP + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last cap


def main(argv: list[str] | None = None) -> int:
    """Confine this process as the policy says, then exec the command (returns only on error)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[1] != "--":
        print("usage: launch.py <policy json> -- command [args...]", file=sys.stderr)
        return 2
    command = args[2:]
    try:
        policy = Policy.from_json(args[0])
        if policy.namespace and not inside_one():
            inner = replace(policy, namespace=())  # the launcher again, inside: confine, exec
            launcher = [sys.executable, "-I", "-B", str(Path(__file__).resolve())]
            argv = wrap(policy.namespace, [*launcher, inner.to_json(), "--", *command])
            os.execv(argv[0], argv)  # noqa: S606 (bwrap, as the policy names it)
        if policy.namespace:  # in a namespace already (a command of the confined `claude`)
            policy = replace(policy, namespace=(), unix_filter=True)
        apply_limits(policy.limits)
        if policy.mode != "rwx":
            drop_root_capabilities()
        if policy.landlock:
            ruleset(policy, abi_version()).enforce()
        if policy.unix_filter:
            refuse_unix_sockets()  # last: the launcher itself needs no socket after this
    except (LandlockError, SeccompError, OSError, ValueError, KeyError, TypeError) as exc:
        print(f"omega sandbox: refusing to run the command unconfined: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    try:
        os.execvp(command[0], command)  # noqa: S606 (the point: exec the command as given)
    except OSError as exc:
        print(f"omega sandbox: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return EXIT_NOT_FOUND if isinstance(exc, FileNotFoundError) else EXIT_REFUSED
    return EXIT_REFUSED  # pragma: no cover (execvp does not return)


if __name__ == "__main__":
    sys.exit(main())
