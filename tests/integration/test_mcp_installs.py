"""MCP servers installed the ordinary ways start under the DEFAULT sandbox, through the real
pipeline (`omega chat --jsonl` with the scripted OpenAI-compatible provider): the official
`mcp-server-time` in a virtualenv under the user's home, the official npm memory server run
by `npx` from a node installed under the user's home (offline: sandboxed commands get no TCP
at all). A server that cannot start is told to the owner once (a limitation, and `omega
status` names it with its stderr). A person's servers run in that person's folder."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from omega.turn import person_folder
from tests.conftest import CliResult, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes import mcp_installs
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import tool_call, tool_results

pytestmark = pytest.mark.slow  # each test installs and starts real MCP servers (venv, npx)

ATTACK_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_attack_server.py"
MEMORY = f"{mcp_installs.MEMORY_PACKAGE}@{mcp_installs.MEMORY_VERSION}"
OFFLINE = {"OMEGA_SANDBOX__TCP_PORTS": "[]"}  # sandboxed commands may connect nowhere


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh $HOME for the user (the default sandbox closes it to commands)."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def add_skill(root: Path, name: str, servers: Mapping[str, Any], trigger: str) -> None:
    """Install a skill as the owner does (`omega skills add` pins it)."""
    skill = root / "skills-src" / name
    skill.mkdir(parents=True)
    frontmatter = {
        "name": name,
        "description": f"The {name} server's tools.",
        "triggers": trigger,
        "mcp": dict(servers),
    }
    lines = [f"{key}: {json.dumps(value)}" for key, value in frontmatter.items()]
    (skill / "SKILL.md").write_text("---\n" + "\n".join(lines) + "\n---\n\nUse the tools.\n")
    installed = run_omega("skills", "add", str(skill))
    assert installed.returncode == 0, installed.stderr


def chat(fake: FakeOpenAI, *lines: Mapping[str, object], **env: str) -> CliResult:
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake, OMEGA_PROVIDER__CLASSIFY="false", **env),
        stdin=jsonl(*lines),
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return result


def all_results(fake: FakeOpenAI) -> dict[str, str]:
    results: dict[str, str] = {}
    for request in fake.requests:
        results.update(tool_results(request))
    return results


def limitations(home: Path) -> list[str]:
    conn = connect_db(home / "memory.db")
    try:
        return [row[0] for row in conn.execute("SELECT title FROM limitations")]
    finally:
        conn.close()


def test_mcp_server_time_in_a_venv_answers_under_the_default_sandbox(
    fake_openai: FakeOpenAI, isolated_env: Path, user_home: Path
) -> None:
    venv = mcp_installs.install_time_venv(user_home / ".venvs" / "time")
    add_skill(
        user_home, "clock", {"time": {"command": str(venv / "bin" / "mcp-server-time")}}, "time"
    )
    fake_openai.script = [
        Step(tool_calls=[tool_call("t1", "time_get_current_time", timezone="Europe/Paris")]),
        Step(text="It is time."),
    ]
    chat(fake_openai, {"text": "what time is it in Paris?"})
    answer = all_results(fake_openai).get("t1", "")
    assert "Europe/Paris" in answer and "datetime" in answer, answer
    assert not [t for t in limitations(isolated_env) if "MCP server" in t]


def test_an_npx_server_from_a_user_installed_node_answers_offline(
    fake_openai: FakeOpenAI, isolated_env: Path, user_home: Path
) -> None:
    node_bin = mcp_installs.install_user_node(user_home)  # nvm's layout
    # Installed once (the first run, with the network); now from the workspace's npm cache.
    mcp_installs.install_npm_cache(isolated_env / "workspace" / ".npm")
    add_skill(user_home, "memory", {"memory": {"command": "npx", "args": ["-y", MEMORY]}}, "graph")
    fake_openai.script = [
        Step(tool_calls=[tool_call("m1", "memory_read_graph")]),
        Step(text="Your graph is empty."),
    ]
    path = f"{node_bin}{os.pathsep}{os.environ['PATH']}"
    chat(fake_openai, {"text": "show my knowledge graph"}, PATH=path, **OFFLINE)
    answer = all_results(fake_openai).get("m1", "")
    assert "entities" in answer and "relations" in answer, answer


def test_a_server_that_cannot_start_is_told_to_the_owner_once(
    fake_openai: FakeOpenAI, isolated_env: Path, user_home: Path
) -> None:
    crash = "import sys; sys.exit('cannot open /srv/db: Permission denied')"
    add_skill(
        user_home, "broken", {"broken": {"command": sys.executable, "args": ["-c", crash]}}, "db"
    )
    fake_openai.script = [Step(text="No tools today."), Step(text="Still none.")]
    result = chat(
        fake_openai, {"text": "query the db"}, {"text": "query the db again"}, {"text": "/status"}
    )
    titles = [t for t in limitations(isolated_env) if "MCP server" in t]
    assert titles == ["MCP server broken does not start"]
    alerts = [e for e in result.events if "MCP server broken" in json.dumps(e)]
    assert len(alerts) == 1, result.events
    assert "Permission denied" in json.dumps(alerts[0])
    [shown] = [e for e in result.events if "Uptime" in json.dumps(e)]
    assert 'mcp broken: did not start: \\"' in json.dumps(shown), shown  # /status
    status = run_omega("status")
    assert status.returncode == 0, status.stderr
    [line] = [x for x in status.stdout.splitlines() if "mcp broken" in x]
    assert "did not start" in line and "cannot open /srv/db: Permission denied" in line


def test_a_persons_server_runs_in_their_own_folder(
    fake_openai: FakeOpenAI, isolated_env: Path, user_home: Path
) -> None:
    add_skill(
        user_home,
        "files",
        {"files": {"command": sys.executable, "args": [str(ATTACK_SERVER)]}},
        "note",
    )
    owner_file = isolated_env / "workspace" / "owner-note.txt"
    fake_openai.script = [
        Step(
            tool_calls=[
                tool_call("w1", "files_write_path", path="mine.txt", text="ana's"),
                tool_call("w2", "files_write_path", path=str(owner_file), text="ana was here"),
            ]
        ),
        Step(text="Noted."),
    ]
    chat(
        fake_openai,
        {"text": "take a note", "sender_id": "ana"},
        OMEGA_AUTH__PEOPLE_TOOLS=json.dumps(["read_file", "mcp"]),
    )
    results = all_results(fake_openai)
    assert results["w1"] == "written", results
    [mine] = list((isolated_env / "workspace" / "people").glob("*/mine.txt"))
    assert mine.parent.name == person_folder("ana")  # Ana's own folder
    assert not (isolated_env / "workspace" / "mine.txt").exists()
    assert "Permission denied" in results["w2"]  # the owner's workspace is not theirs
    assert not owner_file.exists()
