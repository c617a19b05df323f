"""A seccomp filter that refuses `socket(AF_UNIX, ...)` with EACCES (Linux, x86-64 and aarch64),
and the kernel's keyrings (`add_key`, `request_key`, `keyctl`) with ENOSYS wherever Landlock is.

Unix sockets with a path (ssh-agent, gpg-agent, D-Bus, docker.sock) are reached by
`connect()`, but seccomp sees only a system call's registers, never the memory a pointer
argument points at: it cannot read `connect()`'s `sockaddr`. So the hook is `socket()`, whose
first argument (the domain) is a plain register. `socketpair()` and pipes stay allowed (asyncio,
libuv and `subprocess` use them); only a new AF_UNIX socket (path or abstract) is refused.
Only the standard library is imported: the launcher installs this in the child before `exec`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

from omega.errors import OmegaError

PR_SET_NO_NEW_PRIVS = 38
PR_GET_SECCOMP = 21
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
AF_UNIX = 1
SYS_SOCKETCALL_SOCKET = 1  # socketcall(2)'s call number for socket()
X32_SYSCALL_BIT = 0x40000000

# BPF opcodes (linux/filter.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little endian).
_NR = 0
_ARCH = 4
_ARG0_LOW = 16


class SeccompError(OmegaError, OSError):
    """The filter could not be built or installed."""


# The native and the compat (32-bit) ABI of each supported machine: (audit arch, socket nr,
# socketcall nr or None).
_ABIS: dict[str, tuple[tuple[int, int, int | None], tuple[int, int, int | None]]] = {
    "x86_64": ((0xC000003E, 41, None), (0x40000003, 359, 102)),  # x86-64 and i386
    "aarch64": ((0xC00000B7, 198, None), (0x40000028, 281, None)),  # arm64 and arm (EABI)
}
# add_key, request_key, keyctl (native, compat): the kernel's keyrings are shared by every
# process of the user (its user keyring: Kerberos tickets, cached passphrases), and neither
# Landlock nor a mount namespace closes them.
_KEYRING: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "x86_64": ((248, 249, 250), (286, 287, 288)),
    "aarch64": ((217, 218, 219), (309, 310, 311)),
}
_MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}


def machine() -> str:
    """This machine's architecture as the filter names it ('' when not supported)."""
    name = platform.machine().lower()
    name = _MACHINES.get(name, name)
    return name if name in _ABIS else ""


Insn = tuple[int, int, str, str]  # opcode, k, label if true, label if false ("": next)


def _assemble(lines: list[Insn | str]) -> list[bytes]:
    """BPF instructions from a list of instructions and label names (jumps go forward)."""
    where: dict[str, int] = {}
    count = 0
    for line in lines:
        if isinstance(line, str):
            where[line] = count
        else:
            count += 1
    out: list[bytes] = []
    for line in lines:
        if isinstance(line, str):
            continue
        code, k, true, false = line
        here = len(out)
        jt = where[true] - here - 1 if true else 0
        jf = where[false] - here - 1 if false else 0
        out.append(struct.pack("=HBBI", code, jt, jf, k))
    return out


def program(arch: str, *, unix: bool = True) -> list[bytes]:
    """The BPF instructions of the filter for `arch` ('x86_64' or 'aarch64'): the kernel's
    keyrings always refused, new Unix sockets too when `unix`."""
    (native, native_socket, _), (compat, compat_socket, socketcall) = _ABIS[arch]
    native_keys, compat_keys = _KEYRING[arch]
    deny: Insn = (_RET_K, SECCOMP_RET_ERRNO | errno.EACCES, "", "")
    no_keys: Insn = (_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS, "", "")
    allow: Insn = (_RET_K, SECCOMP_RET_ALLOW, "", "")
    lines: list[Insn | str] = [
        (_LD_W_ABS, _ARCH, "", ""),
        (_JEQ_K, native, "", "compat"),
        (_LD_W_ABS, _NR, "", ""),
    ]
    if arch == "x86_64":  # x32 calls carry the native arch with bit 30 set: refused outright
        lines.append((_JGE_K, X32_SYSCALL_BIT, "deny", ""))
    lines += [(_JEQ_K, nr, "keys", "") for nr in native_keys]
    lines += [
        (_JEQ_K, native_socket, "domain", "allow") if unix else (_JEQ_K, 0, "allow", "allow"),
        "compat",
        (_JEQ_K, compat, "", "deny"),  # an arch this filter does not know: fail closed
        (_LD_W_ABS, _NR, "", ""),
    ]
    lines += [(_JEQ_K, nr, "keys", "") for nr in compat_keys]
    lines.append((_JEQ_K, compat_socket, "domain" if unix else "allow", ""))
    if socketcall is not None and unix:
        # socketcall(call, args*): the domain sits behind a pointer, so socket() through it
        # is refused whatever the domain (32-bit libcs use the direct call on kernels >= 4.3).
        lines += [
            (_JEQ_K, socketcall, "", "allow"),
            (_LD_W_ABS, _ARG0_LOW, "", ""),
            (_JEQ_K, SYS_SOCKETCALL_SOCKET, "deny", "allow"),
        ]
    else:
        lines.append((_JEQ_K, 0, "allow", "allow"))  # an unconditional jump
    lines += [
        "domain",  # socket(domain, ...): the kernel reads the low 32 bits of args[0]
        (_LD_W_ABS, _ARG0_LOW, "", ""),
        (_JEQ_K, AF_UNIX, "deny", "allow"),
        "allow",
        allow,
        "deny",
        deny,
        "keys",
        no_keys,
    ]
    return _assemble(lines)


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def available() -> bool:
    """Whether this process can install the filter (Linux with seccomp, a known machine)."""
    if not sys.platform.startswith("linux") or not machine():
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_GET_SECCOMP, 0, 0, 0, 0)) >= 0
    except (OSError, AttributeError):
        return False


def refuse_unix_sockets() -> None:
    """Install the filter on this process and whatever it executes; irreversible."""
    install(unix=True)


def install(*, unix: bool) -> None:
    """Install the filter (keyrings refused, new Unix sockets too when `unix`) on this
    process and whatever it executes; irreversible."""
    arch = machine()
    if not sys.platform.startswith("linux") or not arch:
        raise SeccompError(errno.ENOSYS, f"no seccomp filter for {platform.machine()!r}")
    code = b"".join(program(arch, unix=unix))
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        number = ctypes.get_errno()
        raise SeccompError(number, f"prctl(PR_SET_SECCOMP): {os.strerror(number)}")
