"""Least privilege in what Omega does while nobody is talking (the audit of every model call):
played through `omega chat --jsonl` with the scripted OpenAI fake, the clock moved with
faketime so that a task comes due."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import OMEGA_BIN, MakeDeps, jsonl, openai_env
from tests.fakes.openai_server import FakeOpenAI, Step

NO_ROUTING = {"OMEGA_PROVIDER__CLASSIFY": "false"}
BOTH = {"OMEGA_CHANNEL__TERMINAL__ALLOWED_USERS": json.dumps(["ana", "bob"]), **NO_ROUTING}
ANA_ONLY = {"OMEGA_CHANNEL__TERMINAL__ALLOWED_USERS": json.dumps(["ana"]), **NO_ROUTING}
LATER = "2031-01-01T09:00"


def _chat(
    fake: FakeOpenAI, env: dict[str, str], *lines: dict[str, object], at: str = ""
) -> list[dict[str, object]]:
    """`omega chat --jsonl` (at `at`, with faketime, when given); the objects it wrote."""
    command = [OMEGA_BIN, "chat", "--jsonl"]
    done = subprocess.run(
        ["faketime", at, *command] if at else command,
        input=jsonl(*lines),
        capture_output=True,
        text=True,
        env=dict(os.environ, **openai_env(fake, **env)),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_an_action_of_someone_taken_off_the_allow_list_is_never_run(
    fake_openai: FakeOpenAI, make_deps: MakeDeps
) -> None:
    # Bob, allowed, schedules an action; then the owner takes him off the allow-list.
    fake_openai.script = [
        Step(match="later", text=f"Will do.\nSCHEDULE_ACTION: look around | {LATER}")
    ]
    _chat(fake_openai, BOTH, {"text": "look around later", "sender_id": "bob"})
    store = make_deps(**ANA_ONLY).store
    [task] = store.query("SELECT * FROM scheduled_tasks")
    assert task["status"] == "pending" and task["task_type"] == "action"
    # Past its time, Ana talks to Omega: Bob's action comes due. He is a stranger now, and
    # strangers cost nothing: no provider call is made for him, nothing is sent to him.
    fake_openai.requests.clear()
    fake_openai.script = [
        Step(match="Scheduled action", text="Looked around for you, Bob."),
        Step(match="hello", text="Hello Ana."),
    ]
    events = _chat(
        fake_openai, ANA_ONLY, {"text": "hello", "sender_id": "ana"}, at="2031-01-02 10:00:00"
    )
    assert not [r for r in fake_openai.requests if "Scheduled action" in r.last_user_text]
    assert not [e for e in events if "Bob" in str(e.get("text", ""))], events
    assert any(e.get("text") == "Hello Ana." for e in events), events
    [after] = store.query("SELECT * FROM scheduled_tasks")
    assert after["status"] == "failed"  # not run, never counted as delivered
    assert "may no longer talk to Omega" in str(after["last_error"])
    [refused] = store.query("SELECT * FROM audit_log WHERE event = 'task_refused'")
    assert refused["status"] == "denied"
