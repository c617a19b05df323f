"""The dashboard shows what every kind of provider call costs (issue 28): today's total against
the daily cap, and per kind of call (replies, planning, introspection, analysis, summaries...)
today and over 30 days, from the audit rows each call leaves."""

from __future__ import annotations

import re
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.memory.audit import AuditEntry
from omega.memory.db import to_db_time
from omega.memory.store import Store
from tests.conftest import openai_env
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.web_support import RunningWeb, login

TODAY = {"exchange": 0.10, "classify": 0.01, "introspection": 0.02, "summary": 0.03}
TODAY_ANALYSIS = (0.015, 0.025)  # one row per analysis call


def seed_spending(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "memory.db")

    def call(event: str, usd: float | None, provider: str = "openai") -> None:
        store.audit(
            AuditEntry(
                channel="telegram",
                sender_id="ana",
                status="ok",
                event=event,
                provider=provider,
                model="gpt-4o-mini",
                input_tokens=100,
                output_tokens=10,
                cost_usd=usd,
            )
        )

    try:
        call("exchange", 5.0)  # yesterday's, moved below
        with store.transaction() as conn:
            conn.execute(
                "UPDATE audit_log SET created_at = ?",
                (to_db_time(datetime.now(UTC) - timedelta(days=1)),),
            )
        for event, usd in TODAY.items():
            call(event, usd)
        for usd in TODAY_ANALYSIS:
            call("analysis", usd)
        call("ask", None)  # the lean path: no cost reported
        call("proposal:new", None, provider="")  # no provider: not a call
    finally:
        store.close()


def cells(page: str, kind: str) -> list[str]:
    """The table cells of one kind's row in the spending table."""
    table = page.split('<table id="spending">', 1)[1].split("</table>", 1)[0]
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
        found = [
            re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)
        ]
        if found and found[0].split(" ")[0] == kind:
            return found
    raise AssertionError(f"no row for {kind}")


def test_the_overview_shows_spending_per_kind_and_today_against_the_cap(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    seed_spending(isolated_env)
    running = RunningWeb(
        isolated_env,
        openai_env(fake_openai, OMEGA_LIMITS__DAILY_USD="2"),
    )
    try:
        client, _ = login(running)
        with closing(client):
            page = client.get("/").text
    finally:
        code, err = running.terminate()
        assert code == 0, err
    total = sum(TODAY.values()) + sum(TODAY_ANALYSIS)
    today = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page.split('id="spent-today">')[1]))
    assert today.startswith(f"Today (UTC): {total:.4f} USD of the 2.0 USD daily cap")
    assert "background work stops at 1.60 USD, replies at 2.0 USD" in today
    assert "Cost per day, USD (by kind of call)" in page
    assert cells(page, "reply")[:6] == ["reply", "1", "0.1000", "2", "220", "5.1000"]
    assert cells(page, "planning")[1:3] == ["1", "0.0100"]
    assert cells(page, "analysis")[1:3] == ["2", "0.0400"]
    assert cells(page, "introspection")[0] == "introspection (background)"
    assert cells(page, "summaries")[1:3] == ["1", "0.0300"]
    ask = cells(page, "ask")
    assert ask[1:3] == ["1", "0.0000"] and "1 calls with no reported cost" in ask[5]
