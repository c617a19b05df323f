"""Attack tests: Claude Code's private home (issue 24, findings 2, 3 and 8), with the real pinned
`claude` CLI against the fake Messages API, its Bash tool scripted as a hostile model.

- The model cannot plant a wrapper for the `claude` binary (the native installer's
  ~/.local/share/claude, the CLI's own install folder), and Omega's own version check runs
  confined: nothing planted runs outside the sandbox.
- The model cannot read the owner's ~/.claude login nor the login Omega hands the CLI, nor
  leave a hook that a later run (Omega's or the owner's own `claude`) executes.
- Another local account reading /proc/<pid>/cmdline while a call is in flight sees neither the
  person's message nor the system prompt.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from omega.sandbox import probe
from omega.types import ChatMessage, Context
from tests.fakes.anthropic_server import Step
from tests.fakes.real_claude import API_KEY, RealClaude, ask, bash, tool_results, user_python

pytestmark = [
    pytest.mark.slow,
    pytest.mark.no_store,
]  # every test runs the real claude CLI (seconds per call)

# Another account's view: every process's command line, until the CLI has run a while.
READER = """
import json, os, time
seen, first, end = set(), None, time.time() + 30
while time.time() < end and (first is None or time.time() < first + 2):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ")
        except OSError:
            continue
        seen.add(line.decode(errors="replace"))
    if first is None and any("--output-format" in s for s in seen):
        first = time.time()
    time.sleep(0.05)
print(json.dumps(sorted(seen)))
"""
OWNER_TOKEN = "sk-ant-oat01-owners-own-refresh-token-7777"
CONFIG_VERSION = "2.1.197"


def needs_landlock() -> None:
    if probe("sandbox").degraded:
        pytest.skip("this kernel offers no Landlock: the sandbox cannot be shown here")


def hook_settings(marker: Path) -> str:
    """A settings file whose SessionStart hook leaves `marker` (written by the model)."""
    hook = {"type": "command", "command": f"touch {marker}"}
    return json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})


def test_the_model_cannot_plant_a_claude_wrapper_and_the_version_check_runs_confined(
    real_claude: RealClaude, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 2: the CLI as the native installer lays it out (~/.local/bin/claude ->
    ~/.local/share/claude/versions/X); the model's Bash replaces the binary with a wrapper
    and drops one into the program's folder; then Omega asks the CLI its version."""
    needs_landlock()
    user_home = real_claude.user_home
    versions = user_home / ".local" / "share" / "claude" / "versions"
    versions.mkdir(parents=True)
    binary = versions / CONFIG_VERSION
    binary.symlink_to(real_claude.bin.resolve())
    bin_dir = user_home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "claude").symlink_to(binary)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    install = real_claude.bin.resolve().parent
    before = sorted(p.name for p in install.iterdir())
    marker = tmp_path / "outside" / "wrapper-ran"  # only an unconfined process may write here
    marker.parent.mkdir()
    wrapper = f'#!/bin/sh\\ntouch {marker}\\nexec {real_claude.bin.resolve()} "$@"\\n'
    real_claude.api.script = [
        Step(
            tool_calls=[
                bash("w1", f"rm -f {binary} && printf '{wrapper}' > {binary}; chmod +x {binary}")
            ]
        ),
        Step(tool_calls=[bash("w2", f"printf '{wrapper}' > {install}/claude-evil")]),
        Step(tool_calls=[bash("w3", f"printf '{wrapper}' > {user_home}/.local/bin/claude2")]),
        Step(text="Planted."),
    ]
    p = real_claude.provider(executable=Path("claude"))  # found on PATH, as an installed CLI is
    assert ask(p, "plant").text == "Planted."
    ok, reason = p.availability()  # `claude --version` and `claude auth status`
    assert ok, reason
    assert CONFIG_VERSION in reason
    assert not marker.exists(), "a wrapper planted by the model ran outside the sandbox"
    assert binary.is_symlink() and binary.resolve() == real_claude.bin.resolve()
    assert sorted(p.name for p in install.iterdir()) == before
    assert not (user_home / ".local" / "bin" / "claude2").exists()


