"""The critic does its job (issue 28, point 5; spec 002 §3.7): tool calls recorded by the tool
loop of `omega chat --jsonl` (the scripted OpenAI fake) are read by the critic's background job
with introspection off; a tool that keeps failing with errors that differ only in numbers has
one typical error, becomes a limitation and, through the analysis, a proposal; a healthy tool
raises nothing."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path

import pytest

from omega.evolution.reflection.critic import critic_report
from omega.loops.critic_job import critic_loop
from omega.turn import PipelineDeps
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder
from tests.integration.test_tool_loop import ANA_OWNER, tool_call

SHAPE = "exit code <n> disk full at block <n>"
PROPOSAL = {
    "kind": "skill",
    "name": "disk-space-check",
    "category": "system",
    "description": "Check free disk space before running commands that write large files.",
    "inputs": {"type": "object", "properties": {}},
    "side_effects": [],
    "risk_level": "low",
    "os_permissions": [],
    "rationale": "run_shell keeps failing because the disk is full.",
    "alternative_approaches": ["clean the workspace"],
    "trigger_phrases": ["disk full"],
    "content": "Before a command that writes, run `df -h .` and say if space is short.",
}


def rows(home: Path, sql: str) -> list[sqlite3.Row]:
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def record_calls(fake: FakeOpenAI, failing: int, passing: int = 0) -> None:
    """One turn of Ana's (the owner) in `omega chat --jsonl`, introspection off: `failing`
    shell commands that fail with messages differing only in their numbers, `passing` ones
    that succeed, and six file writes, all recorded by the tool loop."""
    calls = [
        tool_call(
            f"s{i}",
            "run_shell",
            command=f"echo 'disk full at block {1000 + 7 * i}' >&2; exit {i % 3 + 1}",
        )
        for i in range(failing)
    ]
    calls += [tool_call(f"p{i}", "run_shell", command="echo fine") for i in range(passing)]
    calls += [tool_call(f"w{i}", "write_file", path=f"n{i}.txt", content="x") for i in range(6)]
    fake.script = [Step(tool_calls=calls), Step(text="Done, with errors.")]
    env = openai_env(fake, OMEGA_AUTH__OWNERS=ANA_OWNER, OMEGA_EVOLUTION__SELF_LEARN="off")
    line = {"text": "run the batch", "sender_id": "ana"}
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl(line), timeout=120)
    assert result.returncode == 0, result.stderr


async def run_the_job(deps: PipelineDeps, out: Recorder, home: Path, until: str) -> None:
    """Run the critic's background job (its minutes made milliseconds) until the SQL `until`
    finds a row, or for two seconds."""
    stop = asyncio.Event()
    job = asyncio.create_task(critic_loop(deps, out, stop, seconds_per_minute=0.002))
    for _ in range(40):
        await asyncio.sleep(0.05)
        if rows(home, until):
            break
    stop.set()
    await job


def test_a_tool_that_keeps_failing_becomes_a_limitation_and_a_proposal(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    record_calls(fake_openai, failing=7)
    assert rows(isolated_env, "SELECT COUNT(*) AS n FROM introspection_cycles")[0]["n"] == 0
    deps = make_deps(**openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER))
    report = critic_report(deps.store)
    shell = {t.tool: t for t in report.tools}["run_shell"]
    assert (shell.calls, shell.failures) == (7, 7)
    assert shell.typical == f"{SHAPE} (7×)"  # not "various errors": one shape, seven times
    assert [t.tool for t in report.failing] == ["run_shell"]
    assert any(SHAPE in issue for issue in report.issues)
    assert report.recommendations == (
        "run_shell: read the command's error output; fix the command or its input",
    )
    assert any(SHAPE in line for line in report.lines())

    fake_openai.script = [Step(match="capability analyst", text=json.dumps(PROPOSAL))]
    out = Recorder()
    asyncio.run(run_the_job(deps, out, isolated_env, "SELECT 1 FROM proposals"))
    [limitation] = rows(isolated_env, "SELECT * FROM limitations")
    assert (limitation["title"], limitation["source"]) == ("Tool run_shell keeps failing", "critic")
    assert SHAPE in limitation["description"] and "disk full at block" in limitation["description"]
    [proposal] = rows(isolated_env, "SELECT * FROM proposals")
    assert json.loads(proposal["spec"])["name"] == "disk-space-check"
    assert proposal["source"] == "critic"
    [analysis] = [r for r in fake_openai.requests if "capability analyst" in r.last_user_text]
    assert SHAPE in analysis.last_user_text
    assert "block 10" not in analysis.last_user_text  # the shape, not one call's words


def test_a_healthy_tool_raises_nothing(
    fake_openai: FakeOpenAI,
    isolated_env: Path,
    make_deps: MakeDeps,
    caplog: pytest.LogCaptureFixture,
) -> None:
    record_calls(fake_openai, failing=1, passing=6)  # one failure in seven: not "keeps failing"
    deps = make_deps(**openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER))
    report = critic_report(deps.store)
    assert report.failing == () and report.issues == () and report.recommendations == ()
    rates = {t.tool: round(t.success_rate, 2) for t in report.tools}
    assert rates == {"run_shell": 0.86, "write_file": 1.0}
    fake_openai.script = []
    caplog.set_level(logging.DEBUG, logger="omega.loops.critic_job")
    asyncio.run(run_the_job(deps, Recorder(), isolated_env, "SELECT 1 FROM limitations"))
    assert "critic pass over 13 calls: 2 tools, 0 issues" in caplog.text  # it did run
    assert rows(isolated_env, "SELECT * FROM limitations") == []
    assert rows(isolated_env, "SELECT * FROM proposals") == []
    assert not any("capability analyst" in r.last_user_text for r in fake_openai.requests)
