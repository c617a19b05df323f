"""A person's folder, made sure to be theirs before their tools run in it.

Everyone but the owner works in a folder of their own, `workspace/people/<them>`. Whatever can
write in the workspace (the owner's own tools, a turn the owner was tricked into) could put a
symlink there: `ln -s .. people/telegram-42-<digest>` would hand that person the owner's whole
workspace as their folder, for their shell, their files, the Claude Code CLI and their MCP
servers alike. `confined_folder` is the one check each of those makes first: the folder must be
a real directory beneath the workspace, with no symlink (and nothing but directories) at any step
between them; missing steps are created owner-only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

from omega.errors import OmegaError
from omega.paths import PRIVATE_DIR_MODE

log = logging.getLogger(__name__)

__all__ = ["UnsafeFolderError", "confined_folder"]


class UnsafeFolderError(OmegaError, OSError):
    """A person's folder is outside the workspace, or a symlink or a file is on the way to it."""


def _steps(workspace: Path, folder: Path) -> tuple[Path, tuple[str, ...]]:
    """The base `folder` is spelt from (the workspace as given, or resolved) and the names of
    the steps from it to `folder`; UnsafeFolderError when `folder` is not spelt beneath it."""
    given = Path(os.path.abspath(workspace))
    target = folder if folder.is_absolute() else Path.cwd() / folder
    for base in (given, given.resolve()):
        if target.is_relative_to(base):
            names = target.relative_to(base).parts
            if ".." in names:
                break
            return base, names
    raise UnsafeFolderError("this person's folder is outside the workspace")


def _real_folder(path: Path) -> None:
    """`path`, a step of the way, as a real directory: created owner-only when missing;
    UnsafeFolderError when it is a symlink or anything but a directory."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):  # made meanwhile: looked at like any other
            os.mkdir(path, PRIVATE_DIR_MODE)
        info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFolderError("this person's folder goes through a symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolderError("this person's folder is not a folder")


def confined_folder(workspace: Path, folder: Path) -> Path:
    """`folder`, a person's folder beneath Omega's `workspace`, once it is sure to be a real
    directory there: every step between the two looked at without following it (a missing one
    created owner-only), none a symlink or a file, and the folder's resolved path exactly the
    workspace's followed by those steps. The workspace itself (the owner's) is created when
    missing. UnsafeFolderError, logged, otherwise: the person's tools must then not run."""
    try:
        workspace.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        base, names = _steps(workspace, folder)
        step = base
        for name in names:
            step = step / name
            _real_folder(step)
        if folder.resolve() != base.resolve().joinpath(*names):
            raise UnsafeFolderError("this person's folder is not where it should be")
    except UnsafeFolderError as exc:
        log.warning("refused %s as a person's folder in %s: %s", folder, workspace, exc)
        raise
    except OSError as exc:
        log.warning("refused %s as a person's folder in %s: %s", folder, workspace, exc)
        raise UnsafeFolderError(
            f"this person's folder cannot be made ready: {exc.strerror or exc}"
        ) from None
    return folder
