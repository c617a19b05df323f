"""How Omega runs the `claude` CLI: which tools and permission mode a call gets, the
environment it sees (an allow-list, never a credential), the login it is handed (through a
pipe, see `claude.home`), the flags of lean background calls, and one clear sentence for each
way the CLI can be unusable (missing, not logged in, too old).

Tools: with the OS sandbox enforced, the CLI runs in `bypassPermissions` mode and the sandbox is
what confines it (as root the CLI wants IS_SANDBOX=1, said only then). Where the sandbox is not
enforced, the CLI's own `acceptEdits` mode keeps it to the workspace: edits and simple commands
there, any other program refused. A configured `allowed_tools` means exactly those tools.
Someone other than the owner who may not run commands or write gets the read-only tools their
`[auth] people_tools` / `group_tools` stand for (READ_ONLY_NEEDS), and someone with no tool at
all (a guest) an answering call without tools, like a background call's `--tools ""`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from omega.config.providers import ClaudeCodeConfig
from omega.providers.base import ProviderError
from omega.sandbox import SandboxStatus
from omega.types import ToolAccess

# Built-in tools of an answering call with no `allowed_tools` configured.
DEFAULT_TOOLS = ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "WebSearch")
READ_ONLY_TOOLS = ("Read", "Glob", "Grep", "WebFetch", "WebSearch")
# Pre-approved where the CLI would otherwise ask (nobody can answer a prompt under `-p`).
WEB_TOOLS = ("WebFetch", "WebSearch")
# For a person other than the owner, each of the CLI's read-only tools is offered only when
# `[auth] people_tools` / `group_tools` gives them one of these tools of Omega's own.
READ_ONLY_NEEDS: dict[str, frozenset[str]] = {
    "Read": frozenset({"read_file", "list_files"}),
    "Glob": frozenset({"read_file", "list_files"}),
    "Grep": frozenset({"read_file", "list_files"}),
    "WebFetch": frozenset({"fetch_url"}),
    "WebSearch": frozenset({"fetch_url"}),
}
MIN_VERSION = (2, 1, 0)  # --tools, --system-prompt, --strict-mcp-config, --no-session-persistence
TESTED_VERSION = "2.1.197"  # the version the contract tests pin (tests/integration)
BACKGROUND_SYSTEM_PROMPT = "You are a helpful assistant. Answer the request."
CHECK_TIMEOUT_SECS = 10.0

INSTALL_HINT = (
    "The `claude` CLI is not installed or not on PATH: install it with "
    "`npm install -g @anthropic-ai/claude-code`, then run `claude` once to log in."
)
LOGIN_HINT = (
    "The `claude` CLI has no login for Omega (it never uses your own ~/.claude login): run "
    "`claude setup-token` and put the token in config.toml as `oauth_token` under "
    "[provider.claude-code] (or set CLAUDE_CODE_OAUTH_TOKEN; an API key: `api_key` there or "
    "ANTHROPIC_API_KEY), then try again."
)
# The CLI reads its login from these file descriptors (a pipe Omega fills), never from an
# environment a child could read in /proc/<pid>/environ.
OAUTH_FD_VAR = "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR"
API_KEY_FD_VAR = "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR"

# The environment the CLI gets: these names, and names with these prefixes.
ENV_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "TZ",
        "TMPDIR",
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        # The CLI's own switches without a CLAUDE_ prefix.
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_BUG_COMMAND",
        "DISABLE_COST_WARNINGS",
        "DISABLE_PROMPT_CACHING",
        "MAX_THINKING_TOKENS",
        "MCP_TIMEOUT",
        "MCP_TOOL_TIMEOUT",
        "BASH_DEFAULT_TIMEOUT_MS",
        "BASH_MAX_TIMEOUT_MS",
        "BASH_MAX_OUTPUT_LENGTH",
    }
)
ENV_PREFIXES = ("LC_", "ANTHROPIC_", "CLAUDE_")
# Cloud credentials, only when the CLI is set to use that cloud (Bedrock, Vertex).
CLOUD_PREFIXES = {
    "CLAUDE_CODE_USE_BEDROCK": ("AWS_",),
    "CLAUDE_CODE_USE_VERTEX": ("GOOGLE_", "GCLOUD_", "CLOUD_ML_", "VERTEX_REGION_"),
}
# Never passed on: the nested-session marker, the root switch (set only where it holds), the
# login (handed over through a pipe instead) and where the CLI keeps its state (Omega's own).
NEVER = frozenset(
    {
        "CLAUDECODE",
        "IS_SANDBOX",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
        "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
        OAUTH_FD_VAR,
        API_KEY_FD_VAR,
        "CLAUDE_CONFIG_DIR",
        "CLAUDE_SECURESTORAGE_CONFIG_DIR",
        "CLAUDE_BG_AUTH_SNAPSHOT_PATH",
        "CLAUDE_CODE_SHELL_PREFIX",
        "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB",
    }
)

ModeName = Literal["confined", "unrestricted", "restricted", "read-only", "configured"]


def cli_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The CLI's environment: the allow-list taken from `environ` (never Omega's other
    secrets, never CLAUDECODE, which would make it refuse to run as a nested session)."""
    prefixes = list(ENV_PREFIXES)
    for switch, extra in CLOUD_PREFIXES.items():
        if environ.get(switch, "").strip() not in ("", "0", "false"):
            prefixes += extra
    return {
        name: value
        for name, value in environ.items()
        if name not in NEVER and (name in ENV_NAMES or name.startswith(tuple(prefixes)))
    }


