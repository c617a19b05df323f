"""The real `claude` CLI for contract tests and the benchmark: the pinned version (the one the
fake's transcripts were recorded from), installed once with npm by scripts/install-claude-cli.sh,
pointed at the project's fake Messages API; and the set-up its tests share (RealClaude, behind
the `real_claude` fixture in tests/conftest.py). No pytest here: the benchmark uses it too."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.claude.code import ClaudeCodeProvider
from omega.sandbox import Sandbox, SandboxStatus
from omega.types import ChatMessage, Context, Reply
from tests.fakes.anthropic_server import FakeAnthropic, RecordedRequest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install-claude-cli.sh"
VERSION = (ROOT / "tests" / "fixtures" / "claude_cli" / "VERSION").read_text().strip()
API_KEY = "sk-ant-contract-test-0000"


class UnavailableError(Exception):
    """The pinned CLI cannot be had here (the reason says why)."""


def pinned_claude() -> Path:
    """The pinned CLI's executable, installed on first use; Unavailable without npm."""
    if shutil.which("npm") is None:
        raise UnavailableError(f"npm is not installed, so the real claude CLI {VERSION} cannot be")
    done = subprocess.run(
        [str(INSTALL), VERSION], capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        raise UnavailableError(f"installing claude {VERSION} failed: {done.stderr.strip()[-500:]}")
    return Path(done.stdout.strip().splitlines()[-1])


def claude_env(base_url: str, home: Path, *, key: bool = True) -> dict[str, str]:
    """What the CLI needs to talk to the fake API from a fresh home, and nothing more."""
    env = {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    if key:
        env["ANTHROPIC_API_KEY"] = API_KEY
    return env


# ---- the set-up the contract and attack tests share (the `real_claude` fixture in conftest) ----

CONFIG_SECRET = "sk-config-secret-in-toml-4242"  # in $OMEGA_HOME/config.toml
ENV_SECRETS = {"OPENAI_API_KEY": "sk-openai-env-secret-77", "TELEGRAM_BOT_TOKEN": "99:tg-secret-88"}


@dataclass
class RealClaude:
    """The pinned CLI against the fake Messages API: an $OMEGA_HOME with a secret in
    config.toml, a fresh user home, and `env` (the CLI's environment plus Omega's other
    secrets), which the fixture also sets in the test's own environment."""

    bin: Path
    api: FakeAnthropic
    paths: OmegaPaths
    env: dict[str, str]

    @classmethod
    def prepare(
        cls, claude: Path, api: FakeAnthropic, omega_home: Path, user_home: Path
    ) -> RealClaude:
        """Lay out both homes; nothing is started but what `api` already is."""
        paths = OmegaPaths(omega_home)
        paths.ensure()
        paths.config.write_text(f'[provider.anthropic]\napi_key = "{CONFIG_SECRET}"\n')
        (user_home / ".claude").mkdir(parents=True)
        env = {**claude_env(api.base_url, user_home), **ENV_SECRETS}
        return cls(claude, api, paths, env)

    @property
    def user_home(self) -> Path:
        """The user's home the CLI runs from ($HOME)."""
        return Path(self.env["HOME"])

    def provider(
        self, status: SandboxStatus | None = None, executable: Path | None = None, **config: Any
    ) -> ClaudeCodeProvider:
        """The provider with default settings (sandbox mode); `status` plays another system,
        `executable` another way of finding the CLI (default: the pinned one)."""
        sandbox = Sandbox(SandboxSection(), self.paths, status=status)
        return ClaudeCodeProvider(
            ClaudeCodeConfig(**config),
            self.paths.workspace,
            executable=str(executable or self.bin),
            sandbox=sandbox,
        )

    def path_with_claude(self, path: str | None = None) -> str:
        """`path` (default: this process's PATH) with a folder holding `claude` first, as an
        installed CLI is found by `omega` itself."""
        bin_dir = self.paths.home.parent / "bin"
        bin_dir.mkdir(exist_ok=True)
        if not (bin_dir / "claude").exists():
            (bin_dir / "claude").symlink_to(self.bin)
        return f"{bin_dir}{os.pathsep}{path or os.environ['PATH']}"


def ask(p: ClaudeCodeProvider, text: str = "hi", **kwargs: Any) -> Reply:
    """One completion with tools (unless told otherwise) under "You are Omega."."""
    kwargs.setdefault("use_tools", True)
    context = Context(
        system_prompt="You are Omega.", messages=[ChatMessage("user", text)], **kwargs
    )
    return asyncio.run(p.complete(context))


def bash(call_id: str, command: str) -> dict[str, Any]:
    """A scripted Bash tool call."""
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


def user_python() -> str | None:
    """An interpreter of this Python version that any user may run (a virtualenv's `python`
    may point into root's home)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        candidate = Path(folder, version)
        if candidate.is_file() and os.stat(candidate).st_mode & 0o001:
            return str(candidate)
    return None
