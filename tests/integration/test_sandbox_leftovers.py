"""Nothing a command starts outlives it without bubblewrap (the Landlock-only walls: bwrap
missing, or unprivileged user namespaces off), where no PID namespace dies with the command.

The launcher then stays as a child subreaper: orphans (`setsid cmd &`, `nohup cmd &`, a double
fork) are re-parented to it and killed when the command ends, on run_shell's timeout or cancel,
when the launcher is told to stop, and when Omega (its parent) dies. Each leftover is found by a
unique marker in its command line (`sleep 7771.<pid>`), also while it is still on its way
there (a forked shell, `setsid`, `nohup`), waiting on a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox, SandboxStatus
from omega.tools.builtin import BuiltinTools
from omega.tools.context import FailedOutput, ToolError

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

PY = sys.executable
LANDLOCK_ONLY = SandboxStatus("sandbox", "landlock ABI 7", degraded=False)
DEADLINE = 10.0


def _marker(base: int) -> str:
    """A `sleep` command line no other test (nor another run at the same time) has."""
    return f"sleep {base}.{os.getpid()}"


def _running(marker: str) -> list[int]:
    """The processes whose command line holds `marker`: the `sleep`, and on its way there the
    forked shell, `setsid` or `nohup` (a zombie has no command line; this process never
    holds one)."""
    pattern = re.compile(re.escape(marker) + r"(?!\d)")
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and pattern.search(_cmdline(int(name))):
            found.append(int(name))
    return found


def _sleeping(marker: str) -> bool:
    """Whether the marked `sleep` itself runs (not only the commands on the way to it)."""
    return any(_cmdline(pid) == marker for pid in _running(marker))


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _wait_until(condition: Callable[[], object], secs: float = DEADLINE) -> bool:
    """Whether `condition` holds within `secs` (looked at every 50 ms)."""
    deadline = time.monotonic() + secs
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _gone(marker: str) -> bool:
    return _wait_until(lambda: not _running(marker))


@pytest.fixture
def markers() -> Iterator[list[str]]:
    """The markers a test uses; whatever still runs under one is killed afterwards."""
    used: list[str] = []
    yield used
    for marker in used:
        for pid in _running(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    home = tmp_path / "omega-home"
    OmegaPaths(home).ensure()
    return Sandbox(SandboxSection(mode="sandbox"), OmegaPaths(home), status=LANDLOCK_ONLY)


@pytest.fixture
def tools(sandbox: Sandbox) -> BuiltinTools:
    return BuiltinTools(sandbox.workspace, sandbox=sandbox)


QUIET = ">/dev/null 2>&1 </dev/null"
DETACHED = {
    "setsid": (7771, "setsid {m} " + QUIET + " & echo started", "exit code 0\nstarted\n"),
    "nohup": (7773, "nohup {m} " + QUIET + " &", "exit code 0\n"),
}


def test_the_leftovers_are_real_without_the_launcher(markers: list[str]) -> None:
    """The same commands run by a plain shell leave their process running (so the tests
    below would see one left)."""
    for base, template, _expected in DETACHED.values():
        marker = _marker(base + 100)
        markers.append(marker)
        subprocess.run(["/bin/sh", "-c", template.format(m=marker)], check=True)
        assert _wait_until(partial(_sleeping, marker)), marker
        time.sleep(0.3)
        assert _sleeping(marker), marker


@pytest.mark.parametrize("name", sorted(DETACHED))
async def test_a_detached_process_does_not_outlive_run_shell(
    tools: BuiltinTools, markers: list[str], name: str
) -> None:
    base, template, expected = DETACHED[name]
    marker = _marker(base)
    markers.append(marker)
    out = await tools.run_shell(template.format(m=marker))
    assert out == expected
    assert _gone(marker), f"{marker} still runs after run_shell returned"


async def test_a_detached_process_does_not_outlive_the_timeout(
    tools: BuiltinTools, markers: list[str]
) -> None:
    marker = _marker(7775)
    markers.append(marker)
    command = f"setsid {marker} {QUIET} & echo started; sleep 100"
    with pytest.raises(ToolError) as raised:
        await tools.run_shell(command, timeout_secs=2)
    assert str(raised.value) == (
        "timed out after 2s; the command was killed. Output so far:\nstarted\n"
    )
    assert _gone(marker), f"{marker} still runs after the timeout"


async def test_a_detached_process_does_not_outlive_a_cancelled_call(
    tools: BuiltinTools, markers: list[str]
) -> None:
    marker = _marker(7776)
    markers.append(marker)
    call = asyncio.create_task(tools.run_shell(f"setsid {marker} {QUIET} & sleep 100"))
    deadline = time.monotonic() + DEADLINE
    while not _sleeping(marker):
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert _gone(marker), f"{marker} still runs after the call was cancelled"


async def test_a_background_child_ends_with_the_command(
    tools: BuiltinTools, markers: list[str]
) -> None:
    """A command that finishes normally but left a child, even one holding its output open
    (run_shell once waited for it until the timeout): the child is killed, the call returns."""
    quiet, holding = _marker(7777), _marker(7778)
    markers.extend([quiet, holding])
    started = time.monotonic()
    out = await tools.run_shell(f"{quiet} {QUIET} & {holding} & echo done", timeout_secs=20)
    assert out == "exit code 0\ndone\n"
    assert time.monotonic() - started < 15
    assert _gone(quiet) and _gone(holding)


async def test_a_tree_of_leftovers_is_killed_to_the_last(
    tools: BuiltinTools, markers: list[str]
) -> None:
    """Leftovers with leftovers of their own, out of the group (a daemon's double fork): each
    killed one hands its children to the launcher, which kills those too."""
    inner, outer = _marker(7783), _marker(7784)
    markers.extend([inner, outer])
    tree = f"(setsid sh -c '{inner} & {outer}; true' {QUIET} &); echo forked"
    out = await tools.run_shell(tree)
    assert out == "exit code 0\nforked\n"
    assert _gone(inner) and _gone(outer)


async def test_ordinary_commands_keep_their_output_and_exit_code(tools: BuiltinTools) -> None:
    out = await tools.run_shell("echo out; echo err >&2; exit 3")
    assert isinstance(out, FailedOutput) and out == "exit code 3\nout\nerr\n"
    assert await tools.run_shell("printf 'a\\nb'") == "exit code 0\na\nb"
    killed = await tools.run_shell("echo before; kill -TERM $$; echo after")
    assert killed == "exit code -15\nbefore\n"
    missing = await tools.run_shell("exec /nonexistent-7779")
    assert missing.startswith("exit code 127\n"), missing
    # An orphan that ends while the command runs is reaped; the command goes on.
    reaped = await tools.run_shell("(sleep 0.1 &); sleep 0.5; echo still-here")
    assert reaped == "exit code 0\nstill-here\n"


def test_the_launcher_still_says_when_a_command_cannot_run(sandbox: Sandbox) -> None:
    done = subprocess.run(
        sandbox.command(["/nonexistent-7779"]),
        cwd=sandbox.workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 127
    assert done.stderr == (
        "omega sandbox: cannot run '/nonexistent-7779': No such file or directory\n"
    )


def test_the_launcher_passes_sigterm_on_then_kills_what_is_left(
    sandbox: Sandbox, markers: list[str]
) -> None:
    """SIGTERM to the launcher (the MCP SDK's stop) reaches the command, which may end as it
    likes; what it started is then killed, and the launcher ends as the command did."""
    marker = _marker(7780)
    markers.append(marker)
    script = f"trap 'echo got-term; exit 7' TERM; setsid {marker} {QUIET} & echo ready; wait"
    process = subprocess.Popen(
        sandbox.command(["/bin/sh", "-c", script]),
        cwd=sandbox.workspace,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        assert _wait_until(partial(_sleeping, marker))
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=DEADLINE) == 7
        assert process.stdout.read() == "got-term\n"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert _gone(marker)


def test_nothing_outlives_omega_itself(sandbox: Sandbox, markers: list[str]) -> None:
    """Omega (here a stand-in process that started the launcher) is SIGKILLed: the launcher's
    parent-death signal makes it kill the command and everything it started."""
    marker, foreground = _marker(7781), _marker(7782)
    markers.extend([marker, foreground])
    argv = sandbox.command(["/bin/sh", "-c", f"setsid {marker} {QUIET} & {foreground}"])
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen({argv!r}, cwd={str(sandbox.workspace)!r}, start_new_session=True)\n"
        "time.sleep(100)\n"
    )
    omega = subprocess.Popen([PY, "-c", code], start_new_session=True)
    try:
        assert _wait_until(partial(_sleeping, marker)), "the command never started"
    finally:
        omega.kill()
        omega.wait()
    assert _gone(marker), f"{marker} still runs after Omega died"
    assert _gone(foreground)