@dataclass(frozen=True)
class Credential:
    """The login the CLI gets: the file-descriptor variable it reads it from, and the secret."""

    fd_var: str
    secret: str = field(repr=False)


def credential(config: ClaudeCodeConfig, environ: Mapping[str, str]) -> Credential | None:
    """The owner's login for the CLI: [provider.claude-code] oauth_token (from `claude
    setup-token`) or api_key, else CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY; None when
    there is none (the owner's own ~/.claude login is never used)."""
    choices = (
        (OAUTH_FD_VAR, config.oauth_token.get_secret_value()),
        (API_KEY_FD_VAR, config.api_key.get_secret_value()),
        (OAUTH_FD_VAR, environ.get("CLAUDE_CODE_OAUTH_TOKEN", "")),
        (API_KEY_FD_VAR, environ.get("ANTHROPIC_API_KEY", "")),
    )
    for var, secret in choices:
        if secret.strip():
            return Credential(var, secret.strip())
    return None


@dataclass(frozen=True)
class ToolMode:
    """The tools and permission mode of an answering call, and why."""

    name: ModeName
    permission_mode: str
    tools: tuple[str, ...]  # built-in tools available (--tools)
    allowed: tuple[str, ...] = ()  # pre-approved rules (--allowedTools)
    is_sandbox: bool = False  # tell the CLI (running as root) that the OS sandbox encloses it
    reason: str = ""

    def args(self, mcp_tools: Sequence[str] = ()) -> list[str]:
        """The CLI flags of this mode, with the MCP servers' tools pre-approved."""
        allowed = list(dict.fromkeys([*self.allowed, *mcp_tools]))
        argv = ["--permission-mode", self.permission_mode, "--tools", ",".join(self.tools)]
        if allowed:
            argv += ["--allowedTools", ",".join(allowed)]
        if self.name == "read-only":
            argv.append("--strict-mcp-config")  # the owner's own MCP servers are not theirs
        return argv

    def describe(self) -> str:
        """One line for `omega status`, `/status` and the heartbeat's self-audit."""
        tools = ", ".join(self.tools) or "none"
        if self.name == "confined":
            return f"full ({tools}), confined by the OS sandbox ({self.reason})"
        if self.name == "unrestricted":
            return f"full ({tools}) and UNRESTRICTED: {self.reason}"
        if self.name == "restricted":
            return (
                f"RESTRICTED to the workspace by the CLI's acceptEdits mode (edits and simple "
                f"commands there, no other programs) because {self.reason}"
            )
        if self.name == "read-only":
            return f"read-only ({tools}): {self.reason}"
        return f"as configured in allowed_tools ({', '.join(self.allowed)})"


def _base_name(rule: str) -> str:
    """The tool a permission rule is about: `Bash(ls:*)` -> `Bash`."""
    return rule.split("(", 1)[0].strip()


