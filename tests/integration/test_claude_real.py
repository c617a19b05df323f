"""Contract tests: the real `claude` CLI (the pinned npm version, installed once into
~/.cache/omega/claude-cli) run by the Claude Code provider against the fake Messages API.

What they hold Omega to: a reply comes back; with default settings the CLI's tools work in the
workspace (a Bash command writes a file there) and cannot write outside it nor read
config.toml, whether the OS sandbox or (where it is not enforced) the CLI's restricted mode
holds it; a skill's MCP server is reached; a run stopped at max turns is resumed; a background
call is lean and leaves no session behind; no secret of Omega's reaches a tool result; a CLI
with no login says so in one sentence. Skipped, with the reason shown, only where npm is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest

from omega.providers.base import ProviderError
from omega.providers.claude.cli import LOGIN_HINT
from omega.sandbox import SandboxStatus, probe
from tests.conftest import jsonl, run_omega
from tests.fakes.anthropic_server import Step
from tests.fakes.real_claude import (
    CONFIG_SECRET,
    ENV_SECRETS,
    RealClaude,
    ask,
    bash,
    claude_env,
    tool_results,
    user_python,
)

pytestmark = pytest.mark.slow  # every test runs the real claude CLI (seconds per call)

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"
DEGRADED = SandboxStatus("sandbox", "none", degraded=True, detail="playing a system without it")
LEAN_LIMIT = 16 * 1024  # the planning request, bytes (the CLI's full harness: ~116 KB)


MODES = ["confined", "restricted"]  # the OS sandbox enforced here / the CLI's acceptEdits mode


def status_for(mode: str) -> SandboxStatus | None:
    if mode == "confined" and probe("sandbox").degraded:
        pytest.skip("this kernel offers no Landlock: the confined mode cannot be shown here")
    return None if mode == "confined" else DEGRADED


@pytest.mark.no_store
def test_a_reply(real_claude: RealClaude) -> None:
    real_claude.api.script = [Step(text="Hello from the fake API")]
    reply = ask(real_claude.provider())
    assert reply.text == "Hello from the fake API"
    assert reply.session_id and reply.usage.input_tokens > 0
    [request] = real_claude.api.requests
    assert request.body["model"] == "claude-sonnet-4-6"
    assert "You are Omega." in request.system_text


@pytest.mark.no_store
@pytest.mark.parametrize("mode", MODES)
def test_bash_writes_in_the_workspace(real_claude: RealClaude, mode: str) -> None:
    real_claude.api.script = [
        Step(tool_calls=[bash("b1", "echo made-by-claude > marker.txt && cat marker.txt")]),
        Step(text="Done."),
    ]
    reply = ask(real_claude.provider(status_for(mode)), "write a marker")
    assert (real_claude.paths.workspace / "marker.txt").read_text() == "made-by-claude\n"
    assert [(c.name, c.ok) for c in reply.tool_calls] == [("Bash", True)]
    assert reply.text == "Done."


@pytest.mark.no_store
@pytest.mark.parametrize("mode", MODES)
def test_writing_outside_the_workspace_and_reading_config_are_refused(
    real_claude: RealClaude, tmp_path: Path, mode: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    real_claude.api.script = [
        Step(tool_calls=[bash("b1", f"echo escaped > {outside}/bash.txt")]),
        Step(
            tool_calls=[
                {"id": "w1", "name": "Write", "arguments": {"file_path": f"{outside}/w.txt"}}
                | {"arguments": {"file_path": f"{outside}/w.txt", "content": "escaped"}}
            ]
        ),
        Step(tool_calls=[bash("b2", f"cat {real_claude.paths.config}")]),
        Step(
            tool_calls=[
                {
                    "id": "r1",
                    "name": "Read",
                    "arguments": {"file_path": str(real_claude.paths.config)},
                }
            ]
        ),
        Step(tool_calls=[bash("b3", f"echo x > {real_claude.paths.tools}/evil.py")]),
        Step(text="Tried."),
    ]
    reply = ask(real_claude.provider(status_for(mode)), "escape")
    assert reply.text == "Tried."
    assert list(outside.iterdir()) == []
    assert not (real_claude.paths.tools / "evil.py").exists()
    results = tool_results(real_claude.api.requests)
    assert set(results) == {"b1", "w1", "b2", "r1", "b3"}
    assert CONFIG_SECRET not in json.dumps([r.body for r in real_claude.api.requests])
    assert not any(c.ok for c in reply.tool_calls), reply.tool_calls


def test_a_skills_mcp_server_is_reached(real_claude: RealClaude) -> None:
    """Through the whole pipeline: the skill installed (pinned) by the owner, its MCP server
    started by the CLI under the sandbox, its tool's answer back to the model."""
    skill = real_claude.paths.home.parent / "mine" / "echo"
    skill.mkdir(parents=True)
    mcp = {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}
    (skill / "SKILL.md").write_text(
        "---\nname: echo\ndescription: Shouts text back.\ntriggers: shout\n"
        f"mcp: {json.dumps(mcp)}\n---\n\nUse the shout tool.\n"
    )
    assert run_omega("skills", "add", str(skill)).returncode == 0
    real_claude.api.script = [
        # The CLI connects MCP servers while the first request is out; a real model takes a
        # few seconds to answer, and an instant one found the server "still connecting" on a
        # loaded machine.
        Step(
            tool_calls=[{"id": "m1", "name": "mcp__echo__shout", "arguments": {"text": "hey"}}],
            hang_secs=4.0,
        ),
        Step(text="It shouted back."),
    ]
    env = {
        **real_claude.env,
        "PATH": real_claude.path_with_claude(),
        "OMEGA_PROVIDER__DEFAULT": "claude-code",
    }
    result = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl({"text": "shout hey"}),  # the owner: skills bring MCP servers
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert "HEY" in tool_results(real_claude.api.requests)["m1"]
    assert any(e.get("text") == "It shouted back." for e in result.events), result.events


