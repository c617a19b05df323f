"""A command run on a real pseudo-terminal, answered as a person would: each answer is typed
once its question shows, and a secret only once the terminal stopped echoing (getpass), so a
test sees exactly what the person's screen showed."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import termios
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass
class Answer:
    """Type `text` when `question` (a regex over the screen, whitespace collapsed) shows;
    `hidden`: wait until the terminal no longer echoes."""

    question: str
    text: str
    hidden: bool = False


@dataclass
class Session:
    """What the screen showed and how the command ended."""

    screen: str = ""
    code: int | None = None
    asked: list[str] = field(default_factory=list)


def _flat(text: str) -> str:
    return " ".join(ANSI.sub("", text).replace("\r", "").split())


def _echo_off(fd: int) -> bool:
    try:
        return not termios.tcgetattr(fd)[3] & termios.ECHO
    except termios.error:
        return False


def run_in_terminal(
    argv: list[str],
    env: Mapping[str, str],
    answers: list[Answer],
    optional: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> Session:
    """Run `argv` on a pty and type `answers` in order; a question of `optional` (regex ->
    text) is answered whenever it shows up. Fails when an answer's question never shows."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        try:
            os.execve(argv[0], argv, dict(env))
        finally:
            os._exit(127)
    session = Session()
    raw = ""
    done_at = 0  # where, in the flattened screen, the last answered question ended
    queue = list(answers)
    extra = dict(optional or {})
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    break
                raw += chunk.decode("utf-8", "replace")
            screen = _flat(raw)
            fresh = screen[done_at:]
            for pattern, text in extra.items():
                match = re.search(pattern, fresh)
                if match:
                    session.asked.append(pattern)
                    done_at += match.end()
                    os.write(fd, (text + "\n").encode())
                    fresh = screen[done_at:]
            if queue:
                match = re.search(queue[0].question, fresh)
                if match and (not queue[0].hidden or _echo_off(fd)):
                    answer = queue.pop(0)
                    session.asked.append(answer.question)
                    done_at += match.end()
                    time.sleep(0.05)  # the prompt reads from here on
                    os.write(fd, (answer.text + "\n").encode())
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"timed out; the screen was:\n{_flat(raw)[-3000:]}")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    session.screen = ANSI.sub("", raw).replace("\r", "")
    session.code = os.waitstatus_to_exitcode(status)
    if queue:
        raise AssertionError(
            f"never asked {queue[0].question!r}; the screen was:\n{_flat(raw)[-3000:]}"
        )
    return session
