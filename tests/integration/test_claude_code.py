"""The Claude Code provider against a scripted fake `claude` CLI (tests/fakes/fake_claude.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.base import ProviderError, friendly_error, salvaged
from omega.providers.claude import cli as claude_cli
from omega.providers.claude import code as claude_code
from omega.providers.claude.cli import DEFAULT_TOOLS, INSTALL_HINT, LOGIN_HINT, tool_mode
from omega.providers.claude.code import ClaudeCodeProvider, OutputFormat
from omega.sandbox import Sandbox, SandboxStatus, probe
from omega.sandbox.servers import server_environment
from omega.types import ChatMessage, Context, McpServer, Reply
from tests.conftest import jsonl, run_omega
from tests.dbfile import connect_db
from tests.fakes.fake_claude import transcript, write_wrapper

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "fake_claude.py"
NOTES = McpServer("notes", "python3", ("-m", "notes_server"), (("NOTES_TOKEN", "t0k"),))
WEB = McpServer("web", "web-mcp")


@dataclass
class FakeClaude:
    """Scripts the fake CLI and reads back what it was called with."""

    script_path: Path
    log_path: Path

    def script(self, *runs: dict[str, Any]) -> None:
        """Set the runs the next invocations play, in order (the last repeats)."""
        self.script_path.write_text(json.dumps(list(runs)), encoding="utf-8")
        self.script_path.with_name(self.script_path.name + ".count").unlink(missing_ok=True)

    def calls(self) -> list[dict[str, Any]]:
        """One record per invocation so far."""
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeClaude]:
    """A `claude` wrapper first on PATH that runs the fake with this Python."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = FakeClaude(tmp_path / "script.json", tmp_path / "calls.jsonl")
    write_wrapper(
        bin_dir / "claude",
        FAKE_CLAUDE_SCRIPT=str(fake.script_path),
        FAKE_CLAUDE_LOG=str(fake.log_path),
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    fake.script({"result": "ok"})
    yield fake


@pytest.fixture
def workspace(isolated_env: Path) -> Path:
    """$OMEGA_HOME/workspace, where the provider runs the CLI."""
    return isolated_env / "workspace"


def make_provider(
    workspace: Path, output_format: OutputFormat = "stream-json", **config: Any
) -> ClaudeCodeProvider:
    """A provider in `workspace` with ClaudeCodeConfig(**config), in `rwx` mode: the fake
    keeps its script and log outside the workspace (the sandbox's own tests are below)."""
    rwx = Sandbox(SandboxSection(mode="rwx"), OmegaPaths(workspace.parent))
    return ClaudeCodeProvider(
        ClaudeCodeConfig(**config), workspace, output_format=output_format, sandbox=rwx
    )


def make_context(prompt: str = "What's up?", **kwargs: Any) -> Context:
    """A one-message context answering a person (tools on); kwargs go to Context."""
    kwargs.setdefault("use_tools", True)
    return Context(
        system_prompt=kwargs.pop("system_prompt", "You are Omega."),
        messages=[ChatMessage("user", prompt)],
        **kwargs,
    )


def complete(provider: ClaudeCodeProvider, context: Context) -> Reply:
    """Run one completion on a fresh event loop."""
    return asyncio.run(provider.complete(context))


def option(argv: list[str], name: str) -> str | None:
    """The value following `name` in argv, or None when it is absent."""
    return argv[argv.index(name) + 1] if name in argv else None


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, within: float = 3.0) -> bool:
    """Whether the process is gone, waiting a little for the kernel to finish with it."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def settings_file(workspace: Path) -> Path:
    """Where the provider writes the MCP servers for a call."""
    return workspace / ".claude" / "settings.local.json"


# --- output parsing ---------------------------------------------------------------------


@pytest.mark.no_store
@pytest.mark.parametrize("output_format", ["stream-json", "json"])
def test_output_is_parsed_into_a_reply(
    fake_claude: FakeClaude, workspace: Path, output_format: OutputFormat
) -> None:
    fake_claude.script(
        {
            "result": "Hello there",
            "session_id": "sess-1",
            "cost": 0.0234,
            "usage": {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 100},
        }
    )
    reply = complete(make_provider(workspace, output_format), make_context("hi"))
    assert reply.text == "Hello there"
    assert reply.provider == "claude-code"
    assert reply.model == "claude-sonnet-4-6"
    assert reply.usage.input_tokens == 112
    assert reply.usage.output_tokens == 7
    assert reply.usage.cost_usd == pytest.approx(0.0234)
    assert reply.session_id == "sess-1"
    assert reply.elapsed_ms > 0
    [call] = fake_claude.calls()
    argv = call["argv"]
    assert argv[0] == "-p" and call["prompt"] == "hi"  # the prompt on stdin, not in argv
    assert "hi" not in argv
    assert option(argv, "--output-format") == output_format
    assert ("--verbose" in argv) == (output_format == "stream-json")
    assert option(argv, "--max-turns") == "25"
    assert option(argv, "--resume") is None
    assert option(argv, "--tools") == ",".join(DEFAULT_TOOLS)
    assert Path(call["cwd"]).resolve() == workspace.resolve()
    assert call["settings"] is None


@pytest.mark.no_store
def test_json_output_as_an_event_array_or_pretty_printed(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    result = {"type": "result", "subtype": "success", "result": "arr", "session_id": "a1"}
    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    done = {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}
    events = [
        {"type": "system", "subtype": "init", "model": "claude-x"},
        {"type": "assistant", "message": {"content": [use]}},
        {"type": "user", "message": {"content": [done]}},
        result,
    ]
    pretty = {**result, "result": "pretty", "session_id": "p1"}
    fake_claude.script(
        {"no_result": True, "raw_lines": [json.dumps(events)]},
        {"no_result": True, "raw_lines": json.dumps(pretty, indent=2).splitlines()},
    )
    provider = make_provider(workspace, "json")
    reply = complete(provider, make_context())
    assert (reply.text, reply.session_id, reply.model) == ("arr", "a1", "claude-x")
    assert [(c.name, c.ok, c.result_preview) for c in reply.tool_calls] == [("Bash", True, "a.txt")]
    reply = complete(provider, make_context())
    assert (reply.text, reply.session_id) == ("pretty", "p1")


@pytest.mark.no_store
def test_model_comes_from_the_context_when_set(fake_claude: FakeClaude, workspace: Path) -> None:
    reply = complete(make_provider(workspace), make_context(model="claude-opus-4-6"))
    assert reply.model == "claude-opus-4-6"
    assert option(fake_claude.calls()[0]["argv"], "--model") == "claude-opus-4-6"
    complete(make_provider(workspace, model="claude-custom"), make_context())
    assert option(fake_claude.calls()[1]["argv"], "--model") == "claude-custom"


@pytest.mark.no_store
def test_claudecode_is_not_passed_to_the_child(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    complete(make_provider(workspace), make_context())
    assert fake_claude.calls()[0]["claudecode_in_env"] is False
    assert os.environ["CLAUDECODE"] == "1"  # only the child's env is cleaned


@pytest.mark.no_store
def test_system_prompt_history_and_allowed_tools_reach_the_cli(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    context = Context(
        system_prompt="You are Omega, be brief.",
        messages=[
            ChatMessage("user", "my name is Ada"),
            ChatMessage("assistant", "Hi Ada"),
            ChatMessage("user", "what is my name?"),
        ],
        use_tools=True,
    )
    complete(make_provider(workspace, allowed_tools=["Read", "Bash(ls:*)"]), context)
    [call] = fake_claude.calls()
    argv = call["argv"]
    assert call["append_system_prompt"] == "You are Omega, be brief."
    assert "You are Omega, be brief." not in argv
    # Exactly the configured tools: only those exist, and only those rules are pre-approved.
    assert option(argv, "--tools") == "Read,Bash"
    assert option(argv, "--allowedTools") == "Read,Bash(ls:*)"
    assert option(argv, "--permission-mode") == "default"
    prompt = call["prompt"]
    assert prompt is not None and prompt not in argv
    assert "User: my name is Ada" in prompt and "Assistant: Hi Ada" in prompt
    assert prompt.endswith("what is my name?")

    complete(make_provider(workspace), make_context("--help me", system_prompt=""))
    call = fake_claude.calls()[1]
    assert "--append-system-prompt-file" not in call["argv"]
    assert call["prompt"] == "--help me"  # on stdin a leading dash cannot read as an option


@pytest.mark.no_store
def test_unparseable_and_overlong_lines_are_skipped(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_code, "MAX_LINE_BYTES", 2000)
    fake_claude.script({"result": "survived", "raw_lines": ["not json", "{broken", "x" * 10_000]})
    assert complete(make_provider(workspace), make_context()).text == "survived"


@pytest.mark.no_store
def test_result_text_is_capped(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_code, "MAX_RESULT_CHARS", 100)
    fake_claude.script({"result": "y" * 500})
    assert complete(make_provider(workspace), make_context()).text == "y" * 100


# --- tool calls -------------------------------------------------------------------------


@pytest.mark.no_store
def test_tool_calls_are_captured(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script(
        {
            "result": "Listed and read.",
            "tool_uses": [
                {"name": "Bash", "input": {"command": "ls"}, "result": "a\nb", "sleep": 0.2},
                {
                    "name": "Read",
                    "input": {"file_path": "/nope"},
                    "result": "File does not exist.",
                    "is_error": True,
                },
                {
                    "name": "WebFetch",
                    "input": {"url": "https://example.org"},
                    "result": [{"type": "text", "text": "z" * 1000}, {"type": "image"}],
                },
                {"name": "Task", "input": {}, "no_result": True},
            ],
        }
    )
    reply = complete(make_provider(workspace), make_context())
    bash, read, fetch, task = reply.tool_calls
    assert (bash.name, bash.arguments, bash.ok, bash.result_preview) == (
        "Bash",
        {"command": "ls"},
        True,
        "a\nb",
    )
    assert bash.error == ""
    assert bash.duration_ms >= 150
    assert (read.name, read.ok, read.error) == ("Read", False, "File does not exist.")
    assert fetch.ok and fetch.result_preview == "z" * 300
    assert (task.name, task.ok) == ("Task", False)
    assert reply.text == "Listed and read."


@pytest.mark.no_store
def test_json_output_has_no_tool_calls(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"result": "r", "tool_uses": [{"name": "Bash", "input": {}}]})
    assert complete(make_provider(workspace, "json"), make_context()).tool_calls == ()


# --- auto-resume ------------------------------------------------------------------------


@pytest.mark.no_store
def test_max_turns_resumes_and_accumulates(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script(
        {"subtype": "error_max_turns", "session_id": "s1", "result": "part one", "cost": 0.01},
        {"subtype": "error_max_turns", "session_id": "s2", "result": "part two", "cost": 0.02},
        {
            "session_id": "s3",
            "result": "done",
            "cost": 0.03,
            "tool_uses": [{"name": "Bash", "input": {"command": "pwd"}, "result": "/w"}],
        },
    )
    reply = complete(make_provider(workspace, max_resume_attempts=3), make_context("do it"))
    calls = fake_claude.calls()
    assert len(calls) == 3
    assert option(calls[0]["argv"], "--resume") is None
    assert calls[0]["prompt"] == "do it"
    assert option(calls[1]["argv"], "--resume") == "s1"
    assert option(calls[2]["argv"], "--resume") == "s2"
    for call in calls[1:]:
        assert call["prompt"] == "Continue where you left off."
        assert call["append_system_prompt"] == "You are Omega."
    assert reply.text == "part one\n\npart two\n\ndone"
    assert reply.usage.cost_usd == pytest.approx(0.06)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (30, 15)
    assert reply.session_id == "s3"
    assert [c.name for c in reply.tool_calls] == ["Bash"]


@pytest.mark.no_store
def test_resume_stops_after_max_resume_attempts(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"subtype": "error_max_turns", "session_id": "again", "result": "more"})
    reply = complete(make_provider(workspace, max_resume_attempts=2), make_context())
    assert len(fake_claude.calls()) == 3
    assert reply.text == "more\n\nmore\n\nmore"
    assert reply.session_id == "again"


@pytest.mark.no_store
def test_max_turns_without_any_text_is_an_error(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"subtype": "error_max_turns", "session_id": "s", "result": None})
    with pytest.raises(ProviderError, match="error_max_turns"):
        complete(make_provider(workspace, max_resume_attempts=0), make_context())
    assert len(fake_claude.calls()) == 1


# --- errors -----------------------------------------------------------------------------


@pytest.mark.no_store
def test_missing_cli_is_unavailable(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    provider = make_provider(workspace)
    available, reason = provider.availability()
    assert not available and reason == INSTALL_HINT
    with pytest.raises(ProviderError) as err:
        complete(provider, make_context())
    assert err.value.kind == "unavailable"
    assert err.value.hint == INSTALL_HINT


@pytest.mark.no_store
def test_availability_names_the_cli(fake_claude: FakeClaude, workspace: Path) -> None:
    available, reason = make_provider(workspace).availability()
    assert available and reason.split(" ")[0].endswith("/claude")
    asyncio.run(make_provider(workspace).prepare())


@pytest.mark.no_store
def test_nonzero_exit_without_result_reports_stderr(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    fake_claude.script({"exit_code": 2, "stderr": "noise " * 100 + "Segmentation fault"})
    with pytest.raises(ProviderError) as err:
        complete(make_provider(workspace), make_context())
    assert err.value.kind == "error"
    assert "exited 2" in str(err.value) and str(err.value).endswith("Segmentation fault")
    assert len(str(err.value)) < 400


@pytest.mark.no_store
def test_error_result_without_text_raises(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"is_error": True, "subtype": "error_during_execution", "result": None})
    with pytest.raises(ProviderError, match="error_during_execution"):
        complete(make_provider(workspace), make_context())


@pytest.mark.no_store
def test_timeout_kills_the_whole_process_group(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"sleep": 30, "spawn_child": True})
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        complete(make_provider(workspace, timeout_secs=1), make_context())
    assert err.value.kind == "timeout"
    assert time.monotonic() - started < 10
    [call] = fake_claude.calls()
    assert wait_gone(call["pid"])
    assert wait_gone(call["child_pid"])  # the CLI's own children go too


# --- MCP servers ------------------------------------------------------------------------


@pytest.mark.no_store
def test_mcp_settings_written_for_the_call_then_removed(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    provider = make_provider(workspace, allowed_tools=["Read"])
    complete(provider, make_context(mcp_servers=(NOTES, WEB)))
    [call] = fake_claude.calls()
    assert call["settings"] == {
        "mcpServers": {
            "notes": {
                "command": "python3",
                "args": ["-m", "notes_server"],
                "env": server_environment({"NOTES_TOKEN": "t0k"}),
            },
            "web": {"command": "web-mcp", "args": [], "env": server_environment({})},
        }
    }
    assert call["settings_mode"] == 0o600
    assert option(call["argv"], "--allowedTools") == "Read,mcp__notes__*,mcp__web__*"
    assert option(call["argv"], "--mcp-config") == str(settings_file(workspace))
    assert not settings_file(workspace).exists()
    assert not (workspace / ".claude").exists()  # we created it, we remove it


@pytest.mark.no_store
def test_internal_calls_without_tools_get_one_turn(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    context = replace(make_context(mcp_servers=(NOTES,)), use_tools=False)
    complete(make_provider(workspace), context)
    [call] = fake_claude.calls()
    argv = call["argv"]
    assert option(argv, "--max-turns") == "1"
    assert option(argv, "--tools") == ""  # no tools at all for a background call
    # Omega's instructions are the whole system prompt: none of the CLI's harness.
    assert call["system_prompt"] == "You are Omega."
    assert "--append-system-prompt-file" not in argv
    assert {"--strict-mcp-config", "--no-session-persistence", "--disable-slash-commands"} <= set(
        argv
    )
    assert "--mcp-config" not in argv and call["settings"] is None  # no MCP servers either
    assert "--permission-mode" not in argv and "--allowedTools" not in argv


# --- tools, permission modes and environment --------------------------------------------


def sandbox_provider(
    workspace: Path, status: SandboxStatus, monkeypatch: pytest.MonkeyPatch, *, root: bool
) -> ClaudeCodeProvider:
    """A provider whose sandbox reports `status` (the fake runs unconfined either way)."""
    monkeypatch.setattr(claude_cli, "running_as_root", lambda: root)
    rwx = Sandbox(SandboxSection(mode="rwx"), OmegaPaths(workspace.parent))
    rwx._status = status  # what the tool mode is chosen from
    return ClaudeCodeProvider(ClaudeCodeConfig(), workspace, sandbox=rwx)


ENFORCED = SandboxStatus("sandbox", "landlock ABI 7", degraded=False)
DEGRADED = SandboxStatus("sandbox", "none", degraded=True, detail="no Landlock")


@pytest.mark.no_store
@pytest.mark.parametrize("root", [True, False], ids=["root", "user"])
def test_enforced_sandbox_gives_full_tools_and_is_sandbox_only_as_root(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch, root: bool
) -> None:
    monkeypatch.setenv("IS_SANDBOX", "1")  # never inherited: Omega alone decides
    write_wrapper(
        workspace.parent.parent / "bin" / "claude",
        FAKE_CLAUDE_SCRIPT=str(fake_claude.script_path),
        FAKE_CLAUDE_LOG=str(fake_claude.log_path),
        FAKE_CLAUDE_EUID="0" if root else "1000",  # as root it refuses bypass without IS_SANDBOX
    )
    provider = sandbox_provider(workspace, ENFORCED, monkeypatch, root=root)
    complete(provider, make_context())
    [call] = fake_claude.calls()
    assert option(call["argv"], "--permission-mode") == "bypassPermissions"
    assert option(call["argv"], "--tools") == ",".join(DEFAULT_TOOLS)
    assert ("IS_SANDBOX" in call["env"]) == root


@pytest.mark.no_store
@pytest.mark.parametrize("root", [True, False], ids=["root", "user"])
def test_degraded_sandbox_gives_the_restricted_mode(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch, root: bool
) -> None:
    provider = sandbox_provider(workspace, DEGRADED, monkeypatch, root=root)
    complete(provider, make_context())
    [call] = fake_claude.calls()
    assert option(call["argv"], "--permission-mode") == "acceptEdits"
    assert option(call["argv"], "--allowedTools") == "WebFetch,WebSearch"
    assert "IS_SANDBOX" not in call["env"]
    assert provider.tool_mode().describe().startswith("RESTRICTED")


@pytest.mark.no_store
def test_read_only_person_gets_no_bash_and_no_writes(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = sandbox_provider(workspace, ENFORCED, monkeypatch, root=True)
    complete(provider, make_context(tool_access="read_only", mcp_servers=(WEB,)))
    [call] = fake_claude.calls()
    argv = call["argv"]
    assert option(argv, "--tools") == "Read,Glob,Grep,WebFetch,WebSearch"
    assert option(argv, "--permission-mode") == "default"
    assert option(argv, "--allowedTools") == "WebFetch,WebSearch,mcp__web__*"
    assert "--strict-mcp-config" in argv  # the owner's own MCP servers are not theirs
    assert "IS_SANDBOX" not in call["env"]


@pytest.mark.no_store
def test_environment_is_an_allow_list(
    fake_claude: FakeClaude, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passed = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": "eu-west-1",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HTTPS_PROXY": "http://proxy:3128",
        "DISABLE_TELEMETRY": "1",
    }
    withheld = {
        "OPENAI_API_KEY": "sk-openai-secret",
        "TELEGRAM_BOT_TOKEN": "123:telegram-secret",
        "GEMINI_API_KEY": "gemini-secret",
        "OMEGA_PROVIDER__OPENAI__API_KEY": "sk-config-secret",
        "CLAUDECODE": "1",
        "IS_SANDBOX": "1",
        "DATABASE_PASSWORD": "hunter2",
        # The login reaches the CLI through a pipe, never its environment.
        "ANTHROPIC_API_KEY": "sk-ant-secret-for-claude",
        "CLAUDE_CONFIG_DIR": "/home/owner/.claude",
    }
    for name, value in {**passed, **withheld}.items():
        monkeypatch.setenv(name, value)
    complete(make_provider(workspace), make_context())
    [call] = fake_claude.calls()
    env = call["env"]
    assert {name: env.get(name) for name in passed} == passed
    assert not set(withheld) - {"CLAUDE_CONFIG_DIR"} & set(env)
    assert call["login"] == {"CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR": "sk-ant-secret-for-claude"}
    assert env["CLAUDE_CONFIG_DIR"].startswith(str(workspace / ".tmp" / "claude-home-"))
    assert not any("secret" in value or value == "hunter2" for value in env.values())
    assert env["HOME"] == os.environ["HOME"] and env["PATH"].startswith(os.environ["PATH"][:20])


# --- clear errors ---------------------------------------------------------------------


@pytest.mark.no_store
def test_not_logged_in_is_one_clear_sentence(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"transcript": "not_logged_in"})  # what the real CLI printed
    with pytest.raises(ProviderError) as err:
        complete(make_provider(workspace), make_context())
    assert err.value.kind == "unavailable" and err.value.hint == LOGIN_HINT
    assert friendly_error(err.value) == LOGIN_HINT  # what the chat shows


@pytest.mark.no_store
def test_an_error_result_is_never_the_answer(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"is_error": True, "result": "API Error: 500 overloaded"})
    with pytest.raises(ProviderError, match="API Error: 500"):
        complete(make_provider(workspace), make_context())


@pytest.mark.no_store
def test_an_error_after_billed_runs_leaves_what_they_cost(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    fake_claude.script(
        {"subtype": "error_max_turns", "session_id": "s1", "result": "part one", "cost": 0.02},
        {"is_error": True, "result": "API Error: 500 overloaded", "cost": 0.01},
    )
    with salvaged() as found, pytest.raises(ProviderError, match="API Error: 500"):
        complete(make_provider(workspace, max_resume_attempts=3), make_context())
    (spent,) = found.spent
    assert spent.provider == "claude-code" and spent.usage.cost_usd == pytest.approx(0.03)
    assert (spent.usage.input_tokens, spent.usage.output_tokens) == (20, 10)


@pytest.mark.no_store
def test_an_old_cli_without_our_flags_is_named(
    fake_claude: FakeClaude, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_wrapper(
        tmp_path / "bin" / "claude",
        FAKE_CLAUDE_SCRIPT=str(fake_claude.script_path),
        FAKE_CLAUDE_LOG=str(fake_claude.log_path),
        FAKE_CLAUDE_VERSION="1.0.30",
        FAKE_CLAUDE_UNKNOWN_OPTIONS="--no-session-persistence,--tools",
    )
    provider = make_provider(workspace)
    available, reason = provider.availability()
    assert not available and "1.0.30 is too old" in reason and "claude update" in reason
    with pytest.raises(ProviderError) as err:
        complete(provider, replace(make_context(), use_tools=False))
    assert err.value.kind == "unavailable"
    assert "too old for Omega" in err.value.hint and "Traceback" not in str(err.value)


@pytest.mark.no_store
def test_availability_says_when_not_logged_in(
    fake_claude: FakeClaude, workspace: Path, tmp_path: Path
) -> None:
    write_wrapper(tmp_path / "bin" / "claude", FAKE_CLAUDE_LOGGED_IN="0")
    assert make_provider(workspace).availability() == (False, LOGIN_HINT)


# --- the fake against the real CLI's recordings ---------------------------------------


@pytest.mark.no_store
@pytest.mark.parametrize("name", ["reply", "tool_use", "max_turns", "background"])
def test_fake_events_have_the_real_clis_shape(
    fake_claude: FakeClaude, workspace: Path, name: str
) -> None:
    """Each event the fake makes carries every field the real CLI's recorded event has."""
    recorded = transcript(name)
    run: dict[str, Any] = {"result": "x"}
    if name in ("tool_use", "max_turns"):
        run["tool_uses"] = [{"name": "Bash", "input": {"command": "ls"}, "result": "a"}]
    if name == "max_turns":
        run.update(subtype="error_max_turns", result=None)
    fake_claude.script(run)
    fake = subprocess.run(
        [str(Path(fake_claude.script_path).parent / "bin" / "claude"), "-p",
         "--output-format", "stream-json", "--verbose"],
        input="hi", capture_output=True, text=True, check=False,
        cwd=fake_claude.script_path.parent,
    )  # fmt: skip
    made = [json.loads(line) for line in fake.stdout.splitlines()]
    assert [e["type"] for e in made] == [e["type"] for e in recorded]
    for real, ours in zip(recorded, made, strict=True):
        assert set(real) <= set(ours), f"{real['type']} event lacks {set(real) - set(ours)}"
        if "message" in real:
            assert set(real["message"]) <= set(ours["message"])


