"""The real `claude` CLI for contract tests and the benchmark: the pinned version (the one the
fake's transcripts were recorded from), installed once with npm by scripts/install-claude-cli.sh,
pointed at the project's fake Messages API."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
