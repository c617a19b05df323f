"""The launcher: `python -I launch.py <policy json> -- command args...`.

It confines itself (resource limits, root's capabilities dropped, Landlock, the seccomp filter
refusing new Unix sockets) and then runs the command, which inherits every restriction;
nothing it runs can lift them. When the policy asks for Landlock or the filter and either
cannot be enforced, the command is not run (exit 126): fail closed. When the policy names a
bubblewrap namespace, the launcher first runs `bwrap`, which runs the launcher again inside it
(see bwrap.py). Only the standard library and the stdlib-only sandbox modules are imported.

On Linux outside bubblewrap's PID namespace (no bwrap, or unprivileged user namespaces off)
nothing else would end what a command leaves behind (`setsid cmd &`, `nohup cmd &`): there
the launcher stays, as a child subreaper, runs the confined command as its child and kills
every descendant left when it ends, on `ABORT_SIGNAL` or when Omega dies (reaper.py).
Inside bubblewrap's namespace (and on macOS) the launcher executes the command in its place,
as before: the namespace dies with the command.
"""

from __future__ import annotations

import contextlib
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
from omega.sandbox.reaper import EXIT_NOT_FOUND, EXIT_REFUSED, supervise
from omega.sandbox.seccomp import SeccompError, install
from omega.sandbox.seccomp import available as seccomp_available

PR_CAPBSET_DROP = 24
LAST_CAP = 63
_CAPABILITY_VERSION_3 = 0x20080522
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


def apply_limits(limits: dict[str, int], *, kept: int = 0) -> None:
    """Lower CPU time, address space, file size and process count to the policy's limits
    (0 or absent: unchanged). Processes are counted on top of the user's running ones and the
    `kept` ones the launcher adds beside the command (1 when it supervises it)."""
    for name, kind in _RLIMITS.items():
        if limits.get(name, 0) > 0:
            _lower(kind, limits[name])
    extra = limits.get("processes", 0)
    if extra > 0 and hasattr(resource, "RLIMIT_NPROC"):
        _lower(resource.RLIMIT_NPROC, _user_processes() + kept + extra)


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def drop_root_capabilities() -> None:
    """As root, empty the capability bounding set so the command cannot regain them on exec
    (no raw disk or kernel memory access, no mounts), and this process's own sets, so a
    launcher that stays beside its command (`supervise`) keeps none either; a no-op for
    other users."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(LAST_CAP + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last cap
    nothing = (_CapData * 2)()  # two 32-bit halves, all zero
    libc.capset(ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), nothing)


def prefer_for_oom() -> None:
    """Offer this process, and all it runs, first to the kernel's OOM killer (score 1000): a
    command that eats the memory ends before Omega does. Raising one's own score needs no
    privilege; where /proc cannot say so, nothing changes."""
    with contextlib.suppress(OSError):
        Path("/proc/self/oom_score_adj").write_text("1000\n")


def _supervises(policy: Policy) -> bool:
    """Whether the launcher stays to supervise the command: on Linux, except directly inside
    the bubblewrap namespace it made (its PID namespace dies with the command, and all in it).
    A launcher nested in one (an MCP server of the confined `claude`) does supervise."""
    if not sys.platform.startswith("linux"):
        return False
    return bool(policy.namespace) or not inside_one()


def main(argv: list[str] | None = None) -> int:
    """Confine this process as the policy says, then run the command: exec it, or on Linux
    without bubblewrap's namespace supervise it (returns its exit code, or on error)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[1] != "--":
        print("usage: launch.py <policy json> -- command [args...]", file=sys.stderr)
        return 2
    command = args[2:]
    parent = os.getppid()
    try:
        policy = Policy.from_json(args[0])
        prefer_for_oom()  # before bubblewrap: inherited by it and everything below
        if policy.namespace and not inside_one():
            inner = replace(policy, namespace=())  # the launcher again, inside: confine, exec
            launcher = [sys.executable, "-I", "-B", str(Path(__file__).resolve())]
            argv = wrap(policy.namespace, [*launcher, inner.to_json(), "--", *command])
            os.execv(argv[0], argv)  # noqa: S606 (bwrap, as the policy names it)
        supervised = _supervises(policy)
        if policy.namespace:  # in a namespace already (a command of the confined `claude`)
            policy = replace(policy, namespace=(), unix_filter=True)
        apply_limits(policy.limits, kept=int(supervised))
        if policy.mode != "rwx":
            drop_root_capabilities()
        if policy.landlock:
            ruleset(policy, abi_version()).enforce()
        # Last: the launcher itself needs no socket after this. The kernel's keyrings (the
        # user's, shared by all its processes) are refused wherever Landlock is applied.
        if policy.unix_filter or (policy.landlock and seccomp_available()):
            install(unix=policy.unix_filter)
    except (LandlockError, SeccompError, OSError, ValueError, KeyError, TypeError) as exc:
        print(f"omega sandbox: refusing to run the command unconfined: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if supervised:
        return supervise(command, ctypes.CDLL(None, use_errno=True), parent)
    try:
        os.execvp(command[0], command)  # noqa: S606 (the point: exec the command as given)
    except OSError as exc:
        print(f"omega sandbox: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return EXIT_NOT_FOUND if isinstance(exc, FileNotFoundError) else EXIT_REFUSED
    return EXIT_REFUSED  # pragma: no cover (execvp does not return)


if __name__ == "__main__":
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)  # no interpreter teardown: a supervising launcher ends with its command