@pytest.mark.no_store
@pytest.mark.parametrize(
    "run",
    [{"exit_code": 1, "stderr": "boom"}, {"sleep": 30}],
    ids=["failure", "timeout"],
)
def test_mcp_settings_removed_on_failure_and_timeout(
    fake_claude: FakeClaude, workspace: Path, run: dict[str, Any]
) -> None:
    fake_claude.script(run)
    with pytest.raises(ProviderError):
        complete(make_provider(workspace, timeout_secs=1), make_context(mcp_servers=(NOTES,)))
    assert fake_claude.calls()[0]["settings"]["mcpServers"]["notes"]["command"] == "python3"
    assert not settings_file(workspace).exists()
    assert not (workspace / ".claude").exists()


@pytest.mark.no_store
def test_mcp_settings_removed_on_cancellation(fake_claude: FakeClaude, workspace: Path) -> None:
    fake_claude.script({"sleep": 30})

    async def scenario() -> None:
        task = asyncio.create_task(
            make_provider(workspace).complete(make_context(mcp_servers=(NOTES,)))
        )
        for _ in range(200):  # until the fake has started
            if fake_claude.calls():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert not settings_file(workspace).exists()
    assert wait_gone(fake_claude.calls()[0]["pid"])


@pytest.mark.no_store
@pytest.mark.parametrize("run", [{"result": "ok"}, {"exit_code": 1}], ids=["success", "failure"])
def test_owners_settings_file_is_restored(
    fake_claude: FakeClaude, workspace: Path, run: dict[str, Any]
) -> None:
    fake_claude.script(run)
    path = settings_file(workspace)
    path.parent.mkdir(parents=True)
    original = b'{\n  "permissions": {"allow": ["Bash(ls)"]}\n}\n'
    path.write_bytes(original)
    path.chmod(0o644)
    try:
        complete(make_provider(workspace), make_context(mcp_servers=(WEB,)))
    except ProviderError:
        assert run.get("exit_code")
    seen = fake_claude.calls()[0]["settings"]
    assert seen["permissions"] == {"allow": ["Bash(ls)"]}  # the owner's settings still apply
    assert seen["mcpServers"] == {
        "web": {"command": "web-mcp", "args": [], "env": server_environment({})}
    }
    assert path.read_bytes() == original
    assert path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.local.json"]


