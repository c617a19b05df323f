"""A small ctypes binding to Linux Landlock (syscalls 444-446, the same on every architecture).

Only the standard library is imported: the launcher runs this in the child before `exec`.
Rights the running kernel does not know are dropped (best effort per ABI), but a ruleset that
cannot be created or enforced raises `LandlockError`: the caller fails closed.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from omega.errors import OmegaError

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

# Filesystem rights, with the ABI that introduced each.
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
# The rights a rule on a non-directory may carry.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = EXECUTE | READ_FILE | READ_DIR
# Everything but creating device nodes (as root, a block device in the workspace is the disk).
WRITE = (
    READ
    | WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
)


class LandlockError(OmegaError, OSError):
    """Landlock is missing, or a ruleset could not be built or enforced."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPortAttr(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _fail(what: str) -> LandlockError:
    errno = ctypes.get_errno()
    return LandlockError(errno, f"{what}: {os.strerror(errno)}")


def abi_version() -> int:
    """The Landlock ABI the kernel offers: 0 when it is absent or disabled (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
        version = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def fs_rights(abi: int) -> int:
    """Every filesystem right the given ABI knows."""
    best = max((v for v in _FS_BY_ABI if v <= abi), default=0)
    return _FS_BY_ABI.get(best, 0)


@dataclass
class Ruleset:
    """Rules to enforce on this process: path hierarchies with rights, TCP ports, scopes."""

    abi: int
    restrict_tcp: bool = False
    paths: list[tuple[str, int]] = field(default_factory=list)
    tcp_connect_ports: list[int] = field(default_factory=list)

    def allow(self, path: str, rights: int) -> None:
        """Allow `rights` on the file or directory hierarchy at `path`."""
        self.paths.append((path, rights))

    def allow_all(self, paths: Iterable[str], rights: int) -> None:
        """Allow `rights` on each path."""
        for path in paths:
            self.allow(path, rights)

    def enforce(self) -> None:
        """Restrict this process (and whatever it executes) to the rules; irreversible."""
        if self.abi < 1:
            raise LandlockError(38, "Landlock is not available on this kernel")
        libc = _libc()
        handled_fs = fs_rights(self.abi)
        attr = _RulesetAttr(handled_access_fs=handled_fs)
        size = 8
        if self.abi >= 4 and self.restrict_tcp:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        if self.abi >= 4:
            size = 16
        if self.abi >= 6:
            attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            size = 24
        fd = int(libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0))
        if fd < 0:
            raise _fail("landlock_create_ruleset")
        try:
            for path, rights in self.paths:
                self._add_path(libc, fd, path, rights & handled_fs)
            if attr.handled_access_net:
                for port in self.tcp_connect_ports:
                    rule = _NetPortAttr(allowed_access=NET_CONNECT_TCP, port=port)
                    if libc.syscall(SYS_ADD_RULE, fd, RULE_NET_PORT, ctypes.byref(rule), 0) < 0:
                        raise _fail(f"landlock_add_rule(port {port})")
            if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
            if libc.syscall(SYS_RESTRICT_SELF, fd, 0) < 0:
                raise _fail("landlock_restrict_self")
        finally:
            os.close(fd)

    @staticmethod
    def _add_path(libc: ctypes.CDLL, ruleset_fd: int, path: str, rights: int) -> None:
        # A place to write was a real folder when the policy was made (its path is resolved):
        # a symlink there now was put by a command since (`.tmp -> $OMEGA_HOME`), and is
        # never followed to grant writing where it points.
        writes = bool(rights & ~READ)
        flags = os.O_PATH | os.O_CLOEXEC | (os.O_NOFOLLOW if writes else 0)
        try:
            target = os.open(path, flags)
        except OSError:
            return  # gone since the policy was computed: nothing to allow
        try:
            mode = os.fstat(target).st_mode
            if stat.S_ISLNK(mode):
                return
            if not stat.S_ISDIR(mode):
                rights &= FILE_RIGHTS
            if not rights:
                return
            rule = _PathBeneathAttr(allowed_access=rights, parent_fd=target)
            if libc.syscall(SYS_ADD_RULE, ruleset_fd, RULE_PATH_BENEATH, ctypes.byref(rule), 0) < 0:
                raise _fail(f"landlock_add_rule({path})")
        finally:
            os.close(target)