def test_the_model_reads_no_login_and_leaves_no_hook_that_runs_later(
    real_claude: RealClaude,
) -> None:
    """Finding 3: the owner's ~/.claude holds an OAuth login; the model's Bash reads it, the
    private home's files, the CLI's environment in /proc, and writes SessionStart hooks into
    every settings file it can think of. The login never reaches the model, ~/.claude is
    untouched, and no hook runs in Omega's next call."""
    needs_landlock()
    api = real_claude.api
    claude_dir = real_claude.user_home / ".claude"
    credentials = claude_dir / ".credentials.json"
    credentials.write_text(json.dumps({"claudeAiOauth": {"accessToken": OWNER_TOKEN}}))
    owner_files = {p: p.read_bytes() for p in claude_dir.rglob("*") if p.is_file()}
    home = real_claude.paths
    marker = home.workspace / "hook-ran"  # a hook runs confined: it can write only here
    settings = hook_settings(marker)
    targets = [
        claude_dir / "settings.json",
        Path("$CLAUDE_CONFIG_DIR") / "settings.json",
        Path(".claude") / "settings.json",
        Path(".claude") / "settings.local.json",
    ]
    plant = " ; ".join(
        f"mkdir -p {t.parent} && printf '%s' '{settings}' > {t} && echo planted {t}"
        for t in targets
    )
    real_claude.api.script = [
        Step(
            tool_calls=[
                bash(
                    "r1",
                    f"cat {credentials}; cat $CLAUDE_CONFIG_DIR/.credentials.json; "
                    "ls -la $CLAUDE_CONFIG_DIR; env; tr '\\0' '\\n' < /proc/$PPID/environ; "
                    # `timeout`: a socket among them would block the read until the
                    # Bash tool's own 2-minute limit; what is readable is read at once
                    "for f in /proc/$PPID/fd/*; do timeout 2 head -c 200 $f; done",
                )
            ]
        ),
        Step(tool_calls=[bash("h1", plant)]),
        Step(text="Looked and planted."),
        Step(text="A later answer."),
    ]
    p = real_claude.provider()
    assert ask(p, "look").text == "Looked and planted."
    assert ask(p, "again").text == "A later answer."  # Omega's next run
    results = tool_results(real_claude.api.requests)
    assert "PATH=" in results["r1"]  # the commands ran
    for secret in (OWNER_TOKEN, API_KEY):
        assert secret not in json.dumps([r.body for r in api.requests]), secret
    assert all(r.api_key == API_KEY for r in api.requests)  # the CLI itself had the login
    assert not marker.exists(), "a hook the model wrote ran in a later call"
    assert {p: p.read_bytes() for p in claude_dir.rglob("*") if p.is_file()} == owner_files
    leftovers = list((home.workspace / ".tmp").glob("claude-home-*"))
    assert leftovers == []  # each call's private home is gone with it


def test_the_prompt_is_not_on_any_command_line(real_claude: RealClaude) -> None:
    """Finding 8: while a call is in flight, another account reads every process's
    /proc/<pid>/cmdline: the person's message and the system prompt are not there."""
    message, system = "my-secret-diagnosis-4821", "SYSTEM-PROMPT-SECRET-9931"
    real_claude.api.script = [Step(text="Answered.", hang_secs=4.0)]
    prefix: list[str] = []
    python: str | None = sys.executable
    if os.geteuid() == 0 and shutil.which("setpriv"):
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        python = user_python()
    if python is None:
        pytest.skip("no Python interpreter that user 65534 may run")
    found: dict[str, Any] = {}

    def watch() -> None:
        done = subprocess.run(
            [*prefix, python, "-I", "-c", READER],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd="/",
        )
        found["lines"] = json.loads(done.stdout or "[]")
        found["stderr"] = done.stderr

    thread = threading.Thread(target=watch)
    thread.start()
    time.sleep(0.5)
    try:
        context = Context(system_prompt=system, messages=[ChatMessage("user", message)])
        reply = asyncio.run(real_claude.provider().complete(replace(context, use_tools=True)))
    finally:
        thread.join()
    assert reply.text == "Answered."
    lines: list[str] = found["lines"]
    assert any("--output-format" in line for line in lines), found  # the CLI was seen
    assert not [line for line in lines if message in line or system in line]
    assert message in real_claude.api.requests[0].last_user_text  # it did reach the model
    assert system in real_claude.api.requests[0].system_text
