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

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.base import ProviderError
from omega.providers.claude.cli import LOGIN_HINT
from omega.providers.claude.code import ClaudeCodeProvider
from omega.sandbox import Sandbox, SandboxStatus, probe
from omega.types import ChatMessage, Context, Reply
from tests.conftest import jsonl, run_omega
from tests.fakes.anthropic_server import FakeAnthropic, RecordedRequest, Step
from tests.fakes.real_claude import UnavailableError, claude_env, pinned_claude

SECRET = "sk-config-secret-in-toml-4242"
ENV_SECRETS = {"OPENAI_API_KEY": "sk-openai-env-secret-77", "TELEGRAM_BOT_TOKEN": "99:tg-secret-88"}
ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"
DEGRADED = SandboxStatus("sandbox", "none", degraded=True, detail="playing a system without it")
LEAN_LIMIT = 16 * 1024  # the planning request, bytes (the CLI's full harness: ~116 KB)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned CLI (installed on first use); a visible skip only where npm is absent."""
    try:
        return pinned_claude()
    except UnavailableError as exc:
        if shutil.which("npm") is None:
            pytest.skip(f"real-CLI contract tests skipped: {exc}")
        raise


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def home(isolated_env: Path) -> OmegaPaths:
    """$OMEGA_HOME with a secret in config.toml."""
    paths = OmegaPaths(isolated_env)
    paths.ensure()
    paths.config.write_text(f'[provider.anthropic]\napi_key = "{SECRET}"\n')
    return paths


@pytest.fixture
def cli_env(api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh user home, the fake API, and Omega's other secrets in the environment."""
    user_home = tmp_path / "user-home"
    (user_home / ".claude").mkdir(parents=True)
    env = {**claude_env(api.base_url, user_home), **ENV_SECRETS}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def provider(
    claude_bin: Path, paths: OmegaPaths, status: SandboxStatus | None = None, **config: Any
) -> ClaudeCodeProvider:
    """The provider with default settings (sandbox mode); `status` plays another system."""
    sandbox = Sandbox(SandboxSection(), paths, status=status)
    return ClaudeCodeProvider(
        ClaudeCodeConfig(**config), paths.workspace, executable=str(claude_bin), sandbox=sandbox
    )


def ask(p: ClaudeCodeProvider, text: str = "hi", **kwargs: Any) -> Reply:
    kwargs.setdefault("use_tools", True)
    context = Context(
        system_prompt="You are Omega.", messages=[ChatMessage("user", text)], **kwargs
    )
    return asyncio.run(p.complete(context))


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"id": call_id, "name": "Bash", "arguments": {"command": command}}


def tool_results(requests: list[RecordedRequest]) -> dict[str, str]:
    """Every tool result the CLI sent back to the model, by tool_use id."""
    found: dict[str, str] = {}
    for request in requests:
        for message in request.messages:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[str(block.get("tool_use_id"))] = json.dumps(block.get("content"))
    return found


MODES = ["confined", "restricted"]  # the OS sandbox enforced here / the CLI's acceptEdits mode


def status_for(mode: str) -> SandboxStatus | None:
    if mode == "confined" and probe("sandbox").degraded:
        pytest.skip("this kernel offers no Landlock: the confined mode cannot be shown here")
    return None if mode == "confined" else DEGRADED


def test_a_reply(claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any) -> None:
    api.script = [Step(text="Hello from the fake API")]
    reply = ask(provider(claude_bin, home))
    assert reply.text == "Hello from the fake API"
    assert reply.session_id and reply.usage.input_tokens > 0
    [request] = api.requests
    assert request.body["model"] == "claude-sonnet-4-6"
    assert "You are Omega." in request.system_text


@pytest.mark.parametrize("mode", MODES)
def test_bash_writes_in_the_workspace(
    claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any, mode: str
) -> None:
    api.script = [
        Step(tool_calls=[bash("b1", "echo made-by-claude > marker.txt && cat marker.txt")]),
        Step(text="Done."),
    ]
    reply = ask(provider(claude_bin, home, status_for(mode)), "write a marker")
    assert (home.workspace / "marker.txt").read_text() == "made-by-claude\n"
    assert [(c.name, c.ok) for c in reply.tool_calls] == [("Bash", True)]
    assert reply.text == "Done."