@pytest.mark.no_store
def test_resume_at_max_turns(real_claude: RealClaude) -> None:
    real_claude.api.script = [
        Step(tool_calls=[bash("b1", "echo one")]),
        Step(text="Finished after resuming."),
    ]
    reply = ask(real_claude.provider(max_turns=1), "count")
    assert reply.text == "Finished after resuming."
    assert len(real_claude.api.requests) == 2
    assert real_claude.api.requests[1].last_user_text.endswith("Continue where you left off.")
    assert "b1" in tool_results(
        real_claude.api.requests[1:]
    )  # the resumed session kept the first turn


@pytest.mark.no_store
def test_a_lean_background_call_leaves_no_session(real_claude: RealClaude) -> None:
    real_claude.api.script = [Step(text='{"kind": "direct"}', planner=True)]
    planner = "You are the planner that routes requests for Omega. Answer with JSON.\nhi"
    reply = ask(real_claude.provider(), planner, use_tools=False)
    assert reply.text == '{"kind": "direct"}'
    [request] = real_claude.api.planner_requests
    size = len(json.dumps(request.body))
    assert size <= LEAN_LIMIT, f"planning request is {size} bytes"
    assert request.body.get("tools") == []
    assert "Claude Code" not in request.system_text  # none of the CLI's own harness
    projects = real_claude.user_home / ".claude" / "projects"
    assert not list(projects.rglob("*.jsonl")) if projects.exists() else True


@pytest.mark.no_store
def test_no_secret_reaches_a_tool_result(real_claude: RealClaude) -> None:
    real_claude.api.script = [
        Step(tool_calls=[bash("e1", "env; cat ../config.toml; cat ~/.claude.json")]),
        Step(text="Looked."),
    ]
    ask(real_claude.provider(), "look around")
    results = tool_results(real_claude.api.requests)
    assert "PATH=" in results["e1"]  # the command ran
    everything = json.dumps([r.body for r in real_claude.api.requests])
    for secret in [CONFIG_SECRET, *ENV_SECRETS.values()]:
        assert secret not in everything


