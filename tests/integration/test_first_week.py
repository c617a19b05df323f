"""What a user meets in the first week, through `omega chat --jsonl` (issue: correctness pass 2):
every answer of a script is delivered, no noise at exit, plan progress in the person's language,
stable ids on JSON output, and acknowledgements that never jump the queue."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from omega.channels.terminal import JsonlChannel
from omega.gateway.gateway import Gateway
from omega.types import IncomingMessage
from tests.conftest import OMEGA_BIN, MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_exactly_once import DyingChannel, scripted


def test_every_answer_of_a_script_is_delivered_past_the_grace_period(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """Three slow answers in a row take longer than the shutdown grace: none is dropped."""
    fake_openai.default_delay = 1.2
    env = openai_env(fake_openai, OMEGA_OMEGA__SHUTDOWN_GRACE_SECS="1")
    stdin = jsonl(*({"text": f"question {i}", "sender_id": "ana"} for i in range(3)))
    result = run_omega("chat", "--jsonl", env=env, stdin=stdin)
    assert result.returncode == 0, result.stderr
    replies = [e["text"] for e in result.events if e["kind"] == "reply"]
    assert replies == ["echo: question 0", "echo: question 1", "echo: question 2"]


def test_an_interrupted_script_is_told_which_messages_were_not_answered(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.default_delay = 30
    proc = subprocess.Popen(
        [OMEGA_BIN, "chat", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **openai_env(fake_openai)),
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(jsonl({"text": "a slow one", "id": "q-1"}))
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while not fake_openai.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake_openai.requests, "the question never reached the provider"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    assert "q-1" in err and "not answered" in err


def test_leaving_the_chat_warns_of_nothing_when_nothing_was_in_flight(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(fake_openai)
    result = run_omega("chat", env=env, stdin="hello\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert "echo: hello" in result.stdout
    log = (isolated_env / "omega.log").read_text()
    assert "did not finish" not in log
    assert "did not finish" not in result.stderr


def test_plan_progress_speaks_the_persons_language(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    plan = {"kind": "steps", "steps": [{"do": "buscar vuelos"}, {"do": "comparar precios"}]}
    fake_openai.script = [Step(text=json.dumps(plan), planner=True)]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai),
        stdin=jsonl(
            {"text": "Hola, necesito buscar vuelos y comparar precios", "sender_id": "eva"}
        ),
    )
    assert result.returncode == 0, result.stderr
    statuses = [str(e["text"]) for e in result.events if e["kind"] == "status"]
    assert statuses[0].startswith("Plan:\n1. buscar vuelos")
    assert "✓ Paso 1/2: buscar vuelos" in statuses
    assert "✓ Paso 2/2: comparar precios" in statuses
    assert not [s for s in statuses if "Step" in s]


def test_every_json_output_carries_a_stable_id_and_what_it_answers(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(fake_openai)
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hi", "id": "m-1"}))
    assert result.returncode == 0, result.stderr
    ids = [e["id"] for e in result.events]
    assert len(set(ids)) == len(ids) and all(isinstance(i, str) and i for i in ids)
    [reply] = [e for e in result.events if e["kind"] == "reply"]
    assert reply["reply_to"] == "m-1"
    assert reply["id"] == "m-1#1"
    [welcome] = [e for e in result.events if e["kind"] == "welcome"]
    assert welcome["reply_to"] == "m-1"


def test_a_reply_resent_after_a_crash_keeps_its_id(make_deps: MakeDeps) -> None:
    """A kept answer that was never marked sent is sent again at the next start with the same
    `id` and `reply_to`, so the receiving script can drop the duplicate."""
    deps = make_deps(scripted("Booked."))
    message = IncomingMessage("terminal", "ana", "book it", id="jsonl:m-7", assurance="local")
    dying = DyingChannel()

    async def first_life() -> None:
        gateway = Gateway(deps, [dying])
        await gateway.submit(message)
        await asyncio.wait_for(dying.reply_reached.wait(), 30)
        workers = list(gateway.senders.workers.values())
        for worker in workers:  # Omega stops while the reply is on its way
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    async def second_life() -> list[str]:
        out = io.StringIO()
        gateway = Gateway(deps, [JsonlChannel(stdin=io.StringIO(""), stdout=out)])
        assert await gateway.replay_inbox() == 1
        await gateway.drain()
        return out.getvalue().splitlines()

    asyncio.run(first_life())
    [lost] = [m for m in dying.sent if m.kind == "reply"]
    [line] = asyncio.run(second_life())
    resent = json.loads(line)
    assert (resent["id"], resent["reply_to"], resent["text"]) == ("m-7#1", "m-7", "Booked.")
    assert lost.id == "jsonl:m-7#1"  # the same id, before the channel dropped its namespace


def test_a_queued_command_gets_no_acknowledgement(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    env = openai_env(fake_openai)
    assert run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "hi"})).returncode == 0
    fake_openai.default_delay = 0.5
    result = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": "slow question"}, {"text": "/help"})
    )
    assert result.returncode == 0, result.stderr
    assert [e["kind"] for e in result.events] == ["reply", "command"]


def test_the_welcome_comes_before_any_acknowledgement(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.default_delay = 0.5
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai),
        stdin=jsonl({"text": "first"}, {"text": "second"}, {"text": "third"}),
    )
    assert result.returncode == 0, result.stderr
    kinds = [e["kind"] for e in result.events]
    assert kinds[0] == "welcome"
    assert kinds.count("reply") == 3


def test_a_reminder_that_was_not_set_is_never_left_as_a_promise(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(
            text="Sure, I will remind you!\nSCHEDULE: call mum | tomorrow-ish | once",
            match="call mum",
        ),
        Step(
            text="¡Claro, te lo recuerdo!\nSCHEDULE: llamar a mamá | mañana-ish | once",
            match="llamar",
        ),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai),
        stdin=jsonl(
            {"text": "remind me to call mum tomorrow-ish", "sender_id": "ana"},
            {"text": "Hola, recuérdame llamar a mamá mañana", "sender_id": "eva"},
        ),
    )
    assert result.returncode == 0, result.stderr
    by_person = {e["to"]: str(e["text"]) for e in result.events if e["kind"] == "reply"}
    assert by_person["ana"].startswith("Sure, I will remind you!")
    assert "⚠ Not scheduled: “call mum”" in by_person["ana"]
    assert "⚠ No programado: «llamar a mamá»" in by_person["eva"]

    conn = connect_db(isolated_env / "memory.db")
    assert conn.execute("SELECT COUNT(*) FROM scheduled_tasks").fetchone()[0] == 0
    conn.close()


def _planner_line(request_text: str, prefix: str) -> str:
    return next(line for line in request_text.splitlines() if line.startswith(prefix))


@pytest.mark.slow
def test_the_planner_sees_the_tools_the_sender_may_use(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """The owner's plan that names run_shell is carried out (it used to be thrown away as
    'unknown tools', the planner being told 'Tools: (none)'); a person sees only their set."""
    plan = {
        "kind": "steps",
        "steps": [
            {"do": "list the files", "uses": ["run_shell"]},
            {"do": "read the notes", "uses": ["read_file"]},
        ],
    }
    fake_openai.script = [Step(text=json.dumps(plan), planner=True)]
    env = openai_env(fake_openai)
    result = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "look through my files"}))
    assert result.returncode == 0, result.stderr
    guest = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": "read my notes", "sender_id": "guest"})
    )
    assert guest.returncode == 0, guest.stderr
    by_request = {
        r.last_user_text.rsplit("Request: ", 1)[-1]: r for r in fake_openai.planner_requests
    }
    owner_plan, guest_plan = by_request["look through my files"], by_request["read my notes"]
    owner_tools = _planner_line(owner_plan.last_user_text, "Tools:")
    for name in ("run_shell", "read_file", "write_file", "fetch_url"):
        assert name in owner_tools
    guest_tools = _planner_line(guest_plan.last_user_text, "Tools:")
    assert "read_file" in guest_tools
    assert "run_shell" not in guest_tools and "write_file" not in guest_tools
    statuses = [str(e["text"]) for e in result.events if e["kind"] == "status"]
    assert statuses and statuses[0].startswith("Plan:\n1. list the files")


@pytest.mark.slow
def test_resolving_a_limitation_removes_only_its_own_checklist_line(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """Resolving "Email" used to remove every checklist line holding the word."""
    isolated_env.mkdir(parents=True)
    heartbeat = isolated_env / "HEARTBEAT.md"
    mine = ["- Check my email inbox daily", "- Remind me: no email after 22:00"]
    heartbeat.write_text("# Heartbeat checklist\n" + "\n".join(mine) + "\n")
    fake_openai.script = [
        Step(text="I can't send mail yet.\nLIMITATION: Email | cannot send mail | a mail skill"),
    ]
    env = openai_env(fake_openai)
    said = run_omega("chat", "--jsonl", env=env, stdin=jsonl({"text": "mail this to Bob"}))
    assert said.returncode == 0, said.stderr

    conn = connect_db(isolated_env / "memory.db")
    [(limitation_id,)] = conn.execute("SELECT id FROM limitations WHERE title = 'Email'").fetchall()
    conn.close()
    assert len(heartbeat.read_text().splitlines()) == 4  # the limitation's line was added
    done = run_omega(
        "chat", "--jsonl", env=env, stdin=jsonl({"text": f"/resolve {limitation_id} done"})
    )
    assert done.returncode == 0, done.stderr
    lines = heartbeat.read_text().splitlines()
    assert [line for line in lines if line.startswith("- ")] == mine


def test_a_terminal_chat_shows_no_banner_nor_exit_warning(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    """At a real terminal (a pty), pydantic-ai printed its Logfire banner into the chat."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [OMEGA_BIN, "chat"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=dict(os.environ, **openai_env(fake_openai)),
        close_fds=True,
    )
    os.close(slave)
    seen = b""
    try:
        os.write(master, b"hello\n")
        deadline = time.monotonic() + 60
        while b"echo: hello" not in seen and time.monotonic() < deadline:
            seen += _read_pty(master)
        os.write(master, b"/quit\n")
        proc.wait(timeout=30)
        seen += _read_pty(master)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    shown = seen.decode(errors="replace")
    assert "echo: hello" in shown
    assert "Logfire" not in shown and "pydantic-ai v" not in shown, shown
    assert "did not finish" not in shown


def _read_pty(fd: int) -> bytes:
    import select

    ready, _, _ = select.select([fd], [], [], 0.5)
    if not ready:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # the other side closed
        return b""
