"""The terminal never waits forever, images stay where the person can open them, a message that
keeps killing Omega is set aside, and `omega ask` falls back when the main provider hangs."""

from __future__ import annotations

import getpass
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import OMEGA_BIN, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import tool_call


def test_piped_chat_answers_every_line_in_order_without_reading_ahead(
    fake_openai: FakeOpenAI,
) -> None:
    # The welcome must not count as the answer: the second line waits for the first reply.
    result = run_omega("chat", env=openai_env(fake_openai), stdin="hi there\nsecond one\n")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("omega> ")]
    assert lines[-2:] == ["omega> echo: hi there", "omega> echo: second one"]
    assert not any("I'll get to this next" in line for line in lines)


class Terminal:
    """`omega chat` on a pseudo-terminal, as a person at a keyboard runs it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.leader, follower = pty.openpty()
        self.proc = subprocess.Popen(
            [OMEGA_BIN, "chat"],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=dict(os.environ, **env),
        )
        os.close(follower)
        self.seen = b""

    def read_until(self, marker: bytes, seconds: float = 20) -> bool:
        deadline = time.monotonic() + seconds
        while marker not in self.seen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.leader], [], [], 0.2)
            if ready:
                try:
                    self.seen += os.read(self.leader, 4096)
                except OSError:
                    break
        return marker in self.seen

    def type(self, keys: bytes) -> None:
        os.write(self.leader, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.leader)


def wait_for_request(server: FakeOpenAI, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.requests, "the message never reached the provider"


@pytest.mark.slow
@pytest.mark.parametrize("leave", [b"/quit\r", b"\x04"], ids=["quit", "ctrl-d"])
def test_quit_and_ctrl_d_work_while_an_answer_is_pending(
    fake_openai: FakeOpenAI, leave: bytes
) -> None:
    fake_openai.script = [Step(text="too late", hang_secs=30)]
    terminal = Terminal(openai_env(fake_openai))
    try:
        assert terminal.read_until(b"you> "), terminal.seen
        terminal.type(b"hi\r")
        wait_for_request(fake_openai)
        started = time.monotonic()
        terminal.type(leave)
        assert terminal.proc.wait(timeout=15) == 0
        assert time.monotonic() - started < 10
        terminal.read_until(b"next start", 2)
        assert b"still working on that" in terminal.seen
    finally:
        terminal.close()
    # The unanswered message is kept and answered at the next start.
    again = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin="")
    assert [e["text"] for e in again.events if e["kind"] == "reply"] == ["echo: hi"]


@pytest.mark.slow
def test_a_piped_script_with_quit_still_gets_its_answers(fake_openai: FakeOpenAI) -> None:
    result = run_omega("chat", env=openai_env(fake_openai), stdin="hi\n/quit\nnever sent\n")
    assert result.returncode == 0, result.stderr
    assert "omega> echo: hi" in result.stdout
    assert "never sent" not in result.stdout


@pytest.mark.slow
def test_an_image_for_the_terminal_is_kept_where_the_person_can_open_it(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(tool_calls=[tool_call("c1", "write_file", path="chart.png", content="PNGDATA")]),
        Step(text="Here is your chart."),
    ]
    result = run_omega(
        "chat", "--jsonl", env=openai_env(fake_openai), stdin=jsonl({"text": "draw a chart"})
    )
    assert result.returncode == 0, result.stderr
    [photo] = [e for e in result.events if e["kind"] == "photo"]
    path = Path(str(photo["path"]))
    assert path.read_text() == "PNGDATA"  # still there after Omega finished
    assert path.parent == isolated_env / "downloads"
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_a_message_that_keeps_killing_omega_is_set_aside(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = dict(os.environ, **openai_env(fake_openai))
    for attempt in range(3):
        fake_openai.script = [Step(text="never", hang_secs=30)]
        before = len(fake_openai.requests)
        proc = subprocess.Popen(
            [OMEGA_BIN, "chat", "--jsonl"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdin is not None
        if attempt == 0:
            proc.stdin.write(jsonl({"text": "the poison", "sender_id": "bob"}))
            proc.stdin.flush()
        deadline = time.monotonic() + 20
        while len(fake_openai.requests) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(fake_openai.requests) > before, f"attempt {attempt + 1} never started"
        proc.kill()  # the message "crashes" Omega
        proc.wait()
    fake_openai.script = []
    before = len(fake_openai.requests)
    result = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin="")
    assert result.returncode == 0, result.stderr
    assert len(fake_openai.requests) == before  # not tried a fourth time
    [told] = [e for e in result.events if e["to"] == "bob"]
    assert told["kind"] == "error" and "couldn't handle your message" in str(told["text"])
    [alert] = [e for e in result.events if e["kind"] == "alert"]
    assert alert["to"] == getpass.getuser() and "the poison" in str(alert["text"])
    conn = connect_db(isolated_env / "memory.db")
    rows = conn.execute("SELECT status, attempts, last_error FROM inbox").fetchall()
    conn.close()
    assert rows == [("failed", 3, "Omega stopped while handling it 3 times")]


def test_handled_messages_leave_the_inbox(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    result = run_omega(
        "chat", "--jsonl", env=openai_env(fake_openai), stdin=jsonl({"text": "a"}, {"text": "b"})
    )
    assert result.returncode == 0, result.stderr
    conn = connect_db(isolated_env / "memory.db")
    # Only the ids of handled messages are kept (to answer a re-delivered one once): no text,
    # no stored reply.
    rows = conn.execute("SELECT status, payload, reply FROM inbox").fetchall()
    conn.close()
    assert rows == [("done", "{}", None), ("done", "{}", None)]


def test_ask_falls_back_when_the_main_provider_hangs(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [Step(text="too late", hang_secs=30)]
    with FakeOpenAI() as backup:
        backup.script = [Step(text="from the fallback")]
        env = openai_env(
            fake_openai,
            OMEGA_PROVIDER__TIMEOUT_SECS="5",
            OMEGA_PROVIDER__FALLBACK='["ollama"]',
            OMEGA_PROVIDER__OLLAMA__BASE_URL=backup.base_url,
        )
        result = run_omega("ask", "hello?", env=env, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "from the fallback"