@pytest.mark.no_store
def test_settings_left_by_a_crashed_call_are_recovered(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    claude_dir = workspace / ".claude"
    claude_dir.mkdir(parents=True)
    settings_file(workspace).write_text('{"mcpServers": {"stale": {}}}', encoding="utf-8")
    backup = claude_dir / "settings.local.json.omega-backup"
    backup.write_text(json.dumps({"previous": '{"owner": true}', "mode": 0o600}))
    complete(make_provider(workspace), make_context(mcp_servers=(WEB,)))
    assert fake_claude.calls()[0]["settings"] == {
        "owner": True,
        "mcpServers": {"web": {"command": "web-mcp", "args": [], "env": server_environment({})}},
    }
    assert settings_file(workspace).read_text(encoding="utf-8") == '{"owner": true}'
    assert not backup.exists()


@pytest.mark.no_store
def test_concurrent_mcp_calls_do_not_clobber_each_other(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    fake_claude.script({"result": "ok", "sleep": 0.3})
    provider = make_provider(workspace)

    async def both() -> None:
        await asyncio.gather(
            provider.complete(make_context(mcp_servers=(NOTES,))),
            provider.complete(make_context(mcp_servers=(WEB,))),
        )

    asyncio.run(both())
    seen = sorted(tuple(call["settings"]["mcpServers"]) for call in fake_claude.calls())
    assert seen == [("notes",), ("web",)]
    assert not settings_file(workspace).exists()


@pytest.mark.no_store
def test_mcp_server_with_an_unusable_name_is_skipped(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    bad = McpServer("bad,name", "x")
    complete(make_provider(workspace), make_context(mcp_servers=(bad, WEB)))
    [call] = fake_claude.calls()
    assert list(call["settings"]["mcpServers"]) == ["web"]
    assert option(call["argv"], "--allowedTools").endswith(",mcp__web__*")  # type: ignore[union-attr]
    assert "bad" not in option(call["argv"], "--allowedTools")  # type: ignore[operator]


# --- what the owner sees --------------------------------------------------------------


def test_status_and_chat_say_not_logged_in_in_one_sentence(
    fake_claude: FakeClaude, tmp_path: Path
) -> None:
    write_wrapper(
        tmp_path / "bin" / "claude",
        FAKE_CLAUDE_SCRIPT=str(fake_claude.script_path),
        FAKE_CLAUDE_LOG=str(fake_claude.log_path),
        FAKE_CLAUDE_LOGGED_IN="0",
    )
    fake_claude.script({"transcript": "not_logged_in"})
    # rwx: the fake and its transcripts live outside what the sandbox lets the CLI read.
    env = {"OMEGA_PROVIDER__DEFAULT": "claude-code", "OMEGA_SANDBOX__MODE": "rwx"}
    status = run_omega("status", env=env)
    assert status.returncode == 0, status.stderr
    rows = dict(line.split(None, 1) for line in status.stdout.splitlines() if line.strip())
    assert rows["available"] == f"no - {LOGIN_HINT}"
    assert "claude tools" in status.stdout
    chat = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hi", "sender_id": "o"}))
    assert chat.returncode == 0, chat.stderr
    texts = [e.get("text") for e in chat.events]
    assert LOGIN_HINT in texts, texts
    assert "Traceback" not in chat.stdout + chat.stderr


def test_status_reports_the_claude_tool_mode(fake_claude: FakeClaude) -> None:
    env = {"OMEGA_PROVIDER__DEFAULT": "claude-code", "OMEGA_SANDBOX__MODE": "rx"}
    status = run_omega("status", env=env)
    assert status.returncode == 0, status.stderr
    [line] = [x for x in status.stdout.splitlines() if x.startswith("claude tools")]
    expected = tool_mode(ClaudeCodeConfig(), probe("rx")).describe()
    assert line.split(None, 2)[2] == expected
    chat = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "/status"}))
    assert f"Claude Code tools: {expected}" in chat.stdout


