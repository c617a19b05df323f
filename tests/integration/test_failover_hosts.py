"""Two replicas on two "hosts" (separate $OMEGA_HOME folders, nothing shared but one
PostgreSQL) and a leader killed with -9 while mail, Matrix events (a real Synapse) and Telegram
updates keep coming (issue 38): the other replica takes the channels over and resumes exactly
where the dead one stopped, from the cursors in the store (the mailbox's last UID, the Matrix
sync token and device), so every message is answered once: none lost (a replica without the
cursor would start at the newest mail, or take its first sync as history, and never answer what
came during the failover), none twice."""

from __future__ import annotations

import time
from email.message import EmailMessage
from pathlib import Path

import pytest

from omega.memory import Store
from tests.fakes.imap_server import FakeImap
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.smtp_server import SmtpSink
from tests.fakes.synapse import Synapse
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
from tests.integration.test_matrix_channel import Cast, cast, room_with_omega
from tests.integration.test_telegram import ANA, Omega, start, telegram, telegram_env
from tests.postgres import PostgresServer

__all__ = ["imap", "smtp", "start", "telegram"]  # the fixtures this module uses
# Three channels, two replicas and Synapse: tens of seconds.
pytestmark = pytest.mark.slow
LEASE = 2.0  # [store] lease_seconds: a dead leader's channels move within a few seconds
CHANNELS = {"channel:email", "channel:matrix", "channel:telegram"}


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


def _with_matrix(home: Path, synapse: Synapse, people: Cast) -> None:
    """Add the Matrix channel to the host's config.toml: Omega logs in with its password."""
    with (home / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f"""
[channel.matrix]
enabled = true
homeserver = "{synapse.url}"
user_id = "{people.omega.user_id}"
password = "{people.omega.password}"
allowed_users = ["{people.ana.user_id}"]
"""
        )


def _next_batch(store: Store) -> str:
    """The Matrix sync token in the store ("" before the first sync)."""
    return str((store.state_get("channel:matrix", "state") or {}).get("next_batch") or "")


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
    synapse: Synapse,
    tmp_path: Path,
) -> None:
    url = postgres_server.new_database()
    store = Store(url)
    people = cast(synapse)
    homes = [tmp_path / "host-a", tmp_path / "host-b"]
    for home in homes:
        _configure(home, imap, smtp, f'authserv_id = "{AUTHSERV}"\n')
        _with_matrix(home, synapse, people)

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
        _wait(lambda: CHANNELS.issubset(_holders(store)), "the first replica to lead every channel")
        # A mailbox met for the first time starts at its newest mail, and a Matrix account's
        # first sync is history: wait until the leader has read both (their cursors are in the
        # store) before anything comes.
        _wait(
            lambda: store.state_get("channel:email", "state") is not None,
            "the e-mail leader to read the mailbox",
        )
        _wait(lambda: _next_batch(store), "the Matrix leader's first sync")
        room = room_with_omega(people.ana, people.omega)  # a direct chat
        second = start(env(homes[1]))

        def send(n: int) -> None:
            imap.deliver(
                _mail("ana@example.org", f"m{n}", f"mail {n}", f"<m{n}@example.org>", PROVEN)
            )
            people.ana.say(room, f"event {n}")
            telegram.private(ANA, f"update {n}")

        def events() -> list[str]:
            said = people.ana.texts(room, people.omega.user_id)
            return [text for text in said if text.startswith("echo: event")]

        for n in range(4):
            send(n)
        _wait(lambda: len(set(_mail_answers(smtp))) == 4, "the first four mails answered")
        _wait(lambda: len(set(events())) == 4, "the first four Matrix events answered")
        _wait(
            lambda: sum(t.startswith("echo: update") for t in telegram.texts(ANA)) == 4,
            "the first four updates answered",
        )
        # Kill the replica leading every channel, then keep writing while nobody reads.
        holders = _holders(store)
        leader = _pid(holders["channel:email"])
        assert {_pid(holders[name]) for name in CHANNELS} == {leader}
        dead = next(o for o in (first, second) if o.proc.pid == leader)
        survivor = second if dead is first else first
        token_at_the_kill = _next_batch(store)
        dead.kill()
        for n in range(4, 10):
            send(n)
        _wait(lambda: len(set(_mail_answers(smtp))) == 10, "every mail answered", timeout=120)
        _wait(lambda: len(set(events())) == 10, "every Matrix event answered", timeout=120)
        _wait(
            lambda: sum(t.startswith("echo: update") for t in telegram.texts(ANA)) == 10,
            "every update answered",
            timeout=120,
        )
        time.sleep(2 * LEASE)  # room for a repeat, were there one
        answered = _mail_answers(smtp)
        assert sorted(answered) == sorted(f"<m{n}@example.org>" for n in range(10))
        assert sorted(events()) == sorted(f"echo: event {n}" for n in range(10))
        updates = [t for t in telegram.texts(ANA) if t.startswith("echo: update")]
        assert sorted(updates) == sorted(f"echo: update {n}" for n in range(10))
        # The survivor leads now, and it never had a file of the dead one's cursors.
        holders = _holders(store)
        assert {_pid(holders[name]) for name in CHANNELS} == {survivor.proc.pid}
        assert store.state_get("channel:email", "state")["last_uid"] >= 10
        assert _next_batch(store) != token_at_the_kill
    finally:
        store.close()
