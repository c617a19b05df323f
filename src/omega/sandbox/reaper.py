"""The supervising launcher (Linux): a child subreaper that runs the confined command as its
child and, once the command has ended, kills everything it left behind.

Without bubblewrap's PID namespace nothing else would end what a command leaves (`setsid cmd
&`, `nohup cmd &`, a daemon's double fork: the process group does not hold them). As a child
subreaper the launcher gets every orphan below it re-parented to it, so it can find and kill
them all. It exits as the command did (its exit code, or the signal that ended it).
SIGTERM, SIGINT, SIGHUP and SIGQUIT sent to the launcher are passed on to the command (a
graceful stop, e.g. the MCP SDK's; aborted when still running `TERM_GRACE_SECS` after a
SIGTERM); `ABORT_SIGNAL` (run_shell's timeout and cancel, and the
launcher's parent-death signal: Omega gone) kills the command and everything it started at
once. The command is killed if the launcher itself is (its own parent-death signal).

A module rather than part of launch.py, which runs as a script: imported, it is compiled once.
Only the standard library is imported.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
from collections.abc import Callable

EXIT_REFUSED = 126
EXIT_NOT_FOUND = 127
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Sent to the launcher: kill the command and everything it started, now (run_shell's timeout
# and cancel; also the launcher's parent-death signal, so Omega's death ends them too).
ABORT_SIGNAL = signal.SIGUSR1
# Sent to the launcher: passed on to the command (a graceful stop, e.g. the MCP SDK's SIGTERM).
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
# A command still running this long after a SIGTERM was passed on is aborted: before the MCP
# SDK's SIGKILL to the group (2 s after its SIGTERM) kills the launcher and leaves its orphans.
TERM_GRACE_SECS = 1.0


class _Command:
    """The command the supervising launcher runs as its child, and what it was told."""

    def __init__(self) -> None:
        self.pid = 0  # set in the launcher once forked (0 in the child, and before the fork)
        self.ended = False  # it exited (its zombie not yet reaped: the pid is not reused)
        self.aborted = False


def _prctl(libc: ctypes.CDLL, option: int, value: int) -> None:
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def _handlers(command: _Command, ignored: set[int]) -> dict[int, Callable[[int, object], None]]:
    """The launcher's signal handlers: pass a stop on to the command (not one the launcher
    was started ignoring, which the command ignores too), or abort it all."""

    def forward(signum: int, _frame: object) -> None:
        if command.pid > 0 and not command.ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(command.pid, signum)
            if signum == signal.SIGTERM:  # SIGALRM: abort, unless it has ended by then
                signal.setitimer(signal.ITIMER_REAL, TERM_GRACE_SECS)

    def abort(_signum: int, _frame: object) -> None:
        command.aborted = True
        if command.pid > 0 and not command.ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(command.pid, signal.SIGKILL)  # its descendants follow: `kill_leftovers`

    passed = {int(sig): forward for sig in FORWARDED if sig not in ignored}
    return {**passed, int(ABORT_SIGNAL): abort, int(signal.SIGALRM): abort}


def _children(me: int) -> list[int]:
    """This process's children, its own and the orphans re-parented to it: every process's
    parent read from /proc (/proc/self/task/*/children needs CONFIG_PROC_CHILDREN, which not
    every kernel has); only looked at when some are left."""
    found: list[int] = []
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # after "pid (comm)"
        except (OSError, IndexError):
            continue  # gone meanwhile
        if len(fields) > 1 and fields[1] == str(me).encode():
            found.append(int(name))
    return found


def kill_leftovers() -> None:
    """SIGKILL and reap every descendant of this (subreaper) process until none remains:
    each one killed re-parents its own children here before it can be reaped."""
    me = os.getpid()
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # none left: the usual case, at no cost
        if pid:
            continue  # one had ended: reaped
        killed = 0
        for child in _children(me):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
                killed += 1
        if not killed:
            return  # /proc unreadable: never wait forever on what cannot be found
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, 0)


def _exit_as(status: int) -> int:
    """Exit as the command did: its exit code, or die of the signal that ended it."""
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    sig = os.WTERMSIG(status)
    with contextlib.suppress(ValueError, OSError):
        _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))  # no core of the launcher itself
    with contextlib.suppress(ValueError, OSError):  # SIGKILL has no handler to reset
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    os.kill(os.getpid(), sig)
    return 128 + sig  # pragma: no cover (a signal that did not end this process)


def _run_child(
    command: list[str],
    libc: ctypes.CDLL,
    mask: set[int | signal.Signals],
    ignored: set[int],
    launcher: int,
) -> None:
    """In the forked child: the signals as an exec would have left them (default, or ignored
    as the launcher found them), its mask, death with the launcher, then exec."""
    code = EXIT_REFUSED
    try:
        for sig in (*FORWARDED, ABORT_SIGNAL):
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)
        _prctl(libc, PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != launcher:  # it died before the parent-death signal was set
            return  # (finally: exit)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.execvp(command[0], command)  # noqa: S606 (the point: exec the command as given)
    except OSError as exc:
        print(f"omega sandbox: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        code = EXIT_NOT_FOUND if isinstance(exc, FileNotFoundError) else EXIT_REFUSED
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def become_subreaper(libc: ctypes.CDLL) -> None:
    """Make this process the reaper of every orphan below it, aborting when its parent dies;
    the handlers are in place first, so the parent-death signal is never a plain death."""
    _prctl(libc, PR_SET_CHILD_SUBREAPER, 1)
    _prctl(libc, PR_SET_PDEATHSIG, ABORT_SIGNAL)


def supervise(command: list[str], libc: ctypes.CDLL, parent: int) -> int:
    """Run the (already confined) command as this subreaper's child, pass stops on to it,
    and once it has ended kill everything it left; returns (or dies) as the command did.
    `parent`: the launcher's parent when it started (gone already: nothing is run)."""
    child = _Command()
    blocked = {*FORWARDED, ABORT_SIGNAL}
    ignored = {int(sig) for sig in blocked if signal.getsignal(sig) == signal.SIG_IGN}
    for sig, handler in _handlers(child, ignored).items():
        signal.signal(sig, handler)
    try:
        become_subreaper(libc)
    except OSError as exc:
        print(f"omega sandbox: refusing to run the command unsupervised: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if os.getppid() != parent:  # the parent died before the parent-death signal was set
        return EXIT_REFUSED  # nobody to run it for
    launcher = os.getpid()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # none lost around the fork
    try:
        pid = os.fork()
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        print(f"omega sandbox: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return EXIT_REFUSED
    if pid == 0:
        _run_child(command, libc, mask, ignored, launcher)  # never returns
    child.pid = pid
    if child.aborted:  # asked before the fork
        os.kill(pid, signal.SIGKILL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    status = 0
    while not child.ended:
        # Learn who ended without reaping it: the command's pid stays its own until marked.
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        if info is None:  # pragma: no cover (only with WNOHANG)
            continue
        if info.si_pid == pid:
            child.ended = True
            status = os.waitpid(pid, 0)[1]
        else:
            os.waitpid(info.si_pid, 0)  # an orphan re-parented here ended: reap it
    kill_leftovers()
    return _exit_as(status)