def running_as_root() -> bool:
    """Whether Omega runs as root (the CLI then wants IS_SANDBOX=1 for bypassPermissions)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def tool_mode(
    config: ClaudeCodeConfig,
    status: SandboxStatus,
    *,
    root: bool | None = None,
    access: ToolAccess = "full",
    allowed: frozenset[str] | None = None,
) -> ToolMode:
    """The tool mode of an answering call for this configuration, sandbox and person.

    `allowed` is the person's own tools (Context.allowed_tools; None: every one): read-only,
    they get the CLI's file reading (Read, Glob, Grep) only with read_file or list_files and
    its web tools (WebFetch, WebSearch) only with fetch_url, so none without any."""
    if root is None:
        root = running_as_root()
    configured = [r for r in config.allowed_tools if r.strip()]
    builtin = [_base_name(r) for r in configured if not r.startswith("mcp__")]
    if access == "read_only":
        pool = builtin if configured else list(DEFAULT_TOOLS)
        tools = tuple(
            t
            for t in READ_ONLY_TOOLS
            if t in pool and (allowed is None or READ_ONLY_NEEDS[t] & allowed)
        )
        return ToolMode(
            "read-only",
            "default",
            tools,
            allowed=tuple(t for t in WEB_TOOLS if t in tools),
            reason="this person may not run commands or write files",
        )
    if configured:
        return ToolMode(
            "configured", "default", tuple(dict.fromkeys(builtin)), allowed=tuple(configured)
        )
    enforced = status.mode != "rwx" and not status.degraded
    if enforced:
        reason = f"{status.mode}, {status.enforcement}"
        return ToolMode(
            "confined", "bypassPermissions", DEFAULT_TOOLS, is_sandbox=root, reason=reason
        )
    if status.mode == "rwx" and not root:
        return ToolMode(
            "unrestricted",
            "bypassPermissions",
            DEFAULT_TOOLS,
            reason="the sandbox mode is rwx, so commands can reach everything you can",
        )
    if status.degraded:
        why = f"the OS sandbox is not enforced here ({status.detail})"
    else:
        why = "the sandbox mode is rwx and Omega runs as root"
    return ToolMode("restricted", "acceptEdits", DEFAULT_TOOLS, allowed=WEB_TOOLS, reason=why)


def background_args(system_file: Path) -> list[str]:
    """Flags of a background call (planning, summaries, facts, heartbeat, introspection,
    critic): Omega's instructions (in `system_file`) as the whole system prompt, no tools, no
    MCP servers, no skills, no session left on disk, one turn."""
    return [
        "--max-turns",
        "1",
        "--system-prompt-file",
        str(system_file),
        "--tools",
        "",
        "--strict-mcp-config",
        "--no-session-persistence",
        "--disable-slash-commands",
    ]


def parse_version(text: str) -> tuple[int, ...] | None:
    """`2.1.197 (Claude Code)` -> (2, 1, 197); None when there is no version in it."""
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(part) for part in match.groups()) if match else None


def too_old_hint(version: str) -> str:
    """The sentence for a CLI older than Omega needs."""
    need = ".".join(map(str, MIN_VERSION))
    return (
        f"The `claude` CLI {version or '(unknown version)'} is too old for Omega, which needs "
        f"{need} or newer: update it with `claude update` "
        "(or `npm install -g @anthropic-ai/claude-code`)."
    )


_UNKNOWN_OPTION = re.compile(r"unknown option '(--[\w-]+)'")
_LOGIN_TEXTS = ("not logged in", "please run /login", "invalid api key", "oauth token has expired")


def login_failed(text: str, error: str = "") -> bool:
    """Whether the CLI's answer or error says it has no valid login."""
    lowered = text.lower()
    return error == "authentication_failed" or any(t in lowered for t in _LOGIN_TEXTS)


def exit_error(returncode: int | None, stderr: str, version: str = "") -> ProviderError:
    """The error for a run that ended without a result (one clear sentence where known)."""
    tail = stderr.strip()[-300:]
    option = _UNKNOWN_OPTION.search(stderr)
    if option:
        return ProviderError(
            f"claude CLI rejected {option.group(1)}: {tail}",
            kind="unavailable",
            hint=too_old_hint(version),
        )
    if login_failed(stderr):
        return ProviderError(f"claude CLI is not logged in: {tail}", "unavailable", hint=LOGIN_HINT)
    if returncode:
        return ProviderError(f"claude CLI exited {returncode}: {tail}")
    return ProviderError(f"claude CLI gave no result: {tail}")


@dataclass(frozen=True)
class CliCheck:
    """What `claude --version` and `claude auth status` said."""

    ok: bool
    version: str = ""
    hint: str = ""  # the sentence saying what to do when not ok


Asker = Callable[[Sequence[str]], "subprocess.CompletedProcess[str] | None"]


def check_cli(executable: str, ask: Asker) -> CliCheck:
    """Ask the CLI its version and whether it is logged in (a few hundred ms); `ask` runs it
    with those arguments (confined, in its private home) and returns None when it cannot."""
    done = ask(["--version"])
    if done is None or done.returncode != 0:
        return CliCheck(False, hint=f"The `claude` CLI at {executable} does not run: reinstall it.")
    version = done.stdout.strip().split(" ")[0]
    parsed = parse_version(done.stdout)
    if parsed is None or parsed < MIN_VERSION:
        return CliCheck(False, version, too_old_hint(version))
    auth = ask(["auth", "status"])
    try:
        logged_in = json.loads(auth.stdout).get("loggedIn") if auth else None
    except (ValueError, AttributeError):
        logged_in = None  # no such command here: the first call will tell
    if logged_in is False:
        return CliCheck(False, version, LOGIN_HINT)
    return CliCheck(True, version)


def describe_tools(config: ClaudeCodeConfig, status: SandboxStatus) -> str:
    """What Claude Code's tools may do here, for the owner (status and self-audit)."""
    return tool_mode(config, status).describe()
