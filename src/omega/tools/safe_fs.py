"""Files opened beneath a root folder's descriptor without following a symlink at any step.

A path checked and opened later can be raced: a process of the model's swaps a folder for a
symlink to `..` between the check and the open (issue 24). Here nothing is checked by name
and opened again: on Linux, `openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
RESOLVE_NO_MAGICLINKS resolves the whole path in the kernel; elsewhere, or where the kernel
(or a seccomp filter) refuses `openat2`, every folder is opened one at a time from its parent's
descriptor with O_NOFOLLOW. Files must be regular with one link, checked with `fstat` on the
descriptor that was opened.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import platform
import stat
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from omega.errors import OmegaError

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
# openat2's number is 437 on every architecture with the unified table from 5.6 on; only the
# ones checked are listed, the rest take the component-by-component walk.
_OPENAT2 = {"x86_64": 437, "amd64": 437, "aarch64": 437, "arm64": 437}
_EAGAIN_TRIES = 8

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # Linux: a folder we may only traverse
DIR_MODE = 0o700
FILE_MODE = 0o600


class UnsafePathError(OmegaError, OSError):
    """The path leaves its root, or meets a symlink, a hard link or a special file."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def parts_of(path: str) -> tuple[str, ...]:
    """A model-given relative path as its components ('.' and empty ones dropped); ValueError
    for an empty, absolute or `~` path, a NUL byte or any '..'."""
    raw = path.strip()
    if not raw or "\x00" in raw:
        raise ValueError("give a non-empty path relative to the workspace")
    relative = PurePosixPath(raw)
    if relative.is_absolute() or raw.startswith("~"):
        raise ValueError("an absolute path; use a path relative to the workspace")
    if ".." in relative.parts:
        raise ValueError("contains '..'; paths must stay in the workspace")
    return tuple(part for part in relative.parts if part not in ("", "."))


@functools.cache
def _syscall() -> tuple[Any, int] | None:
    number = _OPENAT2.get(platform.machine().lower())
    if number is None or os.name != "posix":
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return function, number


def _openat2(dir_fd: int, path: str, flags: int, mode: int) -> int:
    """One openat2 call (OSError on failure; EAGAIN from a concurrent rename is retried)."""
    found = _syscall()
    if found is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    function, number = found
    how = _OpenHow(flags | _CLOEXEC, mode if flags & os.O_CREAT else 0, RESOLVE)
    encoded = os.fsencode(path)
    for _ in range(_EAGAIN_TRIES):
        fd = function(
            ctypes.c_long(number),
            ctypes.c_long(dir_fd),
            ctypes.c_char_p(encoded),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            return int(fd)
        code = ctypes.get_errno()
        if code != errno.EAGAIN:
            raise OSError(code, os.strerror(code), path)
    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), path)


@functools.cache
def openat2_available() -> bool:
    """Whether this kernel runs openat2 with the RESOLVE_* flags (not on Linux < 5.6, nor
    under a seccomp filter that refuses it)."""
    try:
        root = os.open("/", os.O_RDONLY | _DIRECTORY)
    except OSError:
        return False
    try:
        os.close(_openat2(root, ".", _PATH | _DIRECTORY, 0))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


_REASONS = {errno.ELOOP: "goes through a symlink", errno.EXDEV: "leads outside its folder"}


def _refusal(exc: OSError, where: str) -> OSError:
    """The kernel's answer as a UnsafePathError where it means a symlink or a way out."""
    if exc.errno in _REASONS:
        return UnsafePathError(exc.errno, f"{where} {_REASONS[exc.errno]}")
    return exc


def _names(parts: Sequence[str]) -> str:
    """`parts` joined for messages; UnsafePathError unless each is a plain name (no '..',
    '.', '/')."""
    where = "/".join(parts) or "."
    if any(part in ("", ".", "..") or "/" in part or "\x00" in part for part in parts):
        raise UnsafePathError(errno.EXDEV, f"{where} {_REASONS[errno.EXDEV]}")
    return where


