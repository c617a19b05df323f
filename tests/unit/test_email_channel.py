"""The e-mail channel in-process against the IMAP wire double and a real SMTP server
(aiosmtpd): ids, \\Seen and the saved UID only after acceptance, polling without IDLE, a
sender's thread written down only once admitted, refusals audited; and its mail parsing and
building (with a fuzz test)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.email.channel import EmailChannel
from omega.channels.email.config import EmailConfig
from omega.channels.email.limits import MAX_BYTES, MAX_LINES
from omega.channels.email.mail import Thread, build_mail, parse_mail
from omega.channels.email.state import KEEP_RECENT, KEEP_THREADS, MailState
from omega.channels.email.text import strip_quoted
from omega.channels.health import HealthReporter
from omega.memory.store import Store
from omega.types import IncomingMessage, OutgoingMessage
from tests.fakes.imap_server import FakeImap
from tests.fakes.smtp_server import SmtpSink

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


@pytest.fixture
def imap() -> Iterator[FakeImap]:
    """A mailbox with IDLE."""
    with FakeImap() as server:
        yield server


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    """A real SMTP server on loopback."""
    with SmtpSink() as server:
        yield server


def _config(imap: FakeImap, smtp: SmtpSink | None = None, **extra: object) -> EmailConfig:
    return EmailConfig.model_validate(
        {
            "enabled": True,
            "allowed_users": ["ana@example.org"],
            "imap_host": "127.0.0.1",
            "imap_port": imap.port,
            "imap_security": "plain",
            "imap_user": imap.user,
            "imap_password": imap.password,
            "smtp_host": "127.0.0.1",
            "smtp_port": smtp.port if smtp else 1,
            "smtp_security": "plain",
            "poll_secs": 0.5,
            **extra,
        }
    )


def _mail(body: str, ident: str, sender: str = "Ana <ana@example.org>") -> bytes:
    mail = EmailMessage()
    mail["From"], mail["Subject"], mail["Message-ID"] = sender, "Hello", ident
    mail.set_content(body)
    return bytes(mail)


async def _run_until(
    channel: EmailChannel,
    got: list[IncomingMessage],
    count: int,
    fail: bool = False,
    wait: float = 10.0,
    admit: bool = True,
) -> BaseException | None:
    """Run the channel until `count` messages were submitted, it raised, or `wait` passed.
    With `admit` (and a store) each message is put in the durable inbox, as the gateway does
    for a sender it admits."""

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if fail:
            raise RuntimeError("the inbox could not keep it")
        got.append(message)
        if admit and channel.store is not None:
            channel.store.inbox_put(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    task = asyncio.create_task(channel.run(submit))
    for _ in range(int(wait / 0.05)):
        if len(got) >= count or task.done():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    await channel.stop()
    try:
        await asyncio.wait_for(task, 10)
    except RuntimeError as exc:
        return exc
    return None


def _channel(config: EmailConfig, home: Path, store: Store | None = None) -> EmailChannel:
    state = MailState.load(home / "email.state.json")
    health = HealthReporter(home / "email.health.json", lambda: "")
    return EmailChannel(config, state, health, store)


def _connect_first(config: EmailConfig, home: Path) -> None:
    """A first start on an empty mailbox: the state file now names where reading begins."""
    asyncio.run(_run_until(_channel(config, home), [], 1, wait=0.5))
    assert (home / "email.state.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.no_store
def test_mail_becomes_one_message_with_its_uid_as_id_and_is_seen_after_acceptance(
    imap: FakeImap, tmp_path: Path
) -> None:
    config = _config(imap)
    _connect_first(config, tmp_path)
    imap.deliver(_mail("first", "<a1@example.org>"))
    # The inbox refuses it (the store away): the channel goes on, the mail is not seen and
    # is read again (tests/unit/test_email_store_retry.py).
    error = asyncio.run(_run_until(_channel(config, tmp_path), [], 1, fail=True, wait=1.0))
    assert error is None
    assert imap.seen() == []
    got: list[IncomingMessage] = []
    asyncio.run(_run_until(_channel(config, tmp_path), got, 1))
    assert [(m.id, m.sender_id, m.sender_name) for m in got] == [
        (f"email:{imap.uidvalidity}:1", "ana@example.org", "Ana")
    ]
    assert imap.seen() == [1]
    again: list[IncomingMessage] = []  # a restart does not hand it over again
    asyncio.run(_run_until(_channel(config, tmp_path), again, 1, wait=1.0))
    assert again == []


@pytest.mark.no_store
def test_with_idle_new_mail_is_read_at_once(imap: FakeImap, tmp_path: Path) -> None:
    config = _config(imap, poll_secs=60)  # a poll would come far too late
    got: list[IncomingMessage] = []

    async def scenario() -> None:
        channel = _channel(config, tmp_path)
        running = asyncio.create_task(_run_until(channel, got, 1, wait=5))
        for _ in range(100):  # the channel is idling (or, without IDLE, waiting to poll)
            if "IDLE" in imap.commands or (tmp_path / "email.state.json").exists():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        await asyncio.to_thread(imap.deliver, _mail("now", "<i@example.org>"))
        await running

    asyncio.run(scenario())
    assert [m.text for m in got] == ["Hello\n\nnow"]


@pytest.mark.no_store
def test_a_dropped_connection_is_made_again_and_own_mail_is_ignored(
    imap: FakeImap, tmp_path: Path
) -> None:
    config = _config(imap)
    got: list[IncomingMessage] = []

    async def scenario() -> None:
        channel = _channel(config, tmp_path)
        running = asyncio.create_task(_run_until(channel, got, 1, wait=8))
        while imap.logins < 1:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        await asyncio.to_thread(imap.drop)
        own = _mail("an echo of Omega's own mail", "<o@x>", sender=imap.user)
        await asyncio.to_thread(imap.deliver, own)
        await asyncio.to_thread(imap.deliver, _mail("after the drop", "<d@example.org>"))
        await running

    asyncio.run(scenario())
    assert [m.text for m in got] == ["Hello\n\nafter the drop"]
    assert imap.logins >= 2 and imap.seen() == [1, 2]


@pytest.mark.no_store
def test_without_idle_the_mailbox_is_polled(imap: FakeImap, tmp_path: Path) -> None:
    imap.idle = False
    config = _config(imap)
    got: list[IncomingMessage] = []

    async def scenario() -> None:
        channel = _channel(config, tmp_path)
        running = asyncio.create_task(_run_until(channel, got, 1))
        while not (tmp_path / "email.state.json").exists():
            await asyncio.sleep(0.05)
        await asyncio.to_thread(imap.deliver, _mail("polled", "<p@example.org>"))
        await running

    asyncio.run(scenario())
    assert [m.text for m in got] == ["Hello\n\npolled"]
    assert "IDLE" not in imap.commands and "NOOP" in imap.commands


def test_replies_stay_in_the_thread_after_a_restart_and_carry_photos(
    imap: FakeImap, smtp: SmtpSink, tmp_path: Path
) -> None:
    config = _config(imap, smtp)
    _connect_first(config, tmp_path)
    imap.deliver(_mail("hi", "<t1@example.org>"))
    got: list[IncomingMessage] = []
    store = Store(tmp_path / "memory.db")
    asyncio.run(_run_until(_channel(config, tmp_path, store), got, 1))
    later = _channel(config, tmp_path)  # a fresh process: the thread comes from the state file
    answer = dataclasses.replace(got[0].answer("Here it is.", tag="reply"), photo=PNG)
    asyncio.run(later.send(answer))
    asyncio.run(later.send(OutgoingMessage("email", "bob@example.net", "news")))
    first, second = smtp.wait(2)
    assert first["In-Reply-To"] == "<t1@example.org>" and first["Subject"] == "Re: Hello"
    [photo] = list(first.iter_attachments())
    assert photo.get_content_type() == "image/png" and photo.get_content() == PNG
    assert second["In-Reply-To"] is None and second["Subject"] == config.subject


def test_a_refused_senders_mail_leaves_nothing_in_the_state_file(
    imap: FakeImap, smtp: SmtpSink, tmp_path: Path
) -> None:
    config = _config(imap, smtp)
    store = Store(tmp_path / "memory.db")
    _connect_first(config, tmp_path)
    imap.deliver(_mail("let me in", "<s1@evil.example>", "Mallory <mallory@evil.example>"))
    got: list[IncomingMessage] = []
    channel = _channel(config, tmp_path, store)
    asyncio.run(_run_until(channel, got, 1, admit=False))  # the gateway refused them
    assert [m.sender_id for m in got] == ["mallory@evil.example"]
    saved = (tmp_path / "email.state.json").read_text(encoding="utf-8")
    assert "mallory" not in saved.lower() and "Hello" not in saved and "evil" not in saved
    assert json.loads(saved)["last_uid"] == 1 and imap.seen() == [1]
    # A pairing offer in this run still lands in their thread (held in memory only).
    assert channel.state.thread(got[0].id, "mallory@evil.example").message_id == (
        "<s1@evil.example>"
    )


def test_mail_past_a_cap_or_without_one_plain_from_is_refused_unread_and_audited_once(
    imap: FakeImap, tmp_path: Path
) -> None:
    config = _config(imap)
    store = Store(tmp_path / "memory.db")
    _connect_first(config, tmp_path)
    too_long = _mail("x\n" * (MAX_LINES + 10), "<big@example.org>")
    imap.deliver(too_long)
    imap.deliver(_mail("hi", "<c1@example.org>", "Ana (boss) <ana@example.org>"))
    imap.deliver(_mail("hi", "<c2@example.org>", "Ana (boss) <ana@example.org>"))
    imap.deliver(_mail("hello", "<ok@example.org>"))
    got: list[IncomingMessage] = []
    asyncio.run(_run_until(_channel(config, tmp_path, store), got, 1))
    assert [m.id for m in got] == [f"email:{imap.uidvalidity}:4"]  # only the readable one
    assert imap.seen() == [1, 2, 3, 4]
    rows = [r for r in store.audit_entries() if r["event"] == "denied"]
    details = sorted(str(r["detail"]) for r in rows)
    assert len(details) == 2, details  # the second comment is counted, not audited again
    assert f"email:{imap.uidvalidity}:1 refused unread: " in details[0]
    assert f"more than {MAX_LINES}" in details[0]
    assert "the From field has a comment" in details[1] and "ana@" not in details[1]
    fetches = [c for c in imap.commands if c.startswith("UID FETCH")]
    assert all(f"<0.{MAX_BYTES + 1}>" in c for c in fetches)  # never more than the cap
    again: list[IncomingMessage] = []  # a restart fetches none of them again
    asyncio.run(_run_until(_channel(config, tmp_path, store), again, 1, wait=1.0))
    assert again == [] and len([c for c in imap.commands if c.startswith("UID FETCH")]) == 4


@pytest.mark.no_store
def test_the_sender_is_the_from_with_the_servers_word_on_it_never_reply_to(
    imap: FakeImap, tmp_path: Path
) -> None:
    config = _config(imap, authserv_id="MX.Example.ORG")
    _connect_first(config, tmp_path)
    proven = EmailMessage()
    proven["Authentication-Results"] = (
        "mx.example.org; dkim=pass header.d=example.org; dmarc=pass header.from=example.org"
    )
    proven["From"], proven["Reply-To"] = "Ana <ana@example.org>", "mallory@evil.example"
    proven["To"], proven["Date"] = imap.user, formatdate(usegmt=True)
    proven["Message-ID"] = "<p@example.org>"
    proven.set_content("hi")
    imap.deliver(bytes(proven))
    imap.deliver(_mail("hi", "<f@example.org>"))  # no Authentication-Results at all
    got: list[IncomingMessage] = []
    asyncio.run(_run_until(_channel(config, tmp_path), got, 2))
    assert [(m.sender_id, m.target, m.assurance) for m in got] == [
        ("ana@example.org", "ana@example.org", "mail_server"),
        ("ana@example.org", "ana@example.org", "refuted"),
    ]
    assert got[0].assurance_detail == "dkim=pass header.d=example.org (mx.example.org)"
    assert got[1].assurance_detail == "no Authentication-Results from mx.example.org at the top"


@pytest.mark.no_store
def test_threads_and_senders_written_down_are_bounded(tmp_path: Path) -> None:
    state = MailState(tmp_path / "email.state.json")
    for n in range(KEEP_THREADS + KEEP_RECENT + 20):
        state.remember(f"email:1:{n}", f"p{n}@example.org", Thread(f"<{n}@x>", (), "s"))
        state.admit(f"email:1:{n}")
    assert len(state.recent) == KEEP_RECENT
    assert len(state.threads) == KEEP_THREADS and len(state.latest) == KEEP_THREADS
    state.save()
    again = MailState.load(state.path)
    assert list(again.threads) == list(state.threads) and not again.recent
    last = KEEP_THREADS + KEEP_RECENT + 19
    assert again.thread("", f"p{last}@example.org").message_id == f"<{last}@x>"
    # A file an earlier Omega wrote (every sender's thread): its cursor only is taken.
    legacy = {"uidvalidity": 7, "last_uid": 9, "threads": {"x": {}}, "latest": {"m@e.x": "x"}}
    state.path.write_text(json.dumps(legacy), encoding="utf-8")
    old = MailState.load(state.path)
    assert (old.uidvalidity, old.last_uid, old.threads, old.latest) == (7, 9, {}, {})


@pytest.mark.no_store
def test_parse_strips_quoted_history_reads_html_and_attachments() -> None:
    mail = EmailMessage()
    mail["From"] = '"Ana B." <ANA@Example.ORG>'
    mail["In-Reply-To"] = "<b@x>"
    mail["References"] = "<a@x>"
    mail.set_content("<p>Yes,&nbsp;please</p><script>evil()</script><div>tomorrow</div>", "html")
    mail.add_attachment(PNG, maintype="image", subtype="png", filename="me.png")
    mail.add_attachment(b"%PDF", maintype="application", subtype="pdf", filename="a.pdf")
    parsed = parse_mail(bytes(mail))
    assert (parsed.address, parsed.name) == ("ana@example.org", "Ana B.")
    assert parsed.text == "Yes, please\n\ntomorrow"
    assert parsed.references == ["<a@x>", "<b@x>"]
    assert [(a.kind, a.name, a.data) for a in parsed.attachments] == [
        ("image", "me.png", PNG),
        ("document", "a.pdf", b"%PDF"),
    ]
    assert strip_quoted("ok\n\nOn Tue, Bob wrote:\n> old\n> older") == "ok"
    assert strip_quoted("ok\n-- \nAna, sent from a phone") == "ok"
    assert strip_quoted("> a quote\nmy answer") == "> a quote\nmy answer"


@pytest.mark.no_store
def test_automatic_mail_is_never_answered() -> None:
    mail = EmailMessage()
    mail["From"], mail["Auto-Submitted"] = "ana@example.org", "auto-replied"
    mail.set_content("I am on holiday")
    assert parse_mail(bytes(mail)).auto
    assert not parse_mail(_mail("hi", "<x@y>")).auto


@pytest.mark.no_store
def test_reply_headers_do_not_stack_prefixes() -> None:
    thread = Thread("<c@x>", ("<a@x>", "<b@x>"), "RE: Plans")
    mail = build_mail("omega@example.org", "ana@example.org", "ok", thread, stable_id="m#1")
    assert mail["Subject"] == "RE: Plans" and mail["References"] == "<a@x> <b@x> <c@x>"
    again = build_mail("omega@example.org", "ana@example.org", "ok", thread, stable_id="m#1")
    assert mail["Message-ID"] == again["Message-ID"]  # a re-sent answer is the same mail


@pytest.mark.no_store
def test_the_password_is_secret_and_addresses_are_lower_case(imap: FakeImap) -> None:
    config = _config(imap, allowed_users=["Ana@Example.ORG "])
    assert config.allowed_users == ["ana@example.org"]
    assert imap.password not in repr(config) and imap.password not in str(config.model_dump())


@pytest.mark.no_store
@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_parse_without_error(raw: bytes) -> None:
    parsed = parse_mail(raw)
    assert isinstance(parsed.text, str) and parsed.address == parsed.address.lower()


@pytest.mark.no_store
@settings(max_examples=100, deadline=None)
@given(
    st.text(max_size=200),
    st.sampled_from(["From", "Subject", "Message-ID", "References", "Content-Type", "X"]),
    st.text(max_size=80),
)
def test_mail_like_input_parses_without_error(body: str, header: str, value: str) -> None:
    raw = f"From: a@b.c\r\n{header}: {value}\r\n\r\n{body}".encode("utf-8", "surrogatepass")
    parse_mail(raw)
