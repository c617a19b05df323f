"""Issue 17: exactly-once delivery and hostile input, through `omega chat --jsonl` (real kills)
and the real gateway and pipeline.

A reply is kept with its inbox row before it is sent and the row is marked done right after:
a kill after the send neither repeats the reply nor re-runs tools and markers; a kill between
keeping and sending re-sends the kept reply without asking the provider again; a message id
seen before is not handled twice. One hostile input line never stops the channel."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

import pytest

from omega.gateway.gateway import Gateway
from omega.turn import local_owner_id
from omega.types import IncomingMessage, OutgoingMessage
from tests.conftest import OMEGA_BIN, MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.providers import DIRECT, ScriptedProvider
from tests.integration.test_tool_loop import tool_call

REPLY_WITH_MARKERS = (
    "Logged it.\n"
    "SCHEDULE: call mom | 2030-01-01T10:00 | once\n"
    "LIMITATION: teleport-capability-xyz | cannot teleport people | build a teleporter"
)


def the_turn() -> list[Step]:
    """A turn that appends a ledger line with a tool, then acts on two markers."""
    return [
        Step(tool_calls=[tool_call("c1", "run_shell", command="echo entry >> ledger.txt")]),
        Step(text=REPLY_WITH_MARKERS),
    ]


def count(home: Path, sql: str) -> int:
    conn = connect_db(home / "memory.db")
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


@pytest.mark.slow
def test_a_kill_right_after_the_reply_neither_repeats_it_nor_reruns_tools_or_markers(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # After the reply, the new limitation's analysis call hangs: Omega is killed there, with
    # the reply already written on stdout.
    fake_openai.script = [*the_turn(), Step(match="teleport-capability-xyz", hang_secs=60)]
    proc = subprocess.Popen(
        [OMEGA_BIN, "chat", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, **openai_env(fake_openai)),
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout

    def pump() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        proc.stdin.write(jsonl({"text": "log it please"}))
        proc.stdin.flush()
        reply = None
        while reply is None:
            event = json.loads(lines.get(timeout=30))
            reply = event if event["kind"] == "reply" else None
        assert reply["text"] == "Logged it."
        deadline = time.monotonic() + 30
        while len(fake_openai.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(fake_openai.requests) == 3, "the analysis call never started"
    finally:
        proc.kill()  # kill -9, right after the reply went out
        proc.wait()
    ledger = isolated_env / "workspace" / "ledger.txt"
    assert ledger.read_text() == "entry\n"

    # Were the turn run again, the provider would call the tool and write the markers again.
    fake_openai.script = the_turn()
    asked = len(fake_openai.requests)
    again = run_omega("chat", "--jsonl", env=openai_env(fake_openai), stdin="")
    assert again.returncode == 0, again.stderr
    assert [e for e in again.events if e["kind"] == "reply"] == []
    assert len(fake_openai.requests) == asked
    assert ledger.read_text() == "entry\n"
    assert count(isolated_env, "SELECT COUNT(*) FROM scheduled_tasks") == 1
    assert count(isolated_env, "SELECT COUNT(*) FROM limitations") == 1
    assert count(isolated_env, "SELECT COUNT(*) FROM inbox WHERE status = 'pending'") == 0


def scripted(text: str) -> ScriptedProvider:
    """In-process provider: the reply with markers; planning calls get a direct route."""
    return ScriptedProvider(default=text, plan=DIRECT, model="")


class DyingChannel:
    """A terminal whose process dies (hangs until cancelled) while sending the reply."""

    name = "terminal"

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []
        self.reply_reached = asyncio.Event()

    async def run(self, submit: object) -> None:
        return None

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)  # what it tried to send, the reply it died on included
        if message.kind == "reply":
            self.reply_reached.set()
            await asyncio.Event().wait()

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None


class RecordingChannel(DyingChannel):
    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message)


def test_a_reply_kept_but_not_sent_is_sent_at_restart_without_asking_again(
    make_deps: MakeDeps,
) -> None:
    provider = scripted("Booked.\nSCHEDULE: call mom | 2030-01-01T10:00 | once")
    deps = make_deps(provider)
    store = deps.store
    message = IncomingMessage("terminal", "ana", "book it", id="m-1", assurance="local")

    async def first_life() -> None:
        dying = DyingChannel()
        gateway = Gateway(deps, [dying])
        await gateway.submit(message)
        await asyncio.wait_for(dying.reply_reached.wait(), 30)
        workers = list(gateway.senders.workers.values())
        for worker in workers:  # Omega stops while the reply is on its way
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    asyncio.run(first_life())
    assert len(provider.answered) == 1
    [(status, reply)] = store.query("SELECT status, reply FROM inbox WHERE id = 'm-1'")
    assert status == "pending" and "Booked." in reply

    async def second_life() -> RecordingChannel:
        channel = RecordingChannel()
        gateway = Gateway(deps, [channel])
        assert await gateway.replay_inbox() == 1
        await gateway.drain()
        return channel

    channel = asyncio.run(second_life())
    assert [(m.kind, m.text) for m in channel.sent] == [("reply", "Booked.")]
    assert len(provider.answered) == 1  # not asked again
    assert len(store.pending_tasks("ana")) == 1  # the marker was not applied twice
    [(status,)] = store.query("SELECT status FROM inbox WHERE id = 'm-1'")
    assert status == "done"


def test_a_message_id_seen_before_is_answered_once(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(fake_openai)
    first = run_omega(
        "chat",
        "--jsonl",
        env=env,
        stdin=jsonl(
            {"id": "m-1", "text": "first"},
            {"id": "m-1", "text": "first"},
            {"id": "m-2", "text": "second"},
        ),
    )
    assert first.returncode == 0, first.stderr
    assert [e["text"] for e in first.events if e["kind"] == "reply"] == [
        "echo: first",
        "echo: second",
    ]
    asked = len(fake_openai.requests)
    again = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"id": "m-1", "text": "first"}))
    assert again.returncode == 0, again.stderr
    assert [e for e in again.events if e["kind"] == "reply"] == []
    assert len(fake_openai.requests) == asked


def test_hostile_lines_never_stop_the_channel_and_every_message_is_answered_and_audited(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    stdin = b"".join(
        [
            b"[" * 200_000 + b"\n",  # RecursionError in the JSON parser
            b'{"text": "caf\xe9 \xff\xfe bytes"}\n',  # not UTF-8
            b'{"text": "lone \\ud800 surrogate"}\n',
            b'{"text": "who am I", "sender_id": "eve\\udc80"}\n',
            b"{not json at all\n",
            b'{"text": "still here"}\n',
        ]
    )
    proc = subprocess.run(
        [OMEGA_BIN, "chat", "--jsonl"],
        input=stdin,
        capture_output=True,
        env=dict(os.environ, **openai_env(fake_openai)),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    errors = [e for e in events if e["kind"] == "error"]
    assert [e["to"] for e in errors] == [None, None]
    assert "line 1 ignored" in errors[0]["text"] and "nested too deeply" in errors[0]["text"]
    assert "line 5 ignored" in errors[1]["text"]
    replies = [(e["to"], e["text"]) for e in events if e["kind"] == "reply"]
    user = local_owner_id()  # the default sender; eve may well be answered first
    # Different senders are answered concurrently: compare without their interleaving.
    assert sorted(replies) == sorted(
        [
            (user, "echo: caf\ufffd \ufffd\ufffd bytes"),
            (user, "echo: lone \ufffd surrogate"),
            ("eve\ufffd", "echo: who am I"),
            (user, "echo: still here"),
        ]
    )
    conn = connect_db(isolated_env / "memory.db")
    audited = conn.execute(
        "SELECT sender_id, input_text FROM audit_log WHERE event = 'exchange' ORDER BY id"
    ).fetchall()
    conn.close()
    assert sorted(audited) == sorted(
        [
            (user, "caf\ufffd \ufffd\ufffd bytes"),
            (user, "lone \ufffd surrogate"),
            ("eve\ufffd", "who am I"),
            (user, "still here"),
        ]
    )
