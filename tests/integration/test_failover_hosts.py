"""Two replicas on two "hosts" (separate $OMEGA_HOME folders, nothing shared but one
PostgreSQL) and a leader killed with -9 while mail and Telegram updates keep coming (issue 38):
the other replica takes the channels over and resumes exactly where the dead one stopped, from
the cursors in the store, so every message is answered once: none lost (a replica without the
cursor would start at the newest mail and never answer what came during the failover), none
twice."""

from __future__ import annotations

import time
from email.message import EmailMessage
from pathlib import Path

from omega.memory import Store
from tests.fakes.imap_server import FakeImap
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.smtp_server import SmtpSink
from tests.fakes.telegram_server import FakeTelegram
from tests.integration.test_email_channel import (  # its imap and smtp fixtures too
    AUTHSERV,
    PROVEN,
    _configure,
    _mail,
    _text,
    imap,
    smtp,
)
from tests.integration.test_telegram import ANA, Omega, start, telegram, telegram_env
from tests.postgres import PostgresServer

__all__ = ["imap", "smtp", "start", "telegram"]  # the fixtures this module uses
LEASE = 2.0  # [store] lease_seconds: a dead leader's channels move within a few seconds


def _holders(store: Store) -> dict[str, str]:
    return {
        str(r["name"]): str(r["holder"]) for r in store.query("SELECT name, holder FROM leases")
    }


def _pid(holder: str) -> int:
    return int(holder.split("/")[2])  # host/pid namespace/pid/random


def _wait(predicate: object, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _mail_answers(smtp: SmtpSink) -> list[str]:
    """The Message-IDs answered, once per answer (a welcome mail aside)."""
    with smtp.lock:
        mails: list[EmailMessage] = [m for _, m in smtp.mail]
    return [
        str(m.get("In-Reply-To"))
        for m in mails
        if m.get("In-Reply-To") and _text(m).startswith("echo: ")
    ]


def test_a_leader_killed_on_one_host_is_resumed_exactly_on_another(
    postgres_server: PostgresServer,
    telegram: FakeTelegram,
    fake_openai: FakeOpenAI,
    start: type[Omega],
    imap: FakeImap,
    smtp: SmtpSink,
    tmp_path: Path,
) -> None:
    url = postgres_server.new_database()
    store = Store(url)
    homes = [tmp_path / "host-a", tmp_path / "host-b"]
    for home in homes:
        _configure(home, imap, smtp, f'authserv_id = "{AUTHSERV}"\n')

    def env(home: Path) -> dict[str, str]:
        return telegram_env(
            telegram,
            fake_openai,
            OMEGA_HOME=str(home),
            OMEGA_STORE_URL=url,
            OMEGA_STORE__LEASE_SECONDS=str(LEASE),
            OMEGA_PROVIDER__CLASSIFY="false",
        )

    try:
        first = start(env(homes[0]))
        _wait(
            lambda: {"channel:email", "channel:telegram"} <= set(_holders(store)),
            "the first replica to lead both channels",
        )
        # A mailbox met for the first time starts at its newest mail: wait until the leader
        # has read it (its cursor is in the store) before any mail comes.
        _wait(
            lambda: store.state_get("channel:email", "state") is not None,
            "the e-mail leader to read the mailbox",
        )
        second = start(env(homes[1]))

        def send(n: int) -> None:
            imap.deliver(
                _mail("ana@example.org", f"m{n}", f"mail {n}", f"<m{n}@example.org>", PROVEN)
            )
            telegram.private(ANA, f"update {n}")

        for n in range(4):
            send(n)
        _wait(lambda: len(set(_mail_answers(smtp))) == 4, "the first four mails answered")
        _wait(
            lambda: sum(t.startswith("echo: update") for t in telegram.texts(ANA)) == 4,
            "the first four updates answered",
        )
        # Kill the replica leading e-mail, then keep writing while nobody reads the mailbox.
        leader = _pid(_holders(store)["channel:email"])
        dead = next(o for o in (first, second) if o.proc.pid == leader)
        survivor = second if dead is first else first
        dead.kill()
        for n in range(4, 10):
            send(n)
        _wait(lambda: len(set(_mail_answers(smtp))) == 10, "every mail answered", timeout=120)
        _wait(
            lambda: sum(t.startswith("echo: update") for t in telegram.texts(ANA)) == 10,
            "every update answered",
            timeout=120,
        )
        time.sleep(2 * LEASE)  # room for a repeat, were there one
        answered = _mail_answers(smtp)
        assert sorted(answered) == sorted(f"<m{n}@example.org>" for n in range(10))
        updates = [t for t in telegram.texts(ANA) if t.startswith("echo: update")]
        assert sorted(updates) == sorted(f"echo: update {n}" for n in range(10))
        # The survivor leads now, and it never had a file of the dead one's cursor.
        holders = _holders(store)
        assert _pid(holders["channel:email"]) == survivor.proc.pid
        assert store.state_get("channel:email", "state")["last_uid"] >= 10
    finally:
        store.close()
