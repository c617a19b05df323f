"""A skill's MCP server is watched while a call uses it (tools/mcp_watch.py): the real stdio
echo server, started under the default sandbox by `start_servers` as the tool loop does, is
killed, crashes in a call, hangs, or cannot start again; it is restarted with backoff, its tools
keep working, and its state is recorded for status (tools/mcp_health.py, mcp_status.py)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from omega.config.safety import SandboxSection
from omega.evolution.gaps.mcp_report import trouble_text
from omega.paths import OmegaPaths
from omega.sandbox import Sandbox
from omega.tools import mcp_watch
from omega.tools.mcp import start_servers
from omega.tools.mcp_health import (
    failures,
    mark_reported,
    mark_running,
    mark_stopped,
    record_attempt,
    record_down,
    record_recovered,
    record_trouble,
)
from omega.tools.mcp_status import status_lines
from omega.types import McpServer
from tests.processes import gone, kill_and_wait, running_scripts

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"
CALC = McpServer("calc", sys.executable, (str(ECHO_SERVER),))

Step = list[ToolCallPart] | str | Callable[[], Awaitable[None]]


def call(tool: str, **args: Any) -> list[ToolCallPart]:
    """One tool call by the model (calc's tools are prefixed `calc_`)."""
    return [ToolCallPart(f"calc_{tool}", args, tool_call_id=f"{tool}-{time.monotonic_ns()}")]


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


@pytest.fixture
def workspace(isolated_env: Path) -> Path:
    folder = isolated_env / "workspace"
    folder.mkdir(parents=True)
    (folder / "count-starts").touch()  # the echo server logs each start in starts.log
    return folder


async def run(home: Path, *steps: Step, deadline: float | None = None) -> list[ToolReturnPart]:
    """Start calc as the tool loop does (a tool call may take `deadline` seconds), then play
    `steps`: the model's tool calls, actions of the test between them (awaited before the
    next model turn), and its answer."""
    remaining = list(steps)

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = remaining.pop(0)
        while callable(step):
            await step()
            step = remaining.pop(0)
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))

    sandbox = Sandbox(SandboxSection(), OmegaPaths(home))
    async with AsyncExitStack() as stack:
        toolsets = await start_servers(stack, [CALC], sandbox, deadline)
        assert len(toolsets) == 1
        result = await Agent(FunctionModel(respond)).run("go", toolsets=toolsets)
    return returns(result.all_messages())


def starts(workspace: Path) -> list[float]:
    """When the echo server started, each time (it logs the monotonic clock), in order."""
    log = workspace / "starts.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [float(line.split()[1]) for line in lines]


def record(home: Path) -> dict[str, Any]:
    data = json.loads((home / "mcp-servers.json").read_text())
    return dict(data["calc"])


async def test_a_server_killed_between_calls_is_restarted_and_answers_again(
    isolated_env: Path, workspace: Path
) -> None:
    pids: list[int] = []
    states: list[list[tuple[str, str]]] = []

    async def kill() -> None:
        (pid,) = running_scripts(ECHO_SERVER)
        states.append(status_lines(isolated_env))
        kill_and_wait(pid)  # kill -9, as a crash or the OOM killer would
        pids.append(pid)

    async def look() -> None:
        pids.extend(running_scripts(ECHO_SERVER))
        states.append(status_lines(isolated_env))

    found = await run(
        isolated_env, call("add", a=2, b=40), kill, call("add", a=1, b=2), look, "done"
    )
    assert [str(r.content) for r in found] == ["42", "3"]
    killed, restarted = pids
    assert restarted != killed and gone(killed)
    assert len(starts(workspace)) == 2
    assert states[0] == [("mcp calc", "running")]
    [(_, shown)] = states[1]
    assert shown.startswith("recovered at ") and shown.endswith("; running")
    entry = record(isolated_env)
    assert (entry["state"], entry["reason"], entry["attempt"]) == (
        "recovered",
        "it exited during use",
        1,
    )
    [(label, text)] = status_lines(isolated_env)
    assert label == "mcp calc"
    assert text.startswith("recovered at ") and text.endswith('after "it exited during use"')
    assert not running_scripts(ECHO_SERVER)  # the restarted one ended with the call


async def test_a_server_that_exits_in_a_call_fails_that_call_only(
    isolated_env: Path, workspace: Path
) -> None:
    found = await run(isolated_env, call("crash", status=3), call("add", a=2, b=2), "done")
    crashed, added = found
    assert crashed.outcome == "failed"
    assert "exited during this call and was restarted" in str(crashed.content)
    assert "may not have finished" in str(crashed.content)  # crash is not read-only: no repeat
    assert str(added.content) == "4"
    assert len(starts(workspace)) == 2
    assert record(isolated_env)["state"] == "recovered"


async def test_a_hung_server_is_found_by_the_probe_and_restarted(
    isolated_env: Path, workspace: Path
) -> None:
    # A tool call may take 4 s here: the probe comes after 1 s and waits 1 s, before that.
    pids: list[int] = []

    async def look() -> None:
        pids.extend(running_scripts(ECHO_SERVER))

    started = time.monotonic()
    found = await run(
        isolated_env,
        look,
        call("freeze", seconds=600),
        call("add", a=1, b=1),
        look,
        "done",
        deadline=4,
    )
    frozen, added = found
    assert frozen.outcome == "failed"
    assert "stopped answering (no answer to a liveness probe within 1 s)" in str(frozen.content)
    assert "it was restarted and this call did not finish" in str(frozen.content)
    assert str(added.content) == "2"
    first, second = pids
    assert gone(first) and first != second
    assert len(starts(workspace)) == 2
    assert time.monotonic() - started < 60  # not the 600 s the frozen call would take
    entry = record(isolated_env)
    assert entry["state"] == "recovered"
    assert entry["reason"].startswith("it stopped answering")