@pytest.mark.parametrize("mode", MODES)
def test_writing_outside_the_workspace_and_reading_config_are_refused(
    claude_bin: Path,
    home: OmegaPaths,
    api: FakeAnthropic,
    cli_env: Any,
    tmp_path: Path,
    mode: str,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    api.script = [
        Step(tool_calls=[bash("b1", f"echo escaped > {outside}/bash.txt")]),
        Step(
            tool_calls=[
                {"id": "w1", "name": "Write", "arguments": {"file_path": f"{outside}/w.txt"}}
                | {"arguments": {"file_path": f"{outside}/w.txt", "content": "escaped"}}
            ]
        ),
        Step(tool_calls=[bash("b2", f"cat {home.config}")]),
        Step(
            tool_calls=[{"id": "r1", "name": "Read", "arguments": {"file_path": str(home.config)}}]
        ),
        Step(tool_calls=[bash("b3", f"echo x > {home.tools}/evil.py")]),
        Step(text="Tried."),
    ]
    reply = ask(provider(claude_bin, home, status_for(mode)), "escape")
    assert reply.text == "Tried."
    assert list(outside.iterdir()) == []
    assert not (home.tools / "evil.py").exists()
    results = tool_results(api.requests)
    assert set(results) == {"b1", "w1", "b2", "r1", "b3"}
    assert SECRET not in json.dumps([r.body for r in api.requests])
    assert not any(c.ok for c in reply.tool_calls), reply.tool_calls


def test_a_skills_mcp_server_is_reached(
    claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any
) -> None:
    """Through the whole pipeline: the skill installed (pinned) by the owner, its MCP server
    started by the CLI under the sandbox, its tool's answer back to the model."""
    skill = home.home.parent / "mine" / "echo"
    skill.mkdir(parents=True)
    mcp = {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}
    (skill / "SKILL.md").write_text(
        "---\nname: echo\ndescription: Shouts text back.\ntriggers: shout\n"
        f"mcp: {json.dumps(mcp)}\n---\n\nUse the shout tool.\n"
    )
    assert run_omega("skills", "add", str(skill)).returncode == 0
    api.script = [
        # The CLI connects MCP servers while the first request is out; a real model takes a
        # few seconds to answer, and an instant one found the server "still connecting" on a
        # loaded machine.
        Step(
            tool_calls=[{"id": "m1", "name": "mcp__echo__shout", "arguments": {"text": "hey"}}],
            hang_secs=4.0,
        ),
        Step(text="It shouted back."),
    ]
    bin_dir = home.home.parent / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude_bin)
    env = {
        **cli_env,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
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
    assert "HEY" in tool_results(api.requests)["m1"]
    assert any(e.get("text") == "It shouted back." for e in result.events), result.events


def test_resume_at_max_turns(
    claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any
) -> None:
    api.script = [Step(tool_calls=[bash("b1", "echo one")]), Step(text="Finished after resuming.")]
    reply = ask(provider(claude_bin, home, max_turns=1), "count")
    assert reply.text == "Finished after resuming."
    assert len(api.requests) == 2
    assert api.requests[1].last_user_text.endswith("Continue where you left off.")
    assert "b1" in tool_results(api.requests[1:])  # the resumed session kept the first turn


def test_a_lean_background_call_leaves_no_session(
    claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any
) -> None:
    api.script = [Step(text='{"kind": "direct"}', planner=True)]
    planner = "You are the planner that routes requests for Omega. Answer with JSON.\nhi"
    reply = ask(provider(claude_bin, home), planner, use_tools=False)
    assert reply.text == '{"kind": "direct"}'
    [request] = api.planner_requests
    size = len(json.dumps(request.body))
    assert size <= LEAN_LIMIT, f"planning request is {size} bytes"
    assert request.body.get("tools") == []
    assert "Claude Code" not in request.system_text  # none of the CLI's own harness
    projects = Path(cli_env["HOME"]) / ".claude" / "projects"
    assert not list(projects.rglob("*.jsonl")) if projects.exists() else True


def test_no_secret_reaches_a_tool_result(
    claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any
) -> None:
    api.script = [
        Step(tool_calls=[bash("e1", "env; cat ../config.toml; cat ~/.claude.json")]),
        Step(text="Looked."),
    ]
    ask(provider(claude_bin, home), "look around")
    results = tool_results(api.requests)
    assert "PATH=" in results["e1"]  # the command ran
    everything = json.dumps([r.body for r in api.requests])
    for secret in [SECRET, *ENV_SECRETS.values()]:
        assert secret not in everything


def test_not_logged_in_is_one_clear_sentence(
    claude_bin: Path, home: OmegaPaths, api: FakeAnthropic, cli_env: Any, monkeypatch: Any
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    p = provider(claude_bin, home)
    assert p.availability() == (False, LOGIN_HINT)
    with pytest.raises(ProviderError) as err:
        ask(p)
    assert err.value.hint == LOGIN_HINT and err.value.kind == "unavailable"
    assert api.requests == []


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


def user_python() -> str | None:
    """An interpreter of this Python version that any user may run (a virtualenv's `python`
    may point into root's home)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        candidate = Path(folder, version)
        if candidate.is_file() and os.stat(candidate).st_mode & 0o001:
            return str(candidate)
    return None


def test_as_an_ordinary_user_with_default_settings(
    claude_bin: Path, api: FakeAnthropic, monkeypatch: Any
) -> None:
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
        (home / "config.toml").write_text(f'secret = "{SECRET}"\n')
        program = base / "claude"
        try:
            os.link(claude_bin.resolve(), program)
        except OSError:
            shutil.copy2(claude_bin.resolve(), program)
        for path in [base, *base.rglob("*")]:
            os.chown(path, uid, uid)
        os.chmod(base, 0o755)
        api.script = [
            Step(tool_calls=[bash("b1", "echo mine > note.txt && cat note.txt")]),
            Step(tool_calls=[bash("b2", f"cat {home}/config.toml")]),
            Step(tool_calls=[bash("b3", f"echo escaped > {outside}/x.txt")]),
            Step(text="All done."),
        ]
        env = {
            **claude_env(api.base_url, user_home),
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
        results = tool_results(api.requests)
        assert "mine" in results["b1"]
        assert SECRET not in json.dumps([r.body for r in api.requests])
        assert any(w in results["b2"] for w in ("Permission denied", "No such file", "blocked"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
