"""The same ordinary MCP installs through the real `claude` CLI (the pinned version, against
the fake Messages API) under the DEFAULT sandbox: `mcp-server-time` in a virtualenv under the
user's home, the npm memory server through `npx` from a node under the user's home (offline),
and a server that cannot start told to the owner once, as the CLI's init report says."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from tests.conftest import CliResult, jsonl, run_omega
from tests.dbfile import connect_db
from tests.fakes import mcp_installs
from tests.fakes.anthropic_server import Step
from tests.fakes.real_claude import RealClaude, tool_results
from tests.integration.test_mcp_installs import MEMORY, OFFLINE, add_skill

pytestmark = pytest.mark.slow  # every test runs the real claude CLI (seconds per call)


def chat_claude(
    claude: RealClaude, env: Mapping[str, str], *lines: Mapping[str, object]
) -> CliResult:
    """Messages through `omega chat --jsonl` with Claude Code as the provider."""
    full = {
        **env,
        "PATH": claude.path_with_claude(env.get("PATH")),
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


def test_mcp_server_time_in_a_venv_answers_through_claude(real_claude: RealClaude) -> None:
    user_home = real_claude.user_home
    venv = mcp_installs.install_time_venv(user_home / ".venvs" / "time")
    add_skill(
        user_home, "clock", {"time": {"command": str(venv / "bin" / "mcp-server-time")}}, "time"
    )
    real_claude.api.script = [
        first_call("t1", "mcp__time__get_current_time", timezone="Europe/Paris"),
        Step(text="It is time."),
    ]
    chat_claude(real_claude, real_claude.env, {"text": "what time is it in Paris?"})
    answer = tool_results(real_claude.api.requests).get("t1", "")
    assert "Europe/Paris" in answer and "datetime" in answer, answer


def test_an_npx_server_answers_offline_through_claude(real_claude: RealClaude) -> None:
    user_home = real_claude.user_home
    node_bin = mcp_installs.install_user_node(user_home)
    mcp_installs.install_npm_cache(real_claude.paths.workspace / ".npm")
    add_skill(user_home, "memory", {"memory": {"command": "npx", "args": ["-y", MEMORY]}}, "graph")
    real_claude.api.script = [first_call("m1", "mcp__memory__read_graph"), Step(text="Empty.")]
    env = {**real_claude.env, **OFFLINE, "PATH": f"{node_bin}{os.pathsep}{os.environ['PATH']}"}
    chat_claude(real_claude, env, {"text": "show my knowledge graph"})
    answer = tool_results(real_claude.api.requests).get("m1", "")
    assert "entities" in answer and "relations" in answer, answer


def test_a_server_that_cannot_start_under_claude_is_told_once(real_claude: RealClaude) -> None:
    user_home = real_claude.user_home
    crash = "import sys; sys.exit('cannot open /srv/db: Permission denied')"
    add_skill(
        user_home, "broken", {"broken": {"command": sys.executable, "args": ["-c", crash]}}, "db"
    )
    real_claude.api.script = [Step(text="No tools today."), Step(text="Still none.")]
    result = chat_claude(
        real_claude, real_claude.env, {"text": "query the db"}, {"text": "query the db again"}
    )
    conn = connect_db(real_claude.paths.db)
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM limitations")]
    finally:
        conn.close()
    assert [t for t in titles if "MCP server" in t] == ["MCP server broken does not start"]
    alerts = [e for e in result.events if "MCP server broken" in json.dumps(e)]
    assert len(alerts) == 1, result.events
    status = run_omega("status", env=dict(real_claude.env))
    [line] = [x for x in status.stdout.splitlines() if "mcp broken" in x]
    assert "cannot open /srv/db: Permission denied" in line
