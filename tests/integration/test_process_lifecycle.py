"""Nothing Omega starts outlives it or the call it was started for, through the real entry
point (`omega chat --jsonl` with the scripted providers): a `run_shell` command and what it
left (a grandchild, a `setsid` daemon), a skill's MCP server and its own children, the `claude`
CLI and what it started. Checked when Omega is SIGKILLed mid-tool, when its input ends, and
when a `claude` call times out; after the kill the next start answers the message once and
keeps what was written before it. Both process walls are run: bubblewrap's PID namespace
(`sandbox`, where bwrap works) and the supervising launcher alone (`rwx`, as on a system
without bwrap). Each process is found by a unique marker in its command line
(test_sandbox_leftovers), waiting on a deadline.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import OMEGA_BIN, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_sandbox_leftovers import (
    PY,
    QUIET,
    _gone,
    _marker,
    _running,
    _sleeping,
    _wait_until,
    markers,
)
from tests.integration.test_tool_loop import ANA_OWNER, ECHO_SERVER, replies, tool_call

__all__ = ["markers"]  # the fixture, imported for this module's tests

MODES = ["sandbox", "rwx"] if shutil.which("bwrap") else ["rwx"]
DAEMONS = 30
SCHEDULED = "Noted.\nSCHEDULE: call mom | 2030-01-01T10:00 | once"


def _env(fake: FakeOpenAI, mode: str, **extra: str) -> dict[str, str]:
    return openai_env(
        fake,
        OMEGA_AUTH__OWNERS=ANA_OWNER,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_SANDBOX__MODE=mode,
        **extra,
    )


class Chat:
    """A running `omega chat --jsonl`: messages in, events out (read on a thread)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [OMEGA_BIN, "chat", "--jsonl"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, **env),
        )
        self.events: queue.Queue[dict[str, object]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.events.put(json.loads(line))

    def say(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(jsonl({"text": text, "sender_id": "ana"}))
        self.proc.stdin.flush()

    def reply(self, secs: float = 60) -> object:
        """The text of the next reply."""
        deadline = time.monotonic() + secs
        while True:
            event = self.events.get(timeout=max(deadline - time.monotonic(), 0.01))
            if event["kind"] == "reply":
                return event["text"]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _count(home: Path, sql: str) -> int:
    conn = connect_db(home / "memory.db")
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_omega_killed_mid_command_leaves_nothing_and_the_restart_answers_once(
    fake_openai: FakeOpenAI, isolated_env: Path, markers: list[str], mode: str
) -> None:
    """SIGKILL while `run_shell` runs a command with a grandchild in its group and a `setsid`
    one: all end with Omega; the next start answers the message once, the task set by the
    message before is still there."""
    daemon, child, command = _marker(7901), _marker(7902), _marker(7903)
    markers.extend([daemon, child, command])
    shell = f"setsid {daemon} {QUIET} & {child} & {command}"
    fake_openai.script = [
        Step(match="remind me", text=SCHEDULED),
        Step(
            match="run it",
            tool_calls=[tool_call("c1", "run_shell", command=shell, timeout_secs=200)],
        ),
        Step(match="run it", text="never delivered"),
    ]
    chat = Chat(_env(fake_openai, mode))
    try:
        chat.say("remind me to call mom")
        assert chat.reply() == "Noted."
        chat.say("run it")
        for marker in (daemon, child, command):
            assert _wait_until(partial(_sleeping, marker), 30), f"{marker} never started"
    finally:
        chat.kill()
    for marker in (daemon, child, command):
        assert _gone(marker), f"{marker} still runs after Omega was killed ({mode})"

    fake_openai.script = [Step(match="run it", text="Done.")]
    asked = len(fake_openai.requests)
    again = run_omega("chat", "--jsonl", env=_env(fake_openai, mode), stdin="")
    assert again.returncode == 0, again.stderr
    assert replies(again.events) == ["Done."]
    assert len(fake_openai.requests) == asked + 1
    assert _count(isolated_env, "SELECT COUNT(*) FROM scheduled_tasks") == 1
    assert _count(isolated_env, "SELECT COUNT(*) FROM inbox WHERE status = 'pending'") == 0


def _skill_with_server(home: Path, started: str, prelude: str = "") -> None:
    """The calc skill whose server first starts a detached child of its own (`started`)."""
    skill = home.parent / "my-skills" / "calc"
    skill.mkdir(parents=True)
    # The interpreter and the script as arguments: the sandbox grants what they point into.
    script = f'{prelude}setsid {started} {QUIET} & exec "$0" "$1"'
    frontmatter = {
        "name": "calc",
        "description": "Arithmetic through an MCP server.",
        "triggers": "calculate|add",
        "mcp": {"calc": {"command": "/bin/sh", "args": ["-c", script, PY, str(ECHO_SERVER)]}},
    }
    lines = [f"{key}: {json.dumps(value)}" for key, value in frontmatter.items()]
    (skill / "SKILL.md").write_text("---\n" + "\n".join(lines) + "\n---\n\nUse calc.\n")
    installed = run_omega("skills", "add", str(skill))
    assert installed.returncode == 0, installed.stderr


def _server_running() -> bool:
    return any(_cmdline_is(pid, [PY, str(ECHO_SERVER)]) for pid in _pids())


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _cmdline_is(pid: int, argv: list[str]) -> bool:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return raw.split(b"\0")[:-1] == [a.encode() for a in argv]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_omega_killed_mid_mcp_call_leaves_no_server_nor_its_children(
    fake_openai: FakeOpenAI, isolated_env: Path, markers: list[str], mode: str
) -> None:
    started = _marker(7911)
    markers.append(started)
    _skill_with_server(isolated_env, started)
    fake_openai.script = [
        Step(match="add", tool_calls=[tool_call("n1", "calc_nap", seconds=120)]),
        Step(match="add", text="never delivered"),
    ]
    chat = Chat(_env(fake_openai, mode))
    try:
        chat.say("please add 2 and 40")
        assert _wait_until(partial(_sleeping, started), 60), "the server never started"
        assert _wait_until(_server_running, 30), "the server never started"
        assert _wait_until(lambda: len(fake_openai.requests) >= 1, 30)
    finally:
        chat.kill()
    assert _gone(started), f"the server's child still runs after Omega was killed ({mode})"
    assert not _running(started)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_the_end_of_input_mid_command_ends_every_child(
    fake_openai: FakeOpenAI, markers: list[str], mode: str
) -> None:
    """Input ends while a command runs: the chat stops after its stall and the command, its
    grandchild and its `setsid` daemons end with it. The turn's cancellation is delivered again
    while run_shell stops the command (the tool loop's cancel scope): the launcher, told to
    abort, must not be SIGKILLed before it has killed them all (many, so that takes a while)."""
    daemon, child, command = _marker(7921), _marker(7922), _marker(7923)
    markers.extend([daemon, child, command])
    daemons = f"for i in $(seq {DAEMONS}); do setsid {daemon} {QUIET} & done"
    shell = f"{daemons}; {child} & {command}"
    fake_openai.script = [
        Step(
            match="run it",
            tool_calls=[tool_call("c1", "run_shell", command=shell, timeout_secs=200)],
        ),
        Step(match="run it", text="never delivered"),
    ]
    chat = Chat(_env(fake_openai, mode, OMEGA_OMEGA__CHAT_STALL_SECS="2"))
    try:
        chat.say("run it")
        for marker in (daemon, child, command):
            assert _wait_until(partial(_sleeping, marker), 30), f"{marker} never started"
        assert chat.proc.stdin is not None
        chat.proc.stdin.close()
        assert chat.proc.wait(timeout=30) == 3  # EXIT_UNANSWERED: kept in the inbox
    finally:
        chat.kill()
    for marker in (daemon, child, command):
        assert _gone(marker), f"{marker} still runs after the chat ended ({mode})"


def _fake_claude(folder: Path, daemon: str, child: str) -> Path:
    """A `claude` that answers the start-up checks, then starts a detached daemon and a child
    and never answers (the provider's timeout ends it)."""
    version = (Path(__file__).parents[1] / "fixtures" / "claude_cli" / "VERSION").read_text()
    folder.mkdir()
    program = folder / "claude"
    program.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        f'  --version) echo "{version.strip()} (Claude Code)"; exit 0;;\n'
        '  auth) echo \'{"loggedIn": true, "authMethod": "api_key"}\'; exit 0;;\n'
        "esac\n"
        "cat >/dev/null\n"
        f"setsid {daemon} {QUIET} &\n"
        f"{child} {QUIET} &\n"
        "wait\n"
    )
    program.chmod(0o755)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_claude_call_that_times_out_leaves_nothing_running(
    tmp_path: Path, markers: list[str], mode: str
) -> None:
    daemon, child = _marker(7931), _marker(7932)
    markers.extend([daemon, child])
    folder = _fake_claude(tmp_path / "bin", daemon, child)
    env = {
        "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}",
        "OMEGA_PROVIDER__DEFAULT": "claude-code",
        "OMEGA_SANDBOX__MODE": mode,
        "OMEGA_PROVIDER__CLASSIFY": "false",
        "OMEGA_PROVIDER__CLAUDE_CODE__TIMEOUT_SECS": "3",
        "ANTHROPIC_API_KEY": "sk-ant-test-0123456789",
    }
    chat = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "build it"}), timeout=60)
    assert chat.returncode == 0, chat.stderr
    [told] = [e for e in chat.events if e["kind"] in ("reply", "error")]
    assert told["kind"] == "error", told
    assert _gone(daemon), f"the CLI's detached daemon still runs after its timeout ({mode})"
    assert _gone(child)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_hung_mcp_server_deaf_to_sigterm_leaves_no_children_when_stopped(
    fake_openai: FakeOpenAI, isolated_env: Path, markers: list[str], mode: str
) -> None:
    """A server that hangs and ignores SIGTERM is stopped when the watch gives up on it (the
    SDK's SIGTERM, then SIGKILL to its group): the child it detached goes with it."""
    started = _marker(7941)
    markers.append(started)
    _skill_with_server(isolated_env, started, prelude="trap '' TERM; ")
    fake_openai.script = [
        Step(match="add", tool_calls=[tool_call("f1", "calc_freeze", seconds=300)]),
        Step(match="add", text="It hung."),
    ]
    env = _env(fake_openai, mode, OMEGA_PROVIDER__TIMEOUT_SECS="8")
    chat = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl({"text": "please add", "sender_id": "ana"}),
        timeout=120,
    )
    assert chat.returncode == 0, chat.stderr
    assert _gone(started), f"the hung server's child still runs after it was stopped ({mode})"
