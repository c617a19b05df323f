"""The `claude` CLI's private home for one call, and the pipe its login comes through.

Each call gets a fresh owner-only folder as CLAUDE_CONFIG_DIR, inside the sandbox's private temp
dir of the person's folder (the one place the confined CLI may write besides the folder), removed
when the call ends: never the owner's ~/.claude, so nothing the model writes there (a hook, a
setting, a wrapper) outlives the call or reaches the owner's own `claude`, and no other call's
history is in it. The system prompt is a file there, the prompt goes on stdin: neither is on a
command line another local account could read in /proc/<pid>/cmdline.

The login is written into a pipe whose read end the CLI gets as a file descriptor
(CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR / CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR): the CLI
reads it at start, its children do not inherit the descriptor, and its environment holds only
the descriptor's number.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from omega.paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE
from omega.providers.claude.cli import Credential

CONFIG_PREFIX = "claude-home-"
SYSTEM_PROMPT_NAME = "omega-system-prompt.md"


@contextlib.contextmanager
def private_home(tmpdir: Path) -> Iterator[Path]:
    """A fresh owner-only CLAUDE_CONFIG_DIR inside `tmpdir`, removed afterwards."""
    _real_folder(tmpdir)
    folder = Path(tempfile.mkdtemp(prefix=CONFIG_PREFIX, dir=tmpdir))  # mode 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _real_folder(tmpdir: Path) -> None:
    """Make `tmpdir` a real folder: a symlink (or file) a command put at `.tmp` is removed
    first, so Omega never creates the home (and the system prompt) where it points."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISDIR(os.lstat(tmpdir).st_mode):
            tmpdir.unlink()
    tmpdir.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    if not stat.S_ISDIR(os.lstat(tmpdir).st_mode):  # replaced again meanwhile
        raise OSError(f"{tmpdir} is not a folder")


def write_system_prompt(home: Path, text: str) -> Path:
    """The system prompt as an owner-only file in the private home (for --*-system-prompt-file)."""
    path = home / SYSTEM_PROMPT_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


@contextlib.contextmanager
def login_pipe(login: Credential | None) -> Iterator[tuple[dict[str, str], tuple[int, ...]]]:
    """The variables and descriptors that hand `login` to one CLI process: the secret is
    written into a pipe (whose writing end is closed), the CLI reads it once from the other
    end. Nothing when there is no login."""
    if login is None:
        yield {}, ()
        return
    read_end, write_end = os.pipe()
    try:
        try:
            data = login.secret.encode()
            while data:  # a token is far below a pipe's buffer: this never blocks
                data = data[os.write(write_end, data) :]
        finally:
            os.close(write_end)
        yield {login.fd_var: str(read_end)}, (read_end,)
    finally:
        os.close(read_end)
