"""`omega start` with the web page on, for the web tests: a free port, the login link from
$OMEGA_HOME/web.url, and a memory.db seeded with something of everything the dashboard shows."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from omega.evolution.gaps import LimitationStore
from omega.evolution.proposals import ProposalStore
from omega.memory.audit import AuditEntry
from omega.memory.db import to_db_time
from omega.memory.store import Store
from omega.types import ToolCall
from tests.conftest import OMEGA_BIN


class RunningWeb:
    """`omega start` serving the page on 127.0.0.1 (any free port)."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home = home
        self.url_file = home / "web.url"
        full = dict(
            os.environ,
            OMEGA_WEB__ENABLED="true",
            OMEGA_WEB__PORT="0",
            OMEGA_HEARTBEAT__ENABLED="false",
            OMEGA_MEMORY__IDLE_MINUTES="600",
            **env,
        )
        self.proc = subprocess.Popen(
            [OMEGA_BIN, "start"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full,
        )
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._read_err, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.url_file.exists() and "web page at" in "".join(self.stderr):
                break
            if self.proc.poll() is not None:
                raise AssertionError(f"omega start exited: {''.join(self.stderr)}")
            time.sleep(0.05)
        else:
            raise AssertionError(f"the web page did not start: {''.join(self.stderr)}")

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    @property
    def login_link(self) -> str:
        """The current one-time login link."""
        return self.url_file.read_text().strip()

    @property
    def base(self) -> str:
        """http://127.0.0.1:PORT"""
        return self.login_link.split("/?token=")[0]

    def terminate(self) -> tuple[int, str]:
        """SIGTERM, wait, and return the exit code and stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(timeout=5)
        return code, "".join(self.stderr)


@contextmanager
def serving(home: Path, env: dict[str, str]) -> Iterator[RunningWeb]:
    """The page served while the block runs; then stopped, and it must have stopped cleanly
    (exit 0, no traceback)."""
    running = RunningWeb(home, env)
    try:
        yield running
    finally:
        code, err = running.terminate()
        assert code == 0, err
        assert "Traceback" not in err


def login(web: RunningWeb, timeout: float = 10) -> tuple[httpx.Client, str]:
    """A client logged in with the link, and the page's CSRF token."""
    client = httpx.Client(base_url=web.base, follow_redirects=False, timeout=timeout)
    response = client.get(web.login_link.removeprefix(web.base))
    assert response.status_code == 303
    page = client.get("/chat")
    assert page.status_code == 200
    match = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert match
    return client, match.group(1)


def seed(home: Path) -> dict[str, object]:
    """Something of everything the dashboard shows; return the ids the tests act on."""
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "memory.db")
    try:
        limitations = LimitationStore(store)
        open_one, _ = limitations.add(
            "Cannot read PDF attachments", "PDFs arrive but I cannot read them", "a pdf skill"
        )
        proposals = ProposalStore(store)
        gate = {"action": "manual_review", "errors": [], "warnings": ["touches the network"]}
        approve_me = proposals.file(
            "skill",
            {
                "name": "pdf-reader",
                "description": "Read PDF attachments and summarize them for the owner",
                "content": "# PDF reader\n\nExtract the text of the PDF, then summarize it.",
                "risk_level": "low",
                "category": "documents",
            },
            goal="read PDFs",
            source="limitation",
            evidence=["owner sent three PDFs"],
            gate=gate,
        ).proposal
        reject_me = proposals.file(
            "tool",
            {
                "name": "wire_money",
                "description": "Send money from the owner's bank account to anyone at all",
                "risk_level": "high",
                "category": "finance",
            },
            goal="pay bills",
            source="introspection",
            evidence=["asked about bills"],
            gate={"action": "manual_review", "errors": [], "warnings": ["high risk"]},
        ).proposal
        due = datetime.now(UTC) + timedelta(days=2)
        task_id, _ = store.create_task(
            channel="telegram",
            sender_id="ana",
            reply_target="ana",
            description="Water the plants",
            due_at=due,
            repeat="weekly",
            timezone="Europe/Berlin",
        )
        store.store_exchange("telegram", "ana", "hello there", "Hello Ana!")
        store.set_fact("ana", "name", "Ana")
        store.set_fact("ana", "city", "Lisbon")
        for day in range(5):
            store.audit(
                AuditEntry(
                    channel="telegram",
                    sender_id="ana",
                    status="ok",
                    provider="openai" if day % 2 else "anthropic",
                    model="m",
                    input_tokens=1000 + 300 * day,
                    output_tokens=200 + 50 * day,
                    cost_usd=0.01 * (day + 1),
                    input_text=f"question {day}",
                    output_text=f"answer {day}",
                )
            )
        with store.transaction() as conn:  # spread over the last days, for the charts
            now = datetime.now(UTC)
            for (row_id,) in conn.execute(
                "SELECT id FROM audit_log WHERE provider != ''"
            ).fetchall():
                conn.execute(
                    "UPDATE audit_log SET created_at = ? WHERE id = ?",
                    (to_db_time(now - timedelta(days=int(row_id) % 5)), row_id),
                )
        store.record_tool_calls(
            [
                ToolCall("read_file", {"path": "notes.txt"}, True, "ok", 12),
                ToolCall("read_file", {"path": "x"}, False, "", 3, "not found"),
                ToolCall("fetch_url", {"url": "https://example.org"}, True, "<html>", 240),
            ],
            agent="openai:fake-model",
            channel="telegram",
            sender_id="ana",
        )
    finally:
        store.close()
    return {
        "limitation": open_one.id,
        "approve": approve_me.id,
        "reject": reject_me.id,
        "task": task_id,
    }
