"""`omega start`: loops run, a due reminder arrives once, SIGTERM shuts down cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omega.ops.stacks import DUMP_SIGNAL, END_LINE
from tests.conftest import OMEGA_BIN, jsonl, openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.stacks import DUMP_ENV_VARS, DUMP_WAIT_SECS, hung_report


class Running:
    """`omega start --jsonl` in the background, its stdout events collected as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [OMEGA_BIN, "start", "--jsonl"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, **DUMP_ENV_VARS, **env),
        )
        self.events: list[dict[str, object]] = []
        self.stderr: list[str] = []
        self.dumped = threading.Event()  # its stacks were written (tests/stacks.py)
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.append(json.loads(line))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            if END_LINE in line:
                self.dumped.set()

    def say(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(jsonl({"text": text, "sender_id": "ana"}))
        self.proc.stdin.flush()

    def wait_for(self, kind: str, count: int = 1, timeout: float = 20) -> list[dict[str, object]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [e for e in self.events if e["kind"] == kind]
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no {count} {kind!r} events; got {self.events}")

    def terminate(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        code = self.wait(30)
        return code, "".join(self.stderr)

    def wait(self, timeout: float) -> int:
        """Its exit code once it ended; one still running after `timeout` fails the test with
        where it was stuck (its stacks: tests/stacks.py)."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(DUMP_SIGNAL)
            self.dumped.wait(DUMP_WAIT_SECS)  # the stacks written, then it is killed
            self.proc.kill()
            self.proc.wait()
            for reader in self._readers:
                reader.join(timeout=5)
            pytest.fail(hung_report("omega start", timeout, "", "".join(self.stderr)), False)
        for reader in self._readers:
            reader.join(timeout=5)
        return code


def test_reminder_fires_once_and_sigterm_summarizes_and_exits_0(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    due = (datetime.now(UTC) + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fake_openai.script = [
        Step(text=f"I'll remind you.\nSCHEDULE: Stretch your legs | {due} | once", match="remind"),
        Step(text="Ana asked for a stretch reminder.", match="Summarize"),
        Step(text="name: Ana", match="extract"),
    ]
    omega = Running(openai_env(fake_openai))
    omega.say("remind me to stretch in two seconds")
    assert [e["text"] for e in omega.wait_for("reply")] == ["I'll remind you."]
    reminders = omega.wait_for("reminder")
    time.sleep(1.0)
    assert [e["text"] for e in omega.events if e["kind"] == "reminder"] == [
        "Reminder: Stretch your legs"
    ]
    assert reminders[0]["to"] == "ana"
    code, err = omega.terminate()
    assert code == 0, err
    assert "Traceback" not in err
    conn = connect_db(isolated_env / "memory.db")
    status = conn.execute("SELECT status FROM scheduled_tasks").fetchall()
    summaries = conn.execute("SELECT summary FROM summaries").fetchall()
    facts = conn.execute("SELECT key, value FROM facts WHERE key = 'name'").fetchall()
    conn.close()
    assert status == [("delivered",)]
    assert summaries == [("Ana asked for a stretch reminder.",)]
    assert facts == [("name", "Ana")]


def test_sigterm_lets_the_in_flight_reply_finish(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [Step(text="worth the wait", hang_secs=1.5)]
    omega = Running(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"))
    omega.say("take your time")
    deadline = time.monotonic() + 20
    while not fake_openai.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    code, err = omega.terminate()
    assert code == 0, err
    assert [e["text"] for e in omega.events if e["kind"] == "reply"] == ["worth the wait"]
