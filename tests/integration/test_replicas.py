"""Two `omega start` on one memory.db (issue 30): Telegram is polled by one, a due task fires
once, a web login on one holds on the other, status lists both, and kill -9 of the leader
hands its jobs and the polling to the other within about two lease times."""

from __future__ import annotations

import datetime as dt
import http.client
import os
import re
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from tests.conftest import OMEGA_BIN
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.telegram_server import FakeTelegram
from tests.integration.test_telegram import ANA, Omega, start, telegram, telegram_env

__all__ = ["start", "telegram"]  # the fixtures this module uses
LEASE = 2.0  # seconds: [store] lease_seconds for these replicas


def _leases(home: Path) -> dict[str, str]:
    with connect_db(home / "memory.db") as conn:
        return dict(conn.execute("SELECT name, holder FROM leases").fetchall())


def _pid(holder: str) -> int:
    return int(holder.split("/")[2])  # host/pid namespace/pid/random


def _web_base(omega: Omega) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"web page at (http://\S+) ", "".join(omega.stderr))
        if found:
            return found.group(1)
        time.sleep(0.05)
    raise AssertionError("".join(omega.stderr))


def _get(base: str, path: str, cookie: str = "") -> tuple[http.client.HTTPResponse, str]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    response = conn.getresponse()
    body = response.read().decode("utf-8", "replace")
    conn.close()
    return response, body


def _wait(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_two_replicas_share_the_work_and_the_survivor_takes_over(
    telegram: FakeTelegram,
    fake_openai: FakeOpenAI,
    start: type[Omega],
    isolated_env: Path,
) -> None:
    due = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=6)).strftime("%Y-%m-%dT%H:%M:%S")
    fake_openai.script = [
        Step(text=f"Will do.\nSCHEDULE: stretch your legs | {due} | once", match="remind"),
        Step(text="Still here.", match="anyone"),
    ]
    env = telegram_env(
        telegram,
        fake_openai,
        OMEGA_OMEGA__TIMEZONE="UTC",
        OMEGA_STORE__LEASE_SECONDS=str(LEASE),
        OMEGA_WEB__ENABLED="true",
        OMEGA_WEB__PORT="0",
        OMEGA_HEARTBEAT__ENABLED="true",
    )
    first, second = start(env), start(env)
    base_first, base_second = _web_base(first), _web_base(second)
    jobs = {"job:scheduler", "job:heartbeat", "job:summarizer", "job:critic", "job:quant"}
    _wait(lambda: {"channel:telegram", *jobs} <= set(_leases(isolated_env)))

    # One replica leads Telegram; a reminder set through it fires exactly once.
    telegram.private(ANA, "remind me to stretch")
    telegram.wait_for(lambda: "Will do." in telegram.texts(ANA))
    telegram.wait_for(lambda: any("stretch your legs" in t for t in telegram.texts(ANA)))
    time.sleep(2 * LEASE)  # time for a second firing, were there one
    assert sum("stretch your legs" in t for t in telegram.texts(ANA)) == 1

    # A login on the first replica's page is valid on the second's.
    token = (isolated_env / "web.url").read_text().strip().split("token=")[1]
    login, _ = _get(base_first, f"/?token={token}")
    assert login.status == 303
    cookie = (login.getheader("set-cookie") or "").split(";")[0]
    health, page = _get(base_second, "/health", cookie)
    assert health.status == 200
    assert _get(base_second, "/health")[0].status == 401

    # The Health page lists both replicas, alive, and the leases. (Alive: seen within one lease
    # time, 2 s here; a replica busy starting may beat late, so the page is read again.)
    def both_alive(page: str) -> bool:
        return all(
            re.search(rf"/{omega.proc.pid}/\w+</code></td><td class=\"good\">alive", page)
            for omega in (first, second)
        )

    deadline = time.monotonic() + 15
    while not both_alive(page) and time.monotonic() < deadline:
        time.sleep(0.5)
        page = _get(base_second, "/health", cookie)[1]
    assert both_alive(page), page
    assert "<code>channel:telegram</code>" in page and "<code>job:scheduler</code>" in page

    # Status lists both replicas, alive, and who holds what.
    shown = subprocess.run(
        [OMEGA_BIN, "status"], capture_output=True, text=True, env=dict(os.environ, **env)
    ).stdout
    replicas = [line for line in shown.splitlines() if line.startswith("replica ")]
    assert len(replicas) == 2 and all("alive" in line for line in replicas), shown
    assert re.search(r"lease channel:telegram\s+\S+/\d+/\w+, until", shown), shown

    # kill -9 the replica leading Telegram (it holds the jobs too: it started first).
    leader = _pid(_leases(isolated_env)["channel:telegram"])
    victim, survivor = (first, second) if first.proc.pid == leader else (second, first)
    victim.kill()
    killed_at = time.monotonic()
    _wait(
        lambda: (
            all(
                _pid(holder) == survivor.proc.pid
                for name, holder in _leases(isolated_env).items()
                if name in {"channel:telegram", *jobs}
            )
            and {"channel:telegram", *jobs} <= set(_leases(isolated_env))
        ),
        timeout=4 * LEASE + 10,
    )
    assert time.monotonic() - killed_at < 3 * LEASE + 5
    telegram.private(ANA, "anyone there?")
    telegram.wait_for(lambda: "Still here." in telegram.texts(ANA))
    shown = subprocess.run(
        [OMEGA_BIN, "status"], capture_output=True, text=True, env=dict(os.environ, **env)
    ).stdout
    dead = f"/{victim.proc.pid}/"
    assert any(dead in line and "dead" in line for line in shown.splitlines()), shown

    # A third joins; the survivor's clean stop hands everything over at once and leaves the
    # open conversation open (the third may be in it); the last one to stop summarizes it.
    third = start(env)
    _wait(lambda: len(_alive(isolated_env)) == 2)
    code, err = survivor.terminate()
    assert code == 0, err
    assert _open_conversations(isolated_env) == 1
    _wait(
        lambda: (
            {"channel:telegram", *jobs} <= set(_leases(isolated_env))
            and {_pid(h) for h in _leases(isolated_env).values()} == {third.proc.pid}
        ),
        timeout=2 * LEASE,
    )
    code, err = third.terminate()
    assert code == 0, err
    assert _open_conversations(isolated_env) == 0
    assert _leases(isolated_env) == {}  # a clean stop releases every lease