async def test_a_slow_tool_on_a_server_that_still_answers_is_left_alone(
    isolated_env: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_watch, "PROBE_AFTER_SECS", 0.3)
    monkeypatch.setattr(mcp_watch, "PROBE_TIMEOUT_SECS", 5.0)
    probes: list[float] = []
    real = mcp_watch.WatchedToolset._answers

    async def counted(self: mcp_watch.WatchedToolset, wait: float) -> bool:
        probes.append(wait)
        return await real(self, wait)

    monkeypatch.setattr(mcp_watch.WatchedToolset, "_answers", counted)
    (napped,) = await run(isolated_env, call("nap", seconds=2), "done")
    assert str(napped.content) == "slept 2.0s"
    assert len(probes) >= 3 and set(probes) == {5.0}  # probed all along, and it answered
    assert len(starts(workspace)) == 1
    assert failures(isolated_env) == [] and status_lines(isolated_env) == []


async def test_a_server_that_cannot_start_again_is_down_after_bounded_backoff(
    isolated_env: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_watch, "RESTART_ATTEMPTS", 3)
    monkeypatch.setattr(mcp_watch, "BACKOFF_FIRST_SECS", 0.2)

    async def break_it() -> None:
        (workspace / "refuse-to-start").touch()
        (pid,) = running_scripts(ECHO_SERVER)
        kill_and_wait(pid)

    found = await run(
        isolated_env,
        call("add", a=1, b=1),
        break_it,
        call("add", a=2, b=2),
        call("shout", text="still there?"),
        "done",
    )
    added, down, after = found
    assert str(added.content) == "2"
    for failed in (down, after):
        assert failed.outcome == "failed"
        assert "the MCP server calc is down" in str(failed.content)
        assert "cannot start: refuse-to-start is here" in str(failed.content)
    # The first start, 3 restart attempts, one probe for the reason; none for the next call.
    _first, one, two, three, probe = starts(workspace)
    assert two - one >= 0.2 and three - two >= 0.4  # waits doubling between the attempts
    assert probe - three < 5  # and none after the last
    entry = record(isolated_env)
    assert (entry["state"], entry["attempt"], entry["attempts"]) == ("down", 3, 3)
    [(_, text)] = status_lines(isolated_env)
    assert text.startswith('down: "') and "refuse-to-start is here" in text
    assert text.endswith('(after "it exited during use")')


async def test_a_healthy_call_makes_no_extra_request_and_leaves_no_record(
    isolated_env: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes: list[str] = []
    real = mcp_watch.WatchedToolset._answers

    async def counted(self: mcp_watch.WatchedToolset, wait: float) -> bool:
        probes.append(self.watch.name)
        return await real(self, wait)

    monkeypatch.setattr(mcp_watch.WatchedToolset, "_answers", counted)
    found = await run(isolated_env, call("add", a=1, b=2), call("shout", text="hi"), "done")
    assert [str(r.content) for r in found] == ["3", "HI"]
    assert probes == []
    assert len(starts(workspace)) == 1
    assert failures(isolated_env) == []


def test_a_trouble_is_reported_once_whatever_the_attempts(isolated_env: Path) -> None:
    isolated_env.mkdir(parents=True)
    mark_running(isolated_env, ["calc"])
    record_trouble(isolated_env, "calc", "it exited during use", 4)
    record_attempt(isolated_env, "calc", 1)
    [(_, text)] = status_lines(isolated_env)
    assert text == 'restarting (attempt 1 of 4) after "it exited during use"'
    assert mark_reported(isolated_env, "calc")
    record_attempt(isolated_env, "calc", 2)
    record_recovered(isolated_env, "calc", 2)
    assert not mark_reported(isolated_env, "calc")  # the same trouble: reported already
    mark_stopped(isolated_env, ["calc"])
    [(_, text)] = status_lines(isolated_env)
    assert text.startswith("recovered at ")  # shown until the server is next started
    mark_running(isolated_env, ["calc"])
    assert status_lines(isolated_env) == [("mcp calc", "running")]
    record_trouble(isolated_env, "calc", "it exited during use", 4)  # it happens again
    assert not mark_reported(isolated_env, "calc")
    record_trouble(isolated_env, "calc", "it stopped answering", 4)  # something new
    assert mark_reported(isolated_env, "calc")
    record_down(isolated_env, "calc", "Traceback: ImportError: no module named x\n")
    [failure] = failures(isolated_env)
    title, description = trouble_text(failure)
    assert title == "MCP server calc stops during use"
    assert '"it stopped answering"' in description
    assert 'could not restart it: "Traceback: ImportError: no module named x"' in description


def test_a_restart_left_by_a_dead_omega_is_not_shown_forever(isolated_env: Path) -> None:
    isolated_env.mkdir(parents=True)
    record_trouble(isolated_env, "calc", "it exited during use", 4)
    data = json.loads((isolated_env / "mcp-servers.json").read_text())
    data["calc"]["by"] = 2**22 + 12345  # no such process
    data["calc"]["live"] = {str(2**22 + 12345): 1}
    (isolated_env / "mcp-servers.json").write_text(json.dumps(data))
    mark_running(isolated_env, ["calc"])
    assert status_lines(isolated_env) == [("mcp calc", "running")]
    mark_stopped(isolated_env, ["calc"])
    assert status_lines(isolated_env) == []
