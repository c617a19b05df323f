"""Attacks through the real pipeline: `omega chat --jsonl` with a scripted OpenAI-compatible
provider that asks for the attacker's tool calls. The secret in config.toml must reach neither
the model nor the reply, from `run_shell` or from a skill's MCP server, unless `rwx` mode."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import replies, tool_call, tool_results

SECRET = "sk-only-in-config-toml-9090"
ATTACK_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_attack_server.py"
# Landlock refuses; bubblewrap's namespace does not show the file at all.
DENIED = ("Permission denied", "No such file or directory")


def write_config(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[provider.anthropic]\napi_key = "{SECRET}"\n')


def chat(fake: FakeOpenAI, text: str, **env: str) -> tuple[list[object], dict[str, str]]:
    """One message through `omega chat --jsonl`; the replies and the tool results the model
    was sent back."""
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake, **env),
        stdin=jsonl({"text": text}),  # the owner: the model is the attacker
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    results: dict[str, str] = {}
    for request in fake.requests:
        results.update(tool_results(request))
    return replies(result.events), results


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_run_shell_cannot_read_config_through_the_pipeline(
    fake_openai: FakeOpenAI, isolated_env: Path, mode: str
) -> None:
    write_config(isolated_env)
    fake_openai.script = [
        Step(tool_calls=[tool_call("c1", "run_shell", command="cat ../config.toml")]),
        Step(text="Here is what I found."),
    ]
    answers, results = chat(fake_openai, "show me the config", OMEGA_SANDBOX__MODE=mode)
    assert answers == ["Here is what I found."]
    assert any(denied in results["c1"] for denied in DENIED), results["c1"]
    assert SECRET not in json.dumps([r.body for r in fake_openai.requests])


@pytest.mark.slow
def test_the_same_attack_reads_the_secret_in_rwx_mode(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    write_config(isolated_env)
    fake_openai.script = [
        Step(tool_calls=[tool_call("c1", "run_shell", command="cat ../config.toml")]),
        Step(text="Done."),
    ]
    _answers, results = chat(fake_openai, "show me the config", OMEGA_SANDBOX__MODE="rwx")
    assert SECRET in results["c1"]


def write_attack_skill(home: Path) -> None:
    """Install the attack skill as the owner would (`omega skills add` pins it), so only the
    OS sandbox stands between its MCP server and Omega's files."""
    skill = home.parent / "mine" / "attack"
    skill.mkdir(parents=True)
    frontmatter = {
        "name": "attack",
        "description": "Files through an MCP server.",
        "triggers": "attack",
        "mcp": {"attack": {"command": sys.executable, "args": [str(ATTACK_SERVER)]}},
    }
    lines = [f"{key}: {json.dumps(value)}" for key, value in frontmatter.items()]
    (skill / "SKILL.md").write_text("---\n" + "\n".join(lines) + "\n---\n\nUse the tools.\n")
    installed = run_omega("skills", "add", str(skill))
    assert installed.returncode == 0, installed.stderr


def mcp_attack(fake: FakeOpenAI, home: Path, mode: str) -> dict[str, str]:
    write_config(home)
    write_attack_skill(home)
    fake.script = [
        Step(
            tool_calls=[
                tool_call("r1", "attack_read_path", path=str(home / "config.toml")),
                tool_call("r2", "attack_read_path", path=str(home / "memory.db")),
                tool_call("w1", "attack_write_path", path=str(home / "tools" / "x.py"), text="1"),
                tool_call("w2", "attack_write_path", path=str(home / "skills" / "x.md"), text="1"),
            ]
        ),
        Step(text="Finished."),
    ]
    answers, results = chat(fake, "attack please", OMEGA_SANDBOX__MODE=mode)
    assert answers == ["Finished."]
    return results


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sandbox", "rx"])
def test_an_mcp_server_cannot_escape(
    fake_openai: FakeOpenAI, isolated_env: Path, mode: str
) -> None:
    results = mcp_attack(fake_openai, isolated_env, mode)
    assert set(results) == {"r1", "r2", "w1", "w2"}
    assert all(any(d in text for d in DENIED) for text in results.values()), results
    assert SECRET not in json.dumps([r.body for r in fake_openai.requests])
    assert not (isolated_env / "tools" / "x.py").exists()
    assert not (isolated_env / "skills" / "x.md").exists()


@pytest.mark.slow
def test_the_mcp_attack_is_real_in_rwx_mode(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    results = mcp_attack(fake_openai, isolated_env, "rwx")
    assert SECRET in results["r1"]
    assert results["w1"] == "written"
    assert (isolated_env / "tools" / "x.py").exists()


def test_status_reports_the_mode_and_its_enforcement() -> None:
    result = run_omega("status")
    assert result.returncode == 0, result.stderr
    (line,) = [row for row in result.stdout.splitlines() if row.startswith("sandbox ")]
    assert "sandbox (landlock ABI " in line
    rwx = run_omega("status", env={"OMEGA_SANDBOX__MODE": "rwx"})
    assert "rwx - UNRESTRICTED" in rwx.stdout


@pytest.mark.slow
def test_rwx_mode_is_warned_at_start_and_in_slash_status(fake_openai: FakeOpenAI) -> None:
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_SANDBOX__MODE="rwx"),
        stdin=jsonl({"text": "/status"}),
    )
    assert result.returncode == 0, result.stderr
    assert "warning: sandbox rwx - UNRESTRICTED" in result.stderr
    (status,) = [e["text"] for e in result.events if e["kind"] == "command"]
    assert "Sandbox: rwx - UNRESTRICTED" in str(status)
