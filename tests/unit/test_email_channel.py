"""The e-mail channel in-process against the IMAP wire double and a real SMTP server
(aiosmtpd): ids, \\Seen and the saved UID only after acceptance, polling without IDLE; and its
mail parsing and building (with a fuzz test)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.email.channel import EmailChannel
from omega.channels.email.config import EmailConfig
from omega.channels.email.mail import Thread, build_mail, parse_mail, strip_quoted
from omega.channels.email.state import MailState
from omega.channels.health import HealthReporter
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
) -> BaseException | None:
    """Run the channel until `count` messages were submitted, it raised, or `wait` passed."""

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        if fail:
            raise RuntimeError("the inbox could not keep it")
        got.append(message)
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


def _channel(config: EmailConfig, home: Path) -> EmailChannel:
    state = MailState.load(home / "email.state.json")
    return EmailChannel(config, state, HealthReporter(home / "email.health.json", lambda: ""))


def _connect_first(config: EmailConfig, home: Path) -> None:
    """A first start on an empty mailbox: the state file now names where reading begins."""
    asyncio.run(_run_until(_channel(config, home), [], 1, wait=0.5))
    assert (home / "email.state.json").stat().st_mode & 0o777 == 0o600


def test_mail_becomes_one_message_with_its_uid_as_id_and_is_seen_after_acceptance(
    imap: FakeImap, tmp_path: Path
) -> None:
    config = _config(imap)
    _connect_first(config, tmp_path)
    imap.deliver(_mail("first", "<a1@example.org>"))
    # The inbox refuses it (a crash before it was durable): not seen, read again later.
    error = asyncio.run(_run_until(_channel(config, tmp_path), [], 1, fail=True))
    assert isinstance(error, RuntimeError)
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
    asyncio.run(_run_until(_channel(config, tmp_path), got, 1))
    later = _channel(config, tmp_path)  # a fresh process: the thread comes from the state file
    answer = dataclasses.replace(got[0].answer("Here it is.", tag="reply"), photo=PNG)
    asyncio.run(later.send(answer))
    asyncio.run(later.send(OutgoingMessage("email", "bob@example.net", "news")))
    first, second = smtp.wait(2)
    assert first["In-Reply-To"] == "<t1@example.org>" and first["Subject"] == "Re: Hello"
    [photo] = list(first.iter_attachments())
    assert photo.get_content_type() == "image/png" and photo.get_content() == PNG
    assert second["In-Reply-To"] is None and second["Subject"] == config.subject


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


def test_automatic_mail_is_never_answered() -> None:
    mail = EmailMessage()
    mail["From"], mail["Auto-Submitted"] = "ana@example.org", "auto-replied"
    mail.set_content("I am on holiday")
    assert parse_mail(bytes(mail)).auto
    assert not parse_mail(_mail("hi", "<x@y>")).auto


def test_reply_headers_do_not_stack_prefixes() -> None:
    thread = Thread("<c@x>", ("<a@x>", "<b@x>"), "RE: Plans")
    mail = build_mail("omega@example.org", "ana@example.org", "ok", thread, stable_id="m#1")
    assert mail["Subject"] == "RE: Plans" and mail["References"] == "<a@x> <b@x> <c@x>"
    again = build_mail("omega@example.org", "ana@example.org", "ok", thread, stable_id="m#1")
    assert mail["Message-ID"] == again["Message-ID"]  # a re-sent answer is the same mail


def test_the_password_is_secret_and_addresses_are_lower_case(imap: FakeImap) -> None:
    config = _config(imap, allowed_users=["Ana@Example.ORG "])
    assert config.allowed_users == ["ana@example.org"]
    assert imap.password not in repr(config) and imap.password not in str(config.model_dump())


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_parse_without_error(raw: bytes) -> None:
    parsed = parse_mail(raw)
    assert isinstance(parsed.text, str) and parsed.address == parsed.address.lower()


@settings(max_examples=100, deadline=None)
@given(
    st.text(max_size=200),
    st.sampled_from(["From", "Subject", "Message-ID", "References", "Content-Type", "X"]),
    st.text(max_size=80),
)
def test_mail_like_input_parses_without_error(body: str, header: str, value: str) -> None:
    raw = f"From: a@b.c\r\n{header}: {value}\r\n\r\n{body}".encode("utf-8", "surrogatepass")
    parse_mail(raw)
