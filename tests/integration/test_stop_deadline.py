"""Issue 38: a stop has a deadline. After the provider went away (its port closed, or it hangs),
SIGTERM to `omega start` with several open conversations ends within `[service]
stop_timeout_secs`; the summaries it could not make stay queued in the store (the
conversations open, no placeholder summary) and the next start makes them."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.conftest import jsonl, openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_start import Running

STOP_TIMEOUT = 3.0  # [service] stop_timeout_secs for these runs
MARGIN = 2.0  # the process's own exit (interpreter teardown) on a shared, busy machine
PEOPLE = [f"person{n}" for n in range(6)]


def _env(server: FakeOpenAI, **extra: str) -> dict[str, str]:
    settings = {
        "OMEGA_SERVICE__STOP_TIMEOUT_SECS": f"{STOP_TIMEOUT:g}",
        # Only the stop summarizes in the first run; a hanging answer is not cut short early.
        "OMEGA_MEMORY__IDLE_MINUTES": "600",
        "OMEGA_PROVIDER__TIMEOUT_SECS": "60",
        "OMEGA_PROVIDER__CLASSIFY": "false",
    }
    return openai_env(server, **{**settings, **extra})


def _say(omega: Running, sender: str, text: str) -> None:
    assert omega.proc.stdin is not None
    omega.proc.stdin.write(jsonl({"text": text, "sender_id": sender}))
    omega.proc.stdin.flush()


def _talk(omega: Running) -> None:
    """One open conversation per person, each answered."""
    for person in PEOPLE:
        _say(omega, person, f"hello from {person}")
    omega.wait_for("reply", len(PEOPLE), timeout=60)


def _stop(omega: Running) -> tuple[float, int, str]:
    """SIGTERM; how long until the process was gone, its exit code and stderr."""
    started = time.monotonic()
    omega.proc.send_signal(signal.SIGTERM)
    code = omega.wait(60)
    took = time.monotonic() - started
    print(f"stop took {took:.2f}s")
    return took, code, "".join(omega.stderr)


def _conversations(home: Path) -> dict[str, tuple[str, str | None]]:
    """Each conversation's status and kept summary, by id."""
    with connect_db(home / "memory.db") as conn:
        rows = conn.execute(
            "SELECT c.id, c.status, s.summary FROM conversations c "
            "LEFT JOIN summaries s ON s.conversation_id = c.id"
        ).fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def _queued(home: Path) -> set[str]:
    """After the stop: every conversation open, none with a summary; their ids."""
    found = _conversations(home)
    assert len(found) == len(PEOPLE), found
    assert set(found.values()) == {("active", None)}, found  # no placeholder summary
    return set(found)


def _next_start_summarizes(home: Path, queued: set[str]) -> None:
    """Start again with a provider that answers: the queued conversations are summarized."""
    with FakeOpenAI() as server:
        server.script = [Step(text="A queued summary.", match="Summarize") for _ in queued]
        omega = Running(
            _env(
                server,
                OMEGA_MEMORY__IDLE_MINUTES="0.001",
                OMEGA_MEMORY__SUMMARIZE_CHECK_SECS="0.3",
                # The first run proved the deadline; this stop summarizes on exit and answers
                # the replayed message, which once took over 3 s on a loaded machine.
                OMEGA_SERVICE__STOP_TIMEOUT_SECS="30",
            )
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                found = _conversations(home)
                if all(found[cid] == ("closed", "A queued summary.") for cid in queued):
                    break
                time.sleep(0.2)
            assert {found[cid] for cid in queued} == {("closed", "A queued summary.")}, (
                found,
                omega.stderr,
            )
        finally:
            _, code, err = _stop(omega)
        assert code == 0, err


def test_sigterm_with_the_provider_refusing_ends_in_time_and_queues_the_summaries(
    isolated_env: Path,
) -> None:
    server = FakeOpenAI().__enter__()
    omega = Running(_env(server))
    try:
        _talk(omega)
    finally:
        server.go_away()  # its port refuses, its open connections are dropped
    took, code, err = _stop(omega)
    assert took < STOP_TIMEOUT + MARGIN, (took, err)
    assert code == 0, err
    assert "Traceback" not in err
    _next_start_summarizes(isolated_env, _queued(isolated_env))


def test_sigterm_with_the_provider_hanging_ends_in_time_and_keeps_the_unanswered(
    isolated_env: Path,
) -> None:
    server = FakeOpenAI().__enter__()
    try:
        omega = Running(_env(server))
        _talk(omega)
        server.default_delay = 120.0  # every answer from now on hangs
        _say(omega, "late", "are you there?")  # a turn in flight when the stop comes
        deadline = time.monotonic() + 30
        while server.in_flight < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.in_flight >= 1
        took, code, err = _stop(omega)
    finally:
        server.__exit__(None, None, None)
    assert took < STOP_TIMEOUT + MARGIN, (took, err)
    assert code == 0, err
    queued = _queued(isolated_env)
    with connect_db(isolated_env / "memory.db") as conn:
        unanswered = conn.execute("SELECT sender_id FROM inbox WHERE status != 'done'").fetchall()
    assert [r[0] for r in unanswered] == ["late"]  # answered at the next start
    _next_start_summarizes(isolated_env, queued)


@pytest.mark.no_store
def test_the_systemd_units_wait_longer_than_the_stop_deadline() -> None:
    from omega.config import Config
    from omega.ops.service import ServiceSpec, render_systemd

    unit = render_systemd(ServiceSpec(("/x/omega", "start"), Path("/h")))
    template = (Path(__file__).parents[2] / "deploy/systemd/omega@.service").read_text()
    deadline = Config().service.stop_timeout_secs
    for text in (unit, template):
        line = next(x for x in text.splitlines() if x.startswith("TimeoutStopSec="))
        assert float(line.split("=", 1)[1]) > deadline + 5
