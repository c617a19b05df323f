"""The `claude` CLI under the OS sandbox: the fake CLI plays the attacker from inside it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.claude.code import ClaudeCodeProvider
from omega.sandbox import Sandbox, probe
from omega.sandbox.modes import Mode
from omega.types import ChatMessage, Context
from tests.fakes.fake_claude import TRANSCRIPTS, write_wrapper

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "fake_claude.py"
SECRET = "sk-config-secret-5151"


def run_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: Mode) -> dict[str, str]:
    """Run the fake `claude` through the provider in `mode`; what its probes found."""
    home = tmp_path / "omega-home"
    paths = OmegaPaths(home)
    paths.ensure()
    paths.config.write_text(f'api_key = "{SECRET}"\n')
    user_home = tmp_path / "user-home"
    (user_home / ".claude").mkdir(parents=True)
    (user_home / ".local" / "share" / "claude").mkdir(parents=True)
    (user_home / "notes.txt").write_text("private notes")
    monkeypatch.setenv("HOME", str(user_home))
    bin_dir = tmp_path / "bin"  # the CLI's program folder: readable for it
    bin_dir.mkdir()
    shutil.copy(FAKE, bin_dir / "fake_claude.py")
    shutil.copytree(TRANSCRIPTS, bin_dir / "transcripts")  # readable inside the sandbox
    run: dict[str, Any] = {
        "result": "ok",
        "probe_reads": [str(paths.config), str(user_home / "notes.txt")],
        "probe_writes": [
            str(paths.tools / "evil.py"),
            str(user_home / ".claude" / "state.json"),
            str(user_home / ".claude.json"),
            str(user_home / ".local" / "share" / "claude" / "claude"),
            str(bin_dir / "claude"),
            "$CLAUDE_CONFIG_DIR/state.json",
        ],
    }
    script = paths.workspace / "script.json"  # the fake's own files live where it may write
    script.write_text(json.dumps([run]))
    log = paths.workspace / "calls.jsonl"
    wrapper = write_wrapper(
        bin_dir / "claude",
        bin_dir / "fake_claude.py",
        FAKE_CLAUDE_SCRIPT=str(script),
        FAKE_CLAUDE_LOG=str(log),
        FAKE_CLAUDE_TRANSCRIPTS=str(bin_dir / "transcripts"),
    )
    sandbox = Sandbox(SandboxSection(mode=mode), paths)
    provider = ClaudeCodeProvider(
        ClaudeCodeConfig(), paths.workspace, executable=str(wrapper), sandbox=sandbox
    )
    context = Context(system_prompt="", messages=[ChatMessage("user", "hi")])
    reply = asyncio.run(provider.complete(context))
    assert reply.text == "ok"
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    probes: dict[str, str] = call["probes"]
    return {
        key.replace(str(home), "$OMEGA_HOME").replace(str(user_home), "~"): value
        for key, value in probes.items()
    }


@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_claude_reaches_its_own_folder_and_not_omegas_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    probes = run_claude(tmp_path, monkeypatch, mode)
    # Landlock; or not shown; or shown read-only (a program folder in the namespace)
    denied = ("error: Permission denied", "error: No such file", "error: Read-only file system")
    assert probes["read $OMEGA_HOME/config.toml"].startswith(denied)
    assert probes["write $OMEGA_HOME/tools/evil.py"].startswith(denied)
    # Its state lives in its private home; the owner's ~/.claude and its own program are shut.
    assert probes["write $CLAUDE_CONFIG_DIR/state.json"] == "written"
    for shut in ("~/.claude/state.json", "~/.claude.json", "~/.local/share/claude/claude"):
        assert probes[f"write {shut}"].startswith("error: "), shut
    assert [p for p in probes if p.startswith("write ") and p.endswith("/bin/claude")] == [
        f"write {tmp_path}/bin/claude"
    ]
    assert probes[f"write {tmp_path}/bin/claude"].startswith(denied)
    # rx reads $HOME, but this test's $HOME lies in /tmp, which the namespace never shows
    hidden = mode == "sandbox" or bool(probe(mode).namespace)
    notes = probes["read ~/notes.txt"]
    assert notes.startswith(denied) if hidden else notes == "private notes"


def test_claude_reads_everything_in_rwx_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = run_claude(tmp_path, monkeypatch, "rwx")
    assert SECRET in probes["read $OMEGA_HOME/config.toml"]
    assert probes["write $OMEGA_HOME/tools/evil.py"] == "written"
