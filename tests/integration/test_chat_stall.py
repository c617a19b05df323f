"""`omega chat --jsonl` never hangs at the end of its input: the answers still owed are waited
for while they come, and once none was finished for `[omega] chat_stall_secs` the rest stays
in the inbox (the next run answers it) and the chat exits 3, saying so. And an `omega` that
does hang tells the test where (tests/stacks.py)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from omega.ops.stacks import END_LINE
from tests.conftest import OMEGA_BIN, jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_many_people import db
from tests.stacks import DUMP_ENV_VARS, dump_and_kill, hung_report

STALL = 2.0  # [omega] chat_stall_secs for these runs
HANG = 60.0  # the provider's answer comes after this (its timeout is as long)


def _env(fake: FakeOpenAI, stall: float = STALL) -> dict[str, str]:
    return openai_env(
        fake,
        OMEGA_PROVIDER__CLASSIFY="false",
        OMEGA_PROVIDER__TIMEOUT_SECS=f"{HANG:g}",
        OMEGA_OMEGA__CHAT_STALL_SECS=f"{stall:g}",
    )


@pytest.mark.slow  # two chats and the stall
def test_a_hung_answer_ends_the_chat_after_the_stall_and_the_next_run_answers_it(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(text="Too late.", hang_secs=HANG)]
    started = time.monotonic()
    first = run_omega(
        "chat",
        "--jsonl",
        env=_env(fake_openai),
        stdin=jsonl({"text": "are you there?", "id": "q1"}),
        timeout=HANG - 10,  # without the bound it waits for the provider (or forever)
    )
    took = time.monotonic() - started
    print(f"the first chat took {took:.1f}s")
    assert first.returncode == 3, first.stderr  # EXIT_UNANSWERED
    assert "not answered yet" in first.stderr and "q1" in first.stderr
    assert [e for e in first.events if e["kind"] == "reply"] == []
    log = (isolated_env / "omega.log").read_text()
    assert f"no answer was finished for {STALL:g}s" in log
    # Not lost: still pending in the inbox, this attempt not counted against it.
    [row] = db(isolated_env, "SELECT status, attempts, payload FROM inbox")
    assert (row["status"], row["attempts"]) == ("pending", 0)
    assert json.loads(row["payload"])["text"] == "are you there?"
    # The next run (no new input) answers it (a stall that a busy machine cannot reach).
    fake_openai.script = [Step(text="Here now.")]
    second = run_omega("chat", "--jsonl", env=_env(fake_openai, stall=HANG), timeout=HANG - 10)
    assert second.returncode == 0, second.stderr
    [reply] = [e for e in second.events if e["kind"] == "reply"]
    assert (reply["reply_to"], reply["text"]) == ("q1", "Here now.")
    [row] = db(isolated_env, "SELECT status FROM inbox")
    assert row["status"] == "done"


def test_a_hung_omega_is_asked_for_its_stacks_before_it_is_killed(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    asked = threading.Event()
    fake_openai.script = [Step(text="Too late.", hang_secs=HANG, before=asked.set)]
    proc = subprocess.Popen(
        [OMEGA_BIN, "chat", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **DUMP_ENV_VARS, **_env(fake_openai, stall=600)),
    )
    assert proc.stdin is not None
    proc.stdin.write(jsonl({"text": "are you there?"}))
    proc.stdin.flush()
    assert asked.wait(60), "the provider was never asked"
    stdout, stderr = dump_and_kill(proc)
    report = hung_report("omega chat --jsonl", 1, stdout, stderr)
    assert "still running after 1s" in report
    assert "Thread 0x" in report  # every thread (and faulthandler: the one the signal reached)
    assert "\"sender:('terminal'" in report  # every asyncio task, with its chain of awaits
    assert "in ask_provider" in report
    assert END_LINE in report
