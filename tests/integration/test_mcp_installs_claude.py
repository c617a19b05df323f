"""The same ordinary MCP installs through the real `claude` CLI (the pinned version, against
the fake Messages API) under the DEFAULT sandbox: `mcp-server-time` in a virtualenv under the
user's home, the npm memory server through `npx` from a node under the user's home (offline),
and a server that cannot start told to the owner once, as the CLI's init report says."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omega.paths import OmegaPaths
from tests.conftest import CliResult, jsonl, run_omega
from tests.fakes import mcp_installs
from tests.fakes.anthropic_server import FakeAnthropic, Step
from tests.integration.test_claude_real import (  # noqa: F401 (fixtures)
    api,
    claude_bin,
    cli_env,
    home,
    tool_results,
)
from tests.integration.test_mcp_installs import MEMORY, OFFLINE, add_skill


def chat_claude(
    claude: Path, paths: OmegaPaths, env: Mapping[str, str], *lines: Mapping[str, object]
) -> CliResult:
    """Messages through `omega chat --jsonl` with Claude Code as the provider."""
    bin_dir = paths.home.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "claude").exists():
        (bin_dir / "claude").symlink_to(claude)
    full = {
        **env,
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', os.environ['PATH'])}",
        "OMEGA_PROVIDER__DEFAULT": "claude-code",
        "OMEGA_PROVIDER__CLASSIFY": "false",
    }
    result = run_omega("chat", "--jsonl", env=full, stdin=jsonl(*lines), timeout=240)
    assert result.returncode == 0, result.stderr
    return result


def first_call(call_id: str, name: str, **arguments: Any) -> Step:
    """The model's first answer calls a server's tool: Omega has the CLI wait for its MCP
    servers before the first request, so the tool is there even when a server is slow."""
    return Step(tool_calls=[{"id": call_id, "name": name, "arguments": arguments}])


def test_mcp_server_time_in_a_venv_answers_through_claude(
    claude_bin: Path,  # noqa: F811
    home: OmegaPaths,  # noqa: F811
    api: FakeAnthropic,  # noqa: F811
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    user_home = Path(cli_env["HOME"])
    venv = mcp_installs.install_time_venv(user_home / ".venvs" / "time")
    add_skill(
        user_home, "clock", {"time": {"command": str(venv / "bin" / "mcp-server-time")}}, "time"
    )
    api.script = [
        first_call("t1", "mcp__time__get_current_time", timezone="Europe/Paris"),
        Step(text="It is time."),
    ]
    chat_claude(claude_bin, home, cli_env, {"text": "what time is it in Paris?"})
    answer = tool_results(api.requests).get("t1", "")
    assert "Europe/Paris" in answer and "datetime" in answer, answer


def test_an_npx_server_answers_offline_through_claude(
    claude_bin: Path,  # noqa: F811
    home: OmegaPaths,  # noqa: F811
    api: FakeAnthropic,  # noqa: F811
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    user_home = Path(cli_env["HOME"])
    node_bin = mcp_installs.install_user_node(user_home)
    mcp_installs.install_npm_cache(home.workspace / ".npm")
    add_skill(user_home, "memory", {"memory": {"command": "npx", "args": ["-y", MEMORY]}}, "graph")
    api.script = [first_call("m1", "mcp__memory__read_graph"), Step(text="Empty.")]
    env = {**cli_env, **OFFLINE, "PATH": f"{node_bin}{os.pathsep}{os.environ['PATH']}"}
    chat_claude(claude_bin, home, env, {"text": "show my knowledge graph"})
    answer = tool_results(api.requests).get("m1", "")
    assert "entities" in answer and "relations" in answer, answer


def test_a_server_that_cannot_start_under_claude_is_told_once(
    claude_bin: Path,  # noqa: F811
    home: OmegaPaths,  # noqa: F811
    api: FakeAnthropic,  # noqa: F811
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    user_home = Path(cli_env["HOME"])
    crash = "import sys; sys.exit('cannot open /srv/db: Permission denied')"
    add_skill(
        user_home, "broken", {"broken": {"command": sys.executable, "args": ["-c", crash]}}, "db"
    )
    api.script = [Step(text="No tools today."), Step(text="Still none.")]
    result = chat_claude(
        claude_bin, home, cli_env, {"text": "query the db"}, {"text": "query the db again"}
    )
    conn = sqlite3.connect(home.db)
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM limitations")]
    finally:
        conn.close()
    assert [t for t in titles if "MCP server" in t] == ["MCP server broken does not start"]
    alerts = [e for e in result.events if "MCP server broken" in json.dumps(e)]
    assert len(alerts) == 1, result.events
    status = run_omega("status", env=dict(cli_env))
    [line] = [x for x in status.stdout.splitlines() if "mcp broken" in x]
    assert "cannot open /srv/db: Permission denied" in line