def test_a_person_other_than_the_owner_gets_read_only_claude_tools_in_their_folder(
    fake_claude: FakeClaude, isolated_env: Path
) -> None:
    env = {
        "OMEGA_PROVIDER__DEFAULT": "claude-code",
        "OMEGA_SANDBOX__MODE": "rwx",  # the fake's files live outside any sandboxed folder
        "OMEGA_PROVIDER__CLASSIFY": "false",
    }
    chat = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl({"text": "hello from bob", "sender_id": "bob"}, {"text": "hello from me"}),
    )
    assert chat.returncode == 0, chat.stderr
    answering = [c for c in fake_claude.calls() if "--max-turns" in c["argv"]]
    [bob] = [c for c in answering if "hello from bob" in str(c["prompt"])]
    [owner] = [c for c in answering if "hello from me" in str(c["prompt"])]
    assert set(str(option(bob["argv"], "--tools")).split(",")) <= {
        "Read",
        "Glob",
        "Grep",
        "WebFetch",
        "WebSearch",
    }
    assert "Bash" in str(option(owner["argv"], "--tools"))
    people = (isolated_env / "workspace" / "people").resolve()
    assert Path(bob["cwd"]).resolve().parent == people
    assert Path(owner["cwd"]).resolve() == (isolated_env / "workspace").resolve()


