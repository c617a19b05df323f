"""The API provider's tool loop end to end: `omega chat --jsonl` against the scripted server,
with built-in tools, a failing tool, a skill's real stdio MCP server, and the prompt size."""

from __future__ import annotations

import json
import sqlite3
import stat
import sys
from pathlib import Path
from typing import Any

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Step

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"


ANA_OWNER = '["terminal:ana"]'  # Ana is the owner here: tools are the owner's (issue 17)


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """One tool call in OpenAI's wire format."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def tool_rows(home: Path) -> list[sqlite3.Row]:
    conn = connect_db(home / "memory.db")
    conn.row_factory = sqlite3.Row
    rows = list(conn.execute("SELECT * FROM tool_calls ORDER BY id"))
    conn.close()
    return rows


def tool_results(request: RecordedRequest) -> dict[str, str]:
    """The tool messages a request carried, by tool_call_id."""
    return {
        str(m["tool_call_id"]): str(m["content"])
        for m in request.messages
        if m.get("role") == "tool"
    }


def tool_names(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def replies(events: list[dict[str, object]]) -> list[object]:
    return [e["text"] for e in events if e["kind"] == "reply"]


def test_a_builtin_tool_call_is_run_answered_and_recorded(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(tool_calls=[tool_call("call_1", "write_file", path="notes.txt", content="hello")]),
        Step(text="Saved it to notes.txt."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER),
        stdin=jsonl({"text": "save hello in notes.txt", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["Saved it to notes.txt."]
    written = isolated_env / "workspace" / "notes.txt"
    assert written.read_text() == "hello"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    first, second = fake_openai.requests
    assert {"read_file", "write_file", "run_shell"} <= set(tool_names(first))
    assert tool_results(second) == {"call_1": "wrote 5 bytes to notes.txt"}
    (row,) = tool_rows(isolated_env)
    assert row["agent"] == "openai"
    assert row["sender_id"] == "ana"
    assert row["tool"] == "write_file"
    assert json.loads(row["arguments"]) == {"path": "notes.txt", "content": "hello"}
    assert row["ok"] == 1
    assert row["result_preview"] == "wrote 5 bytes to notes.txt"
    assert row["duration_ms"] >= 0


def test_a_failing_tool_is_recorded_and_the_turn_still_answers(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(tool_calls=[tool_call("call_1", "read_file", path="missing.txt")]),
        Step(text="There is no missing.txt."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER),
        stdin=jsonl({"text": "read missing.txt", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["There is no missing.txt."]
    told = tool_results(fake_openai.requests[1])["call_1"]
    assert "no file 'missing.txt'" in told
    (row,) = tool_rows(isolated_env)
    assert row["tool"] == "read_file"
    assert row["ok"] == 0
    assert "no file 'missing.txt'" in row["error"]


def test_a_shell_command_that_fails_is_a_failed_call_in_the_records(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Issue 28: `exit 3` was stored ok = 1, so the critic and introspection never saw it.
    fake_openai.script = [
        Step(
            tool_calls=[
                tool_call("call_1", "run_shell", command="echo broken >&2; exit 3"),
                tool_call("call_2", "run_shell", command="echo fine"),
            ]
        ),
        Step(text="The first command failed."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER),
        stdin=jsonl({"text": "run the two commands", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["The first command failed."]
    told = tool_results(fake_openai.requests[1])
    assert told["call_1"].startswith("exit code 3") and "broken" in told["call_1"]
    assert told["call_2"].startswith("exit code 0") and "fine" in told["call_2"]
    failed, passed = tool_rows(isolated_env)
    assert (failed["tool"], failed["ok"]) == ("run_shell", 0)
    assert failed["error"].startswith("exit code 3") and "broken" in failed["error"]
    assert (passed["tool"], passed["ok"], passed["error"]) == ("run_shell", 1, "")
    assert "fine" in passed["result_preview"]


def write_calc_skill(home: Path) -> None:
    """The owner installs the calc skill (written outside $OMEGA_HOME, then `skills add`)."""
    skill = home.parent / "my-skills" / "calc"
    skill.mkdir(parents=True)
    frontmatter = {
        "name": "calc",
        "description": "Arithmetic through an MCP server.",
        "triggers": "calculate|add",
        "mcp": {"calc": {"command": sys.executable, "args": [str(ECHO_SERVER)]}},
    }
    # JSON is valid YAML, and keeps the interpreter's path safely quoted.
    lines = [f"{key}: {json.dumps(value)}" for key, value in frontmatter.items()]
    (skill / "SKILL.md").write_text(
        "---\n" + "\n".join(lines) + "\n---\n\nUse the calc tools for sums.\n"
    )
    installed = run_omega("skills", "add", str(skill))
    assert installed.returncode == 0, installed.stderr


def test_a_matching_skill_brings_its_mcp_server_for_that_call_only(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    write_calc_skill(isolated_env)
    fake_openai.script = [
        Step(match="add 2 and 40", tool_calls=[tool_call("call_9", "calc_add", a=2, b=40)]),
        Step(match="add 2 and 40", text="2 + 40 = 42."),
        Step(match="how are you", text="Fine, thanks."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER),
        stdin=jsonl(
            {"text": "please add 2 and 40", "sender_id": "ana"},
            {"text": "how are you", "sender_id": "ana"},
        ),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["2 + 40 = 42.", "Fine, thanks."]
    asked, answered, unrelated = fake_openai.requests
    assert {"calc_add", "calc_shout"} <= set(tool_names(asked))
    assert "read_file" in tool_names(asked)  # the built-ins come along
    assert tool_results(answered) == {"call_9": "42"}
    assert not [n for n in tool_names(unrelated) if n.startswith("calc_")]
    assert "read_file" in tool_names(unrelated)
    (row,) = tool_rows(isolated_env)
    assert row["tool"] == "calc_add"
    assert json.loads(row["arguments"]) == {"a": 2, "b": 40}
    assert row["ok"] == 1
    assert row["result_preview"] == "42"


def test_the_prompt_for_hi_stays_small(fake_openai: FakeOpenAI) -> None:
    result = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin=jsonl({"text": "hi"}))
    assert result.returncode == 0, result.stderr
    (request,) = fake_openai.requests
    assert tool_names(request), "the tools were not offered"
    # Omega's internal calls (classify & route) never carry tools.
    assert all("tools" not in r.body for r in fake_openai.planner_requests)
    messages = len(json.dumps(request.body["messages"], ensure_ascii=False))
    tools = len(json.dumps(request.body["tools"], ensure_ascii=False))
    print(f"'hi' prompt: {messages} chars of messages + {tools} chars of tools")
    assert messages + tools < 8000


def test_tool_errors_and_timeouts_are_failed_calls_for_every_kind_of_tool(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Issue 28: a tool that errs or hangs is a failure in the records, whoever runs it: a
    # built-in whose command times out, an MCP tool that refuses, an MCP tool that hangs past
    # the tool deadline (3/4 of the provider's timeout), all answered in the same turn.
    write_calc_skill(isolated_env)
    fake_openai.script = [
        Step(
            match="calculate",
            tool_calls=[
                tool_call("t1", "run_shell", command="sleep 5", timeout_secs=1),
                tool_call("t2", "calc_refuse", reason="no"),
                tool_call("t3", "calc_nap", seconds=60),
                tool_call("t4", "calc_add", a=1, b=2),
            ],
        ),
        Step(match="calculate", text="Three of four failed."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        # A model the lean first request does not serve: pydantic-ai is loaded at start, not
        # within this answer's 28 s (it offers MCP tools, so it needs pydantic-ai). The nap
        # times out at 21 s, leaving 7 s for the MCP server's start and the last request on a
        # loaded machine (20 s left 5, and four test workers beside other jobs on two cores
        # ran out).
        env=openai_env(
            fake_openai,
            OMEGA_AUTH__OWNERS=ANA_OWNER,
            OMEGA_PROVIDER__TIMEOUT_SECS="28",
            OMEGA_PROVIDER__OPENAI__MODEL="unmirrored-model",
        ),
        stdin=jsonl({"text": "calculate with the tools", "sender_id": "ana"}),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["Three of four failed."]
    told = tool_results(fake_openai.requests[1])
    assert "timed out after 1s" in told["t1"]
    assert "refused: no" in told["t2"]
    assert "timed out after 21s" in told["t3"]
    assert told["t4"] == "3"
    recorded = {row["tool"]: row for row in tool_rows(isolated_env)}
    assert {tool: row["ok"] for tool, row in recorded.items()} == {
        "run_shell": 0,
        "calc_refuse": 0,
        "calc_nap": 0,
        "calc_add": 1,
    }
    assert "timed out after 1s" in recorded["run_shell"]["error"]
    assert "refused: no" in recorded["calc_refuse"]["error"]
    assert "timed out after 21s" in recorded["calc_nap"]["error"]


def test_the_tools_of_an_answer_that_timed_out_are_recorded_as_failed(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Two slow tools in a row outlast the whole answer: the person hears of the timeout, and
    # both calls are in the records (the first stopped at the tool deadline, the second cut
    # short by the answer's end) instead of being lost with the answer.
    fake_openai.script = [
        Step(match="slow", tool_calls=[tool_call("s1", "run_shell", command="sleep 30")]),
        Step(match="slow", tool_calls=[tool_call("s2", "run_shell", command="sleep 30")]),
        Step(match="slow", text="never reached"),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        # A model the lean first request does not serve: pydantic-ai is loaded at start, not
        # by the first tool call, whose import (a second or more here) the 4 s would include.
        env=openai_env(
            fake_openai,
            OMEGA_AUTH__OWNERS=ANA_OWNER,
            OMEGA_PROVIDER__TIMEOUT_SECS="4",
            OMEGA_PROVIDER__OPENAI__MODEL="unmirrored-model",
        ),
        stdin=jsonl({"text": "do the slow thing", "sender_id": "ana"}),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == []
    (error,) = [e for e in result.events if e["kind"] == "error"]
    assert "too long" in str(error["text"])
    first, second = tool_rows(isolated_env)
    assert (first["tool"], first["ok"], first["error"]) == (
        "run_shell",
        0,
        "timed out after 3s; the tool was stopped",
    )
    assert (second["tool"], second["ok"], second["error"]) == (
        "run_shell",
        0,
        "interrupted: no result",
    )


def test_a_human_tool_that_raises_or_hangs_is_a_failed_call(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # The owner's own tool (installed and pinned with `omega tools add`): an exception it raises
    # and a call that outlasts the tool deadline are failures in the records; the model hears
    # both and the turn is answered.
    source = isolated_env.parent / "my-tools" / "meter.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "import time\n\n\n"
        "def meter(reading: str) -> str:\n"
        '    """Record a meter reading."""\n'
        '    if reading == "slow":\n'
        "        time.sleep(9)\n"  # a thread cannot be stopped: the run waits it out at exit
        '    raise ValueError(f"meter offline for {reading}")\n'
    )
    installed = run_omega("tools", "add", str(source))
    assert installed.returncode == 0, installed.stderr
    fake_openai.script = [
        Step(
            match="meter",
            tool_calls=[
                tool_call("h1", "meter", reading="42"),
                tool_call("h2", "meter", reading="slow"),
            ],
        ),
        Step(match="meter", text="The meter is offline."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER, OMEGA_PROVIDER__TIMEOUT_SECS="8"),
        stdin=jsonl({"text": "record the meter", "sender_id": "ana"}),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["The meter is offline."]
    told = tool_results(fake_openai.requests[1])
    assert "ValueError: meter offline for 42" in told["h1"]
    assert "timed out after 6s" in told["h2"]
    raised, hung = tool_rows(isolated_env)
    assert (raised["tool"], raised["ok"]) == ("meter", 0)
    assert "meter offline for 42" in raised["error"]
    assert (hung["tool"], hung["ok"], hung["error"]) == (
        "meter",
        0,
        "timed out after 6s; the tool was stopped",
    )
