"""The critic speaks (spec 004 §3.7, issue 39): its issues and recommendations are in
`omega evolution report` (text and --json) and on the web page's Evolution view, and the owner
turns a recommendation into a proposal with one action (`omega evolution propose <id>`, the
page's Propose button), through the analysis and the gate. The tool calls are recorded by
`omega chat --jsonl` with the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import httpx

from tests.conftest import openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_critic import PROPOSAL, SHAPE, record_calls
from tests.integration.test_tool_loop import ANA_OWNER
from tests.integration.web_support import RunningWeb

ADVICE = "run_shell: read the command's error output; fix the command or its input"


def proposals(home: Path) -> list[sqlite3.Row]:
    with closing(connect_db(home / "memory.db")) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT * FROM proposals").fetchall()


def audited(home: Path, event: str) -> list[str]:
    with closing(connect_db(home / "memory.db")) as conn:
        rows = conn.execute("SELECT detail FROM audit_log WHERE event = ?", (event,)).fetchall()
    return [str(r[0]) for r in rows]


def report_json(env: dict[str, str]) -> dict[str, object]:
    result = run_omega("evolution", "report", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_the_report_shows_issues_and_a_recommendation_becomes_a_proposal(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    record_calls(fake_openai, failing=7)
    env = openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER)
    data = report_json(env)
    assert data["version"] == 2
    critic = data["critic"]
    assert isinstance(critic, dict)
    assert any(SHAPE in issue and "run_shell" in issue for issue in critic["issues"])
    [rec] = critic["recommendations"]
    assert set(rec) == {"id", "text", "issue", "tool"}
    assert (rec["text"], rec["tool"]) == (ADVICE, "run_shell")
    assert re.fullmatch(r"r[0-9a-f]{8}", rec["id"]) and SHAPE in rec["issue"]
    assert report_json(env)["critic"]["recommendations"][0]["id"] == rec["id"]  # type: ignore[index]

    text = run_omega("evolution", "report", env=env)
    assert text.returncode == 0, text.stderr
    assert "The critic's issues:" in text.stdout and "keeps failing" in text.stdout
    assert rec["id"] in text.stdout and "omega evolution propose" in text.stdout

    unknown = run_omega("evolution", "propose", "rffffffff", env=env)
    assert unknown.returncode == 1 and "no current recommendation" in unknown.stderr
    assert proposals(isolated_env) == []

    fake_openai.script = [Step(match="capability analyst", text=json.dumps(PROPOSAL))]
    done = run_omega("evolution", "propose", rec["id"], env=env)
    assert done.returncode == 0, done.stderr
    [proposal] = proposals(isolated_env)
    assert json.loads(proposal["spec"])["name"] == "disk-space-check"
    assert proposal["source"] == "critic" and proposal["gate_action"]  # the gate judged it
    assert f"Proposal #{proposal['id']}" in done.stdout and rec["id"] in done.stdout
    assert any(
        "capability analyst" in r.last_user_text and SHAPE in r.last_user_text
        for r in fake_openai.requests
    )
    [why] = audited(isolated_env, "recommendation:proposed")
    assert "owner (cli)" in why


def test_the_evolution_page_shows_them_and_proposes_with_one_button(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    record_calls(fake_openai, failing=7)
    fake_openai.script = [Step(match="capability analyst", text=json.dumps(PROPOSAL))]
    running = RunningWeb(isolated_env, openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER))
    try:
        client = httpx.Client(base_url=running.base, follow_redirects=False, timeout=30)
        with closing(client):
            assert client.get(running.login_link.removeprefix(running.base)).status_code == 303
            page = client.get("/evolution").text
            csrf = re.search(r'name="csrf-token" content="([^"]+)"', page)
            assert csrf, page[:2000]
            issues = page.split('id="critic-issues"')[1].split("</ul>")[0]
            assert "run_shell keeps failing" in issues
            recs = page.split('id="critic-recommendations"')[1].split("</table>")[0]
            rec_id = re.search(r'data-recommendation="(r[0-9a-f]{8})"', recs)
            assert rec_id and "read the command&#39;s error output" in recs
            action = f"/evolution/recommendations/{rec_id.group(1)}/propose"
            assert f'action="{action}"' in recs
            own = {"Origin": running.base}
            assert client.post(action, headers=own, data={"x": "1"}).status_code == 403
            assert proposals(isolated_env) == []
            done = client.post(action, headers=own, data={"csrf_token": csrf.group(1)})
            assert done.status_code == 303 and "Proposal%20%231" in done.headers["location"]
    finally:
        code, err = running.terminate()
    assert code == 0, err
    [proposal] = proposals(isolated_env)
    assert proposal["source"] == "critic"
    [why] = audited(isolated_env, "recommendation:proposed")
    assert "owner (web)" in why