def _step(dir_fd: int, name: str, flags: int, mode: int) -> int:
    """Open one component beneath `dir_fd`; a symlink there is refused, never followed."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        # O_DIRECTORY | O_NOFOLLOW says ENOTDIR for a symlink: say what it really is.
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            try:
                if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                    raise UnsafePathError(errno.ELOOP, f"{name} is a symlink") from None
            except FileNotFoundError:
                pass
        raise _refusal(exc, name) from None


def _walk(root_fd: int, parts: Sequence[str], *, create: bool) -> int:
    """A descriptor of the folder `parts` beneath `root_fd`, one component at a time,
    creating missing folders (0700) when asked."""
    _names(parts)
    current = os.dup(root_fd)
    try:
        for name in parts:
            try:
                following = _step(current, name, _PATH | _DIRECTORY, 0)
            except FileNotFoundError:
                if not create:
                    raise
                # mkdirat: never through a link; made meanwhile, the open below checks it.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, DIR_MODE, dir_fd=current)
                following = _step(current, name, _PATH | _DIRECTORY, 0)
            os.close(current)
            current = following
        return current
    except BaseException:
        os.close(current)
        raise


def open_beneath(root_fd: int, parts: Sequence[str], flags: int, mode: int = FILE_MODE) -> int:
    """Open `parts` beneath `root_fd` with `flags`, no symlink followed and no step outside
    (openat2, or the component walk where it is missing). UnsafePathError for a symlink or
    a way out."""
    where = _names(parts)
    try:
        if openat2_available():
            try:
                return _openat2(root_fd, where, flags | _NOFOLLOW, mode)
            except NotADirectoryError:
                if flags & _DIRECTORY and _is_symlink(root_fd, where):
                    raise UnsafePathError(errno.ELOOP, "a symlink") from None
                raise
        if not parts:
            return os.open(".", flags | _CLOEXEC, mode, dir_fd=root_fd)
        parent = _walk(root_fd, parts[:-1], create=False)
        try:
            return _step(parent, parts[-1], flags, mode)
        finally:
            os.close(parent)
    except UnsafePathError as exc:
        raise UnsafePathError(
            exc.errno, f"{where} {_REASONS.get(exc.errno or 0, 'is refused')}"
        ) from None
    except OSError as exc:
        raise _refusal(exc, where) from None


def _is_symlink(root_fd: int, where: str) -> bool:
    """Whether `where` beneath `root_fd` (reached without a symlink) is itself a symlink."""
    try:
        probe = _openat2(root_fd, where, _PATH | _NOFOLLOW, 0)
    except OSError:
        return False
    try:
        return stat.S_ISLNK(os.fstat(probe).st_mode)
    finally:
        os.close(probe)


def open_folder(root_fd: int, parts: Sequence[str], *, create: bool = False) -> int:
    """A readable descriptor of the folder `parts` beneath `root_fd` (made 0700 on the way
    when `create`); for `os.scandir` and as a root for further opens."""
    if not create:
        return open_beneath(root_fd, parts, os.O_RDONLY | _DIRECTORY)
    made = _make_folders(root_fd, parts)
    try:
        return os.open(".", os.O_RDONLY | _DIRECTORY | _CLOEXEC, dir_fd=made)
    finally:
        os.close(made)


def _make_folders(root_fd: int, parts: Sequence[str]) -> int:
    """Create the folders `parts` beneath `root_fd` from descriptors (mkdirat), return the last."""
    _names(parts)
    if not openat2_available():
        return _walk(root_fd, parts, create=True)
    current = os.dup(root_fd)
    try:
        for name in parts:
            try:
                following = open_beneath(current, (name,), _PATH | _DIRECTORY)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, DIR_MODE, dir_fd=current)
                following = open_beneath(current, (name,), _PATH | _DIRECTORY)
            os.close(current)
            current = following
        return current
    except BaseException:
        os.close(current)
        raise


def _own_file(fd: int, where: str) -> os.stat_result:
    """fstat of an opened descriptor: a regular file with one link, or UnsafePathError (the
    descriptor then closed)."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, f"{where} is a folder")
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafePathError(errno.EPERM, f"{where} is not a regular file")
    if info.st_nlink != 1:
        os.close(fd)
        raise UnsafePathError(
            errno.EMLINK, f"{where} is a hard link to a file that may be elsewhere"
        )
    return info


def open_for_reading(root_fd: int, parts: Sequence[str]) -> int:
    """A read descriptor of the regular, singly linked file `parts` beneath `root_fd`; a fifo
    or device is refused without blocking (O_NONBLOCK), a folder is IsADirectoryError."""
    fd = open_beneath(root_fd, parts, os.O_RDONLY | _NONBLOCK | _NOCTTY)
    _own_file(fd, "/".join(parts) or ".")
    return fd


def open_for_writing(root_fd: int, parts: Sequence[str]) -> int:
    """A write descriptor of the file `parts` beneath `root_fd`, emptied and made 0600: its
    folders are created from descriptors, and an existing file must be regular with one link."""
    if not parts:
        raise IsADirectoryError(errno.EISDIR, ". is a folder")
    parent = _make_folders(root_fd, parts[:-1])
    try:
        fd = open_beneath(parent, parts[-1:], os.O_WRONLY | os.O_CREAT | _NONBLOCK | _NOCTTY)
    finally:
        os.close(parent)
    _own_file(fd, "/".join(parts))
    try:
        os.ftruncate(fd, 0)  # only now, on the file checked: O_TRUNC would empty a hard link
        os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def unlink_beneath(root_fd: int, parts: Sequence[str]) -> None:
    """Remove the file `parts` beneath `root_fd`, its folders reached without a symlink."""
    if not parts:
        raise IsADirectoryError(errno.EISDIR, ". is a folder")
    _names(parts)
    parent = open_beneath(root_fd, parts[:-1], _PATH | _DIRECTORY)
    try:
        os.unlink(parts[-1], dir_fd=parent)  # unlinkat: a symlink there is removed, not followed
    finally:
        os.close(parent)


def open_root(path: os.PathLike[str] | str) -> int:
    """A descriptor of a trusted folder (a workspace Omega made), the root for the opens above."""
    return os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