def _alive(home: Path) -> list[str]:
    with connect_db(home / "memory.db") as conn:
        rows = conn.execute("SELECT id, seen_at FROM replicas WHERE stopped_at IS NULL")
        recent = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=LEASE)).isoformat()
        return [row[0] for row in rows if row[1].replace("Z", "+00:00") >= recent]


def _open_conversations(home: Path) -> int:
    with connect_db(home / "memory.db") as conn:
        query = "SELECT COUNT(*) FROM conversations WHERE status = 'active'"
        return int(conn.execute(query).fetchone()[0])


def test_the_replica_polling_telegram_shares_a_burst_with_the_others(
    telegram: FakeTelegram,
    fake_openai: FakeOpenAI,
    start: type[Omega],
    isolated_env: Path,
) -> None:
    senders = [ANA + n for n in range(40)]
    fake_openai.default_delay = 0.5  # turns overlap: the burst piles up on the receiver
    env = telegram_env(
        telegram,
        fake_openai,
        OMEGA_STORE__LEASE_SECONDS=str(LEASE),
        OMEGA_PROVIDER__CLASSIFY="false",
        # Each replica keeps max_concurrent_provider_calls / 2 (4) turns before sharing.
        OMEGA_LIMITS__MAX_CONCURRENT_PROVIDER_CALLS="8",
    )
    env["OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS"] = f"[{', '.join(map(str, senders))}]"
    start(env), start(env)

    def led() -> bool:
        try:
            return "channel:telegram" in _leases(isolated_env)
        except sqlite3.Error:  # not created yet
            return False

    _wait(led)
    time.sleep(6)  # each replica has seen the other alive (it looks every 5 s)
    for sender in senders:
        telegram.private(sender, f"burst from {sender}")
    claimed: dict[str, str] = {}  # message id -> the pid of the replica that claimed it

    def every_one_answered() -> bool:
        with connect_db(isolated_env / "memory.db") as conn:
            rows = conn.execute("SELECT id, claimed_by FROM inbox WHERE claimed_by IS NOT NULL")
            claimed.update((str(i), str(by).split("/")[2]) for i, by in rows.fetchall())
        return sum(t.startswith("echo: burst") for t in telegram.texts()) >= len(senders)

    _wait(every_one_answered, timeout=60)
    # Both replicas took a fair part of the burst, though only one of them received it.
    shares = Counter(claimed.values())
    assert len(shares) == 2 and min(shares.values()) >= len(senders) // 4, shares
