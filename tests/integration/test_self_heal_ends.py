"""A self-healing session that is over schedules nothing more (spec 003 invariant 32): once it is
resolved, escalated or cleared, none of its verification tasks runs, so none asks the provider.
The markers go through `omega chat --jsonl`; the clock moves by running the real scheduler at a
later `now`."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.gateway.pipeline import respond
from omega.loops.scheduler import Scheduler
from tests.conftest import MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.outbox import Recorder

OWNER = {
    "OMEGA_HEARTBEAT__CHANNEL": "terminal",
    "OMEGA_HEARTBEAT__REPLY_TARGET": "owner",
    "OMEGA_PROVIDER__CLASSIFY": "false",
}


def chat(fake_openai: FakeOpenAI, *texts: str) -> None:
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, **OWNER),
        stdin=jsonl(*({"text": t} for t in texts)),
    )
    assert result.returncode == 0, result.stderr


def pending_actions(home: Path) -> int:
    conn = connect_db(home / "memory.db")
    try:
        row = conn.execute(
            "SELECT COUNT(*) FROM scheduled_tasks WHERE task_type = 'action' AND status = 'pending'"
        ).fetchone()
        return int(row[0])
    finally:
        conn.close()


def audited(home: Path, event: str) -> list[str]:
    conn = connect_db(home / "memory.db")
    try:
        rows = conn.execute("SELECT detail FROM audit_log WHERE event = ?", (event,)).fetchall()
        return [str(r[0]) for r in rows]
    finally:
        conn.close()


def provider_calls_later(make_deps: MakeDeps, fake_openai: FakeOpenAI) -> int:
    """Move the clock an hour on and let the scheduler run what is due: the provider calls."""
    deps = make_deps(**openai_env(fake_openai, **OWNER))
    before = len(fake_openai.requests)
    fake_openai.script = [Step(text="SELF_HEAL: again | check")]
    later = datetime.now(UTC) + timedelta(hours=1)
    asyncio.run(Scheduler(deps, Recorder(), respond).run_due(later))
    return len(fake_openai.requests) - before


def test_resolving_cancels_the_pending_check(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    fake_openai.script = [
        Step(match="slow", text="Restarting it.\nSELF_HEAL: restarted the db | SELECT 1"),
        Step(match="works", text="Good.\nSELF_HEAL_RESOLVED"),
    ]
    chat(fake_openai, "the db is slow", "it works now")
    assert pending_actions(isolated_env) == 0
    [detail] = audited(isolated_env, "self_heal:checks_cancelled")
    assert "cancelled task" in detail
    assert provider_calls_later(make_deps, fake_openai) == 0


def test_escalation_cancels_every_pending_check(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    fake_openai.script = [Step(text="SELF_HEAL: db slow | check it") for _ in range(11)]
    chat(fake_openai, *(f"heal {n}" for n in range(11)))
    assert pending_actions(isolated_env) == 0
    [detail] = audited(isolated_env, "self_heal:checks_cancelled")
    assert detail.count("cancelled task") == 10
    assert provider_calls_later(make_deps, fake_openai) == 0


def test_the_owner_clearing_a_session_cancels_its_checks(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    fake_openai.script = [Step(text="SELF_HEAL: db slow | check it") for _ in range(2)]
    chat(fake_openai, "heal", "heal again", "/selfheal clear")
    assert pending_actions(isolated_env) == 0
    [detail] = audited(isolated_env, "self_heal:cleared")
    assert detail.count("cancelled task") == 2
    assert provider_calls_later(make_deps, fake_openai) == 0


def test_an_open_session_still_checks(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    """The control: without an end, the verification task does run."""
    fake_openai.script = [Step(text="SELF_HEAL: db slow | check it")]
    chat(fake_openai, "heal")
    assert pending_actions(isolated_env) == 1
    assert provider_calls_later(make_deps, fake_openai) == 1
