"""How Omega runs the `claude` CLI: tool modes, the environment allow-list, versions, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.claude.cli import (
    API_KEY_FD_VAR,
    DEFAULT_TOOLS,
    LOGIN_HINT,
    OAUTH_FD_VAR,
    background_args,
    cli_environment,
    credential,
    exit_error,
    parse_version,
    tool_mode,
)
from omega.sandbox import Sandbox, SandboxStatus

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ENFORCED = SandboxStatus("sandbox", "landlock ABI 7", degraded=False)
DEGRADED = SandboxStatus("rx", "none", degraded=True, detail="no Landlock here")
RWX = SandboxStatus("rwx", "none", degraded=False)


@pytest.mark.parametrize(
    ("status", "root", "name", "permission", "is_sandbox"),
    [
        (ENFORCED, True, "confined", "bypassPermissions", True),
        (ENFORCED, False, "confined", "bypassPermissions", False),
        (DEGRADED, True, "restricted", "acceptEdits", False),
        (DEGRADED, False, "restricted", "acceptEdits", False),
        (RWX, False, "unrestricted", "bypassPermissions", False),
        (RWX, True, "restricted", "acceptEdits", False),  # IS_SANDBOX would be a lie
    ],
)
def test_default_tools_follow_the_sandbox(
    status: SandboxStatus, root: bool, name: str, permission: str, is_sandbox: bool
) -> None:
    mode = tool_mode(ClaudeCodeConfig(), status, root=root)
    assert (mode.name, mode.permission_mode, mode.is_sandbox) == (name, permission, is_sandbox)
    assert mode.tools == DEFAULT_TOOLS
    assert {"Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch"} <= set(mode.tools)
    args = mode.args(["mcp__notes__*"])
    assert args[args.index("--tools") + 1] == ",".join(DEFAULT_TOOLS)
    assert args[args.index("--allowedTools") + 1].endswith("mcp__notes__*")


def test_status_lines_say_what_confines_claude() -> None:
    assert "confined by the OS sandbox (sandbox, landlock ABI 7)" in (
        tool_mode(ClaudeCodeConfig(), ENFORCED, root=False).describe()
    )
    restricted = tool_mode(ClaudeCodeConfig(), DEGRADED, root=False).describe()
    assert restricted.startswith("RESTRICTED") and "no Landlock here" in restricted
    assert "UNRESTRICTED" in tool_mode(ClaudeCodeConfig(), RWX, root=False).describe()


def test_configured_tools_mean_exactly_those() -> None:
    config = ClaudeCodeConfig(allowed_tools=["Read", "Bash(git status:*)", "mcp__gh__*"])
    mode = tool_mode(config, ENFORCED, root=True)
    assert (mode.name, mode.permission_mode, mode.is_sandbox) == ("configured", "default", False)
    assert mode.tools == ("Read", "Bash")
    assert mode.allowed == ("Read", "Bash(git status:*)", "mcp__gh__*")
    assert "Read, Bash(git status:*)" in mode.describe()


@pytest.mark.parametrize("allowed", [[], ["Bash", "Read", "Write"]])
def test_read_only_access_never_gets_bash_or_writes(allowed: list[str]) -> None:
    mode = tool_mode(ClaudeCodeConfig(allowed_tools=allowed), ENFORCED, access="read_only")
    assert not {"Bash", "Write", "Edit", "NotebookEdit"} & set(mode.tools)
    assert "Read" in mode.tools
    assert mode.permission_mode == "default" and not mode.is_sandbox
    assert "--strict-mcp-config" in mode.args()


FILES = ("Read", "Glob", "Grep")
WEB = ("WebFetch", "WebSearch")


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        (frozenset(), ()),
        (frozenset({"search_memory", "mcp"}), ()),
        (frozenset({"read_file"}), FILES),
        (frozenset({"list_files", "search_memory"}), FILES),
        (frozenset({"fetch_url"}), WEB),
        (frozenset({"read_file", "fetch_url"}), (*FILES, *WEB)),
        (None, (*FILES, *WEB)),
    ],
)
def test_read_only_tools_are_those_the_persons_own_tools_stand_for(
    allowed: frozenset[str] | None, expected: tuple[str, ...]
) -> None:
    mode = tool_mode(ClaudeCodeConfig(), ENFORCED, access="read_only", allowed=allowed)
    assert mode.tools == expected
    assert mode.allowed == tuple(t for t in WEB if t in expected)
    args = mode.args()
    assert args[args.index("--tools") + 1] == ",".join(expected)
    assert ("--allowedTools" in args) == bool(set(WEB) & set(expected))


def test_background_flags_are_lean() -> None:
    args = background_args(Path("/h/system.md"))
    assert args[args.index("--tools") + 1] == ""
    assert args[args.index("--max-turns") + 1] == "1"
    assert args[args.index("--system-prompt-file") + 1] == "/h/system.md"  # never its text
    assert {"--strict-mcp-config", "--no-session-persistence"} <= set(args)


def test_environment_allow_list() -> None:
    environ = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_TIME": "C",
        "ANTHROPIC_API_KEY": "a",
        "CLAUDE_CONFIG_DIR": "/c",
        "CLAUDECODE": "1",
        "OPENAI_API_KEY": "o",
        "TELEGRAM_BOT_TOKEN": "t",
        "OMEGA_PROVIDER__ANTHROPIC__API_KEY": "k",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "GOOGLE_APPLICATION_CREDENTIALS": "/g.json",
    }
    assert set(cli_environment(environ)) == {
        "PATH",
        "HOME",
        "LC_TIME",
    }  # the login goes through a pipe, the config dir is Omega's private one
    bedrock = cli_environment({**environ, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert "AWS_SECRET_ACCESS_KEY" in bedrock and "GOOGLE_APPLICATION_CREDENTIALS" not in bedrock
    vertex = cli_environment({**environ, "CLAUDE_CODE_USE_VERTEX": "1"})
    assert "GOOGLE_APPLICATION_CREDENTIALS" in vertex and "AWS_SECRET_ACCESS_KEY" not in vertex


def test_versions_and_exit_errors() -> None:
    assert parse_version("2.1.197 (Claude Code)") == (2, 1, 197)
    assert parse_version("claude") is None
    old = exit_error(1, "error: unknown option '--no-session-persistence'\n", "1.0.30")
    assert old.kind == "unavailable" and "1.0.30 is too old" in old.hint
    logged_out = exit_error(1, "Invalid API key · Please run /login")
    assert logged_out.hint == LOGIN_HINT
    crash = exit_error(139, "Segmentation fault")
    assert crash.kind == "error" and not crash.hint and "exited 139" in str(crash)


def test_claude_reaches_its_api_port_and_tools_do_not(tmp_path: Path) -> None:
    """A custom ANTHROPIC_BASE_URL (a local gateway, the tests' fake API) must be reachable
    by the CLI under Landlock's TCP rules; commands of other tools keep the plain ports."""
    sandbox = Sandbox(
        SandboxSection(),
        OmegaPaths(tmp_path / "home"),
        environ={"HOME": str(tmp_path), "ANTHROPIC_BASE_URL": "http://127.0.0.1:8931"},
    )
    assert 8931 in sandbox.tcp_ports("claude")
    assert 8931 not in sandbox.tcp_ports("tool")
    assert 8931 in (sandbox.policy(profile="claude").tcp_ports or ())


def test_the_login_comes_from_omegas_config_or_environment_never_claude_home() -> None:
    """A setup token (or key) given to Omega, handed over through a file descriptor."""
    empty = ClaudeCodeConfig()
    assert credential(empty, {"HOME": "/home/u"}) is None
    env_key = credential(empty, {"ANTHROPIC_API_KEY": " sk-ant-k "})
    assert env_key is not None and (env_key.fd_var, env_key.secret) == (API_KEY_FD_VAR, "sk-ant-k")
    both = {"ANTHROPIC_API_KEY": "sk-ant-k", "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-t"}
    assert credential(empty, both) == credential(
        empty, {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-t"}
    )
    configured = ClaudeCodeConfig(oauth_token="sk-ant-oat01-c")  # type: ignore[arg-type]
    login = credential(configured, both)
    assert login is not None and (login.fd_var, login.secret) == (OAUTH_FD_VAR, "sk-ant-oat01-c")
    assert "sk-ant-oat01-c" not in repr(login)


def test_stream_counts_prompt_tokens_read_from_cache() -> None:
    import json as _json

    from omega.providers.claude.stream import StreamParser

    parser = StreamParser()
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 900,
        "output_tokens": 4,
    }
    result = {"type": "result", "subtype": "success", "result": "ok", "usage": usage}
    parser.feed_line(_json.dumps(result).encode() + b"\n", 0.0)
    outcome = parser.finish(0.0)
    assert (outcome.input_tokens, outcome.cached_tokens) == (1110, 900)
