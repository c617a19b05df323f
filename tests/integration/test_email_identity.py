"""Who a mail is from, through `omega start` with the IMAP double and a real SMTP server: every
spoof of the owner gets no owner rights and its audit row says why; the owner proven by the
receiving server's topmost Authentication-Results gets them; without an authserv-id owners
are refused and allowed people talk without tools; a huge stranger's mail holds nothing up and
is read once; a refused stranger leaves nothing behind."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from omega.channels.email.limits import MAX_BYTES, MAX_LINES
from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.imap_server import FakeImap
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.smtp_server import SmtpSink
from tests.integration.test_email_channel import (  # its imap and smtp fixtures too
    AUTHSERV,
    PROVEN,
    _answers,
    _configure,
    _mail,
    _start,
    imap,
    smtp,
)

OWNERS = (
    '[auth]\nowners = ["email:ana@example.org", "email:bo@example.org", "email:kate@example.org"]\n'
)
FAILED = f"{AUTHSERV}; dkim=fail; spf=fail; dmarc=fail"
PENDING = "Nobody is waiting to be approved."

__all__ = ["imap", "smtp"]  # the fixtures this module uses


def _audit_rows(home: Path) -> list[tuple[str, str]]:
    with connect_db(home / "memory.db") as conn:
        rows = conn.execute(
            "SELECT sender_id, detail FROM audit_log WHERE event = 'denied' ORDER BY id"
        ).fetchall()
    return [(str(row[0]), str(row[1])) for row in rows]


def _wait_for_audit(home: Path, found: Callable[[str, str], bool]) -> tuple[str, str]:
    """The first denial row `found` accepts, once it is there."""
    deadline = time.monotonic() + 30
    rows: list[tuple[str, str]] = []
    while time.monotonic() < deadline:
        rows = _audit_rows(home)
        for sender, detail in rows:
            if found(sender, detail):
                return sender, detail
        time.sleep(0.05)
    raise AssertionError(f"no such denial in {rows}")


def test_every_spoof_of_the_owner_is_refused_with_its_reason_and_the_proven_owner_is_served(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    _configure(
        isolated_env,
        imap,
        smtp,
        f'authserv_id = "{AUTHSERV}"\n{OWNERS}',
    )
    omega = _start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    evil = f"{AUTHSERV}; dkim=pass header.d=evil.example; dmarc=pass header.from=evil.example"
    spoofs: list[tuple[bytes, Callable[[str, str], bool]]] = [
        (  # (a) a forged From, which the server's checks failed
            _mail("Ana <ana@example.org>", "", "/pending", "<a@evil.example>", FAILED),
            lambda s, d: (
                s == "ana@example.org"
                and "failed verification (dmarc=fail dkim=fail (mx.example.org))" in d
            ),
        ),
        (  # (b) mallory's own proven mail, Reply-To the owner: mallory is speaking
            _mail(
                "mallory@evil.example",
                "s",
                "/pending",
                "<b@evil.example>",
                evil,
                Reply_To="ana@example.org",
            ),
            lambda s, d: s == "mallory@evil.example" and "not in allowed_users" in d,
        ),
        (  # (c) Reply-To naming the owner among others
            _mail(
                "eve@evil.example",
                "s",
                "/pending",
                "<c@evil.example>",
                evil,
                Reply_To="ana@example.org, mallory@evil.example",
            ),
            lambda s, d: s == "eve@evil.example" and "not in allowed_users" in d,
        ),
        (  # (d) the owner's address and a comment before mallory's
            _mail(
                "ana@example.org (x) <mallory@evil.example>",
                "s",
                "/pending",
                "<d@evil.example>",
                PROVEN,
            ),
            lambda s, d: s == "" and "the From field has a comment" in d,
        ),
        (  # (e) the owner's address glued to mallory's
            _mail(
                "<ana@example.org>mallory@evil.example",
                "s",
                "/pending",
                "<e@evil.example>",
                PROVEN,
            ),
            lambda s, d: s == "" and "the From field has text after its address" in d,
        ),
        (  # (f) sent by someone else on the owner's behalf
            _mail(
                "ana@example.org",
                "s",
                "/pending",
                "<f@evil.example>",
                PROVEN,
                Sender="mallory@evil.example",
            ),
            lambda s, d: s == "" and "the Sender field names someone other than From" in d,
        ),
        (  # (g) the sender's own "pass" below the server's topmost "fail"
            _mail(
                "bo@example.org",
                "s",
                "/pending",
                "<g@evil.example>",
                f"{AUTHSERV}; dmarc=fail header.from=example.org",
                f"{AUTHSERV}; dmarc=pass header.from=example.org",
            ),
            lambda s, d: s == "bo@example.org" and "(dmarc=fail dkim=none (mx.example.org))" in d,
        ),
        (  # a Kelvin sign: "\u212aate@" folds to the owner kate@
            _mail("kate@example.org", "", "/pending", "<k@evil.example>", PROVEN).replace(
                b"From: kate@", "From: \u212aate@".encode()
            ),
            lambda s, d: s == "" and "not plain ASCII" in d,
        ),
    ]
    try:
        for raw, _ in spoofs:
            imap.deliver(raw)
        for _, found in spoofs:
            sender, detail = _wait_for_audit(isolated_env, found)
            if not sender:  # refused unread: the row quotes nothing of the mail
                assert "ana@" not in detail and "mallory" not in detail, detail
        # The owner, proven by the topmost field of the configured server: served as owner.
        imap.deliver(_mail("ana@example.org", "", "/pending", "<ok@example.org>", PROVEN))
        [answer] = _answers(smtp, "<ok@example.org>", PENDING)
        assert answer["To"] == "ana@example.org"
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    with smtp.lock:
        sent = [(m["To"], m.get("In-Reply-To")) for _, m in smtp.mail]
    # No spoof got any answer: only the owner's mail did (a welcome, then the list).
    assert set(sent) == {("ana@example.org", "<ok@example.org>")}
    assert not any("/pending" in json.dumps(r.body) for r in fake_openai.requests)


def test_without_an_authserv_id_owners_are_refused_and_allowed_people_talk_without_tools(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    _configure(
        isolated_env,
        imap,
        smtp,
        '[auth]\nowners = ["email:ana@example.org"]\n',
        allowed='["ana@example.org", "bob@example.org"]',
    )
    fake_openai.script = [Step(text="It is noon.", match="what time is it")]
    omega = _start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    try:
        imap.deliver(_mail("ana@example.org", "", "/pending", "<o@example.org>", PROVEN))
        _, detail = _wait_for_audit(isolated_env, lambda s, d: s == "ana@example.org")
        assert "names an owner but is not verified (no authserv_id configured)" in detail
        imap.deliver(
            _mail(
                "Bob <bob@example.org>",
                "Time",
                "what time is it?",
                "<t@example.org>",
                Reply_To="mallory@evil.example",
            )
        )
        [answer] = _answers(smtp, "<t@example.org>", "It is noon.")
        assert answer["To"] == "bob@example.org"  # the From, never Reply-To
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    asked = [r for r in fake_openai.requests if "what time is it" in r.last_user_text]
    assert asked and not any(r.body.get("tools") for r in asked)  # a guest: no tools
    with smtp.lock:
        assert {m["To"] for _, m in smtp.mail} == {"bob@example.org"}  # a welcome, the answer


def test_a_huge_strangers_mail_holds_nothing_up_and_is_read_once(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    _configure(isolated_env, imap, smtp, f'authserv_id = "{AUTHSERV}"\n')
    env = openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600")
    omega = _start(env, isolated_env)
    big = "\n".join(["hello"] + ["> quoted line"] * 60_000)
    over = "x\n" * (MAX_LINES + 1)
    try:
        # How long a terminal reply takes on this machine now, with no mail being read (the
        # suites run side by side on 2 cores): the bound is against that, not a fixed time.
        started = time.monotonic()
        omega.say("first, are you there?")
        omega.wait_for("reply", timeout=30)
        usual = time.monotonic() - started
        imap.deliver(_mail("mallory@evil.example", "big", big, "<big@evil.example>"))
        imap.deliver(_mail("mallory@evil.example", "over", over, "<over@evil.example>"))
        deadline = time.monotonic() + 30
        while not any(c.startswith("UID FETCH 1 ") for c in imap.commands):
            assert time.monotonic() < deadline, imap.commands
            time.sleep(0.01)
        asked = time.monotonic()
        omega.say("are you there?")  # the terminal, while the mail is read
        omega.wait_for("reply", count=2, timeout=30)
        delay = time.monotonic() - asked - usual
        assert delay < 1.0, f"the terminal waited {delay:.1f} s for the mail"
        _wait_for_audit(isolated_env, lambda s, d: s == "mallory@evil.example")
        _wait_for_audit(isolated_env, lambda s, d: f"more than {MAX_LINES}" in d)
        while imap.seen() != [1, 2]:
            assert time.monotonic() < deadline, imap.seen()
            time.sleep(0.05)
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    state = json.loads((isolated_env / "email.state.json").read_text(encoding="utf-8"))
    assert state["last_uid"] == 2
    omega = _start(env, isolated_env)  # a restart reads neither again
    try:
        time.sleep(1.0)
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    fetches = [c.split()[2] for c in imap.commands if c.startswith("UID FETCH")]
    assert fetches == ["1", "2"]
    assert all(f"<0.{MAX_BYTES + 1}>" in c for c in imap.commands if c.startswith("UID FETCH"))
    assert len(_audit_rows(isolated_env)) == 2  # one denial each, nothing twice


@pytest.mark.sqlite_only
def test_a_refused_stranger_leaves_nothing_behind(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    _configure(isolated_env, imap, smtp, f'authserv_id = "{AUTHSERV}"\n')
    fake_openai.script = [Step(text="Hi Ana.", match="hello omega")]
    omega = _start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    subject = "Zanzibar quarterly invoice"
    try:
        imap.deliver(
            _mail("Mallory <mallory@evil.example>", subject, "pay me", "<z@evil.example>", PROVEN)
        )
        _wait_for_audit(isolated_env, lambda s, d: s == "mallory@evil.example")
        imap.deliver(_mail("ana@example.org", "Hi", "hello omega", "<h@example.org>", PROVEN))
        _answers(smtp, "<h@example.org>", "Hi Ana.")
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    state = (isolated_env / "email.state.json").read_text(encoding="utf-8")
    assert "ana@example.org" in state  # the admitted sender's thread is kept
    assert "mallory" not in state and "evil" not in state and "Zanzibar" not in state
    for path in isolated_env.iterdir():
        if path.is_file():
            data = path.read_bytes()
            assert b"Zanzibar" not in data and b"pay me" not in data, path
    # Their address is only in the denial itself: the audit row and its rate-limit record.
    with connect_db(isolated_env / "memory.db") as conn:
        tables = [
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        holding = set()
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                if any("mallory" in str(value) for value in row):
                    holding.add(table)
    assert holding <= {"audit_log", "denials"}, holding