def test_the_tool_calls_of_a_claude_run_that_timed_out_are_recorded_as_failed(
    fake_claude: FakeClaude, isolated_env: Path
) -> None:
    # Issue 28: a run that times out after its tools ran lost their record; now a failing Bash
    # command and the tool left waiting when the run was stopped are failed calls, through the
    # pipeline (the person hears of the timeout).
    fake_claude.script(
        {
            "result": "never",
            "tool_uses": [
                {
                    "name": "Bash",
                    "input": {"command": "make"},
                    "result": "Exit code 2\nmake: *** No targets.",
                    "is_error": True,
                },
                {"name": "Bash", "input": {"command": "sleep 60"}, "sleep": 30},
            ],
        }
    )
    env = {
        "OMEGA_PROVIDER__DEFAULT": "claude-code",
        "OMEGA_SANDBOX__MODE": "rwx",  # the fake's files live outside any sandboxed folder
        "OMEGA_PROVIDER__CLASSIFY": "false",
        "OMEGA_PROVIDER__CLAUDE_CODE__TIMEOUT_SECS": "3",
    }
    chat = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "build it"}), timeout=60)
    assert chat.returncode == 0, chat.stderr
    assert [e["kind"] for e in chat.events if e["kind"] in ("reply", "error")] == ["error"]
    conn = connect_db(isolated_env / "memory.db")
    rows = conn.execute("SELECT tool, ok, error, arguments FROM tool_calls ORDER BY id").fetchall()
    conn.close()
    assert [(tool, ok) for tool, ok, _, _ in rows] == [("Bash", 0), ("Bash", 0)]
    assert rows[0][2].startswith("Exit code 2")
    assert rows[1][2] == "timed out: the run was stopped"
    assert json.loads(rows[1][3]) == {"command": "sleep 60"}
