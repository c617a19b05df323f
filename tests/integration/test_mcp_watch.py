"""A skill's MCP server killed mid-session, through the real pipeline (`omega chat --jsonl`
with the scripted OpenAI-compatible provider): while the model is thinking between two tool
calls, the test kills the real stdio server with SIGKILL. Omega restarts it, the next call
answers, the owner hears of it once (not per crash), and `/status`, `omega status` and the web
Health page show it recovered."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import (
    ANA_OWNER,
    ECHO_SERVER,
    replies,
    tool_call,
    tool_results,
    write_calc_skill,
)
from tests.integration.web_support import RunningWeb
from tests.processes import kill_and_wait, running_scripts

TITLE = "MCP server calc stops during use"


def kill_the_server(killed: list[int]) -> None:
    """kill -9 the calc server Omega runs now (inside its sandbox), and wait for its end."""
    (pid,) = running_scripts(ECHO_SERVER)
    kill_and_wait(pid)
    killed.append(pid)


def limitations(home: Path) -> list[str]:
    conn = connect_db(home / "memory.db")
    try:
        return [str(row[0]) for row in conn.execute("SELECT title FROM limitations")]
    finally:
        conn.close()


def test_a_server_killed_mid_session_is_restarted_reported_once_and_shown(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    write_calc_skill(isolated_env)
    killed: list[int] = []
    fake_openai.script = [
        Step(match="add 2 and 40", tool_calls=[tool_call("a1", "calc_add", a=2, b=40)]),
        Step(
            match="add 2 and 40",
            before=lambda: kill_the_server(killed),
            tool_calls=[tool_call("a2", "calc_add", a=1, b=2)],
        ),
        Step(match="add 2 and 40", text="42, and 1 + 2 = 3."),
        Step(match="add 5 and 5", tool_calls=[tool_call("b1", "calc_add", a=5, b=5)]),
        Step(
            match="add 5 and 5",
            before=lambda: kill_the_server(killed),  # a second crash, in the next message
            tool_calls=[tool_call("b2", "calc_add", a=6, b=6)],
        ),
        Step(match="add 5 and 5", text="10, and 6 + 6 = 12."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER, OMEGA_PROVIDER__CLASSIFY="false"),
        stdin=jsonl(
            {"text": "please add 2 and 40", "sender_id": "ana"},
            {"text": "now add 5 and 5", "sender_id": "ana"},
            {"text": "/status", "sender_id": "ana"},
        ),
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert len(killed) == 2
    answered: dict[str, str] = {}
    for request in fake_openai.requests:
        answered.update(tool_results(request))
    assert {k: answered[k] for k in ("a1", "a2", "b1", "b2")} == {
        "a1": "42",
        "a2": "3",  # after the restart
        "b1": "10",
        "b2": "12",  # after the second
    }
    texts = replies(result.events)
    assert "42, and 1 + 2 = 3." in texts and "10, and 6 + 6 = 12." in texts
    # Told once, for two crashes and their restarts.
    assert limitations(isolated_env).count(TITLE) == 1
    alerts = [e for e in result.events if TITLE in json.dumps(e)]
    assert len(alerts) == 1, result.events
    assert "it exited during use" in json.dumps(alerts[0])
    assert "restarted it" in json.dumps(alerts[0])
    [shown] = [str(e["text"]) for e in result.events if "Uptime" in json.dumps(e)]
    [line] = [x for x in shown.splitlines() if x.startswith("mcp calc:")]  # /status
    assert line.startswith("mcp calc: recovered at ")
    assert line.endswith('after "it exited during use"')

    status = run_omega("status")
    assert status.returncode == 0, status.stderr
    [row] = [x for x in status.stdout.splitlines() if "mcp calc" in x]
    assert "recovered at" in row and 'after "it exited during use"' in row

    running = RunningWeb(isolated_env, openai_env(fake_openai))
    try:
        client = httpx.Client(base_url=running.base, follow_redirects=False, timeout=10)
        assert client.get(running.login_link.removeprefix(running.base)).status_code == 303
        page = client.get("/health")
        assert page.status_code == 200
        assert "<h2>MCP servers</h2>" in page.text
        assert "<code>calc</code>" in page.text
        assert "recovered at" in page.text and "it exited during use" in page.text
    finally:
        code, err = running.terminate()
    assert code == 0 and "Traceback" not in err, err