@pytest.mark.no_store
def test_not_logged_in_is_one_clear_sentence(real_claude: RealClaude, monkeypatch: Any) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    p = real_claude.provider()
    assert p.availability() == (False, LOGIN_HINT)
    with pytest.raises(ProviderError) as err:
        ask(p)
    assert err.value.hint == LOGIN_HINT and err.value.kind == "unavailable"
    assert real_claude.api.requests == []


DRIVER = """
import asyncio, json, sys
from pathlib import Path
from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.claude.code import ClaudeCodeProvider
from omega.sandbox import Sandbox
from omega.types import ChatMessage, Context

paths = OmegaPaths(Path(sys.argv[1]))
p = ClaudeCodeProvider(ClaudeCodeConfig(), paths.workspace, executable=sys.argv[2],
                       sandbox=Sandbox(SandboxSection(), paths))
ctx = Context(system_prompt="", messages=[ChatMessage("user", "go")], use_tools=True)
reply = asyncio.run(p.complete(ctx))
print(json.dumps({"text": reply.text, "mode": p.tool_mode().name,
                  "calls": [[c.name, c.ok, c.result_preview] for c in reply.tool_calls]}))
"""


@pytest.mark.no_store
def test_as_an_ordinary_user_with_default_settings(real_claude: RealClaude) -> None:
    """Omega itself runs as an unprivileged user (root drops to `nobody` for this test)."""
    root = os.geteuid() == 0
    if root and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot play an ordinary user")
    uid = 65534 if root else os.geteuid()
    python = user_python() if root else sys.executable
    if python is None:
        pytest.skip("no Python interpreter that user 65534 may run")
    base = Path(tempfile.mkdtemp(prefix="omega-user-"))
    try:
        home, user_home, outside = base / "omega", base / "home", base / "outside"
        for folder in (home / "workspace", user_home / ".claude", outside):
            folder.mkdir(parents=True)
        (home / "config.toml").write_text(f'secret = "{CONFIG_SECRET}"\n')
        program = base / "claude"
        try:
            os.link(real_claude.bin.resolve(), program)
        except OSError:
            shutil.copy2(real_claude.bin.resolve(), program)
        for path in [base, *base.rglob("*")]:
            os.chown(path, uid, uid)
        os.chmod(base, 0o755)
        real_claude.api.script = [
            Step(tool_calls=[bash("b1", "echo mine > note.txt && cat note.txt")]),
            Step(tool_calls=[bash("b2", f"cat {home}/config.toml")]),
            Step(tool_calls=[bash("b3", f"echo escaped > {outside}/x.txt")]),
            Step(text="All done."),
        ]
        env = {
            **claude_env(real_claude.api.base_url, user_home),
            "PATH": os.environ["PATH"],
            # This checkout's code first, then the virtualenv's packages (pydantic...).
            "PYTHONPATH": os.pathsep.join(
                [str(Path(__file__).resolve().parents[2] / "src"), sysconfig.get_paths()["purelib"]]
            ),
        }
        prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if root else []
        done = subprocess.run(
            [*prefix, python, "-c", DRIVER, str(home), str(program)],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            cwd=base,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        outcome = json.loads(done.stdout.strip().splitlines()[-1])
        assert outcome["text"] == "All done."
        assert outcome["mode"] == "confined" or probe("sandbox").degraded
        assert (home / "workspace" / "note.txt").read_text() == "mine\n"
        assert list(outside.iterdir()) == []
        results = tool_results(real_claude.api.requests)
        assert "mine" in results["b1"]
        assert CONFIG_SECRET not in json.dumps([r.body for r in real_claude.api.requests])
        assert any(w in results["b2"] for w in ("Permission denied", "No such file", "blocked"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
