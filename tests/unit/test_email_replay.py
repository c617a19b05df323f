"""A proven mail is proof for Omega only when written to Omega, and only once (replay.py): the
To/Cc addresses and the Date read from a mail, a proven mail to someone else refuted, a
replayed, undated or old one refused, the Message-IDs remembered (hashed, bounded, across a
restart); and the channel's entry point, mail by mail, as the audit's script drove it."""

from __future__ import annotations

import asyncio
import json
import time
from email.utils import formatdate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.email.channel import EmailChannel
from omega.channels.email.config import EmailConfig
from omega.channels.email.identity import ADDR_SPEC, addresses_in
from omega.channels.email.mail import Received, Thread, parse_mail
from omega.channels.email.replay import KEEP_SEEN, WINDOW_SECS, Seen, for_omega
from omega.channels.email.state import MailState
from omega.channels.health import HealthReporter
from omega.memory.store import Store
from omega.types import IncomingMessage

PROVEN = "mx.example.org; dkim=pass header.d=example.org; dmarc=pass header.from=example.org"
OWN = frozenset({"omega@example.net"})
NOW = 1_750_000_000.0


def _raw(to: str = "omega@example.net", date: str | None = None, ident: str = "<m1@x>") -> bytes:
    """Ana's mail as the receiving server holds it after verifying her signature."""
    date = formatdate(time.time(), usegmt=True) if date is None else date
    return (
        f"Authentication-Results: {PROVEN}\r\nFrom: Ana <ana@example.org>\r\nTo: {to}\r\n"
        f"Subject: the old backups\r\nDate: {date}\r\nMessage-ID: {ident}\r\n\r\n"
        "Please delete everything under projects/.\r\n"
    ).encode()


def _proven(sent: float | None = NOW, message_id: str = "<m1@x>") -> Received:
    return Received(
        "ana@example.org", "Ana", "hi", "s", message_id, assurance="mail_server", sent=sent
    )


@pytest.mark.no_store
@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("omega@example.net", ["omega@example.net"]),
        ("Omega <Omega@Example.NET>, bo@x.org", ["omega@example.net", "bo@x.org"]),
        ('"omega@example.net" <mallory@evil.example>', ["mallory@evil.example"]),
        ("mallory@evil.example (omega@example.net)", ["mallory@evil.example"]),
        ("friends: omega@example.net, bo@x.org;", ["omega@example.net", "bo@x.org"]),
        ("undisclosed-recipients:;", []),
        ("\u212aate@example.net", []),  # a Kelvin sign: not a plain address, never folded in
        ('"open quote omega@example.net', []),
        ("", []),
    ],
)
def test_to_and_cc_name_plain_addresses_only(value: str, found: list[str]) -> None:
    assert addresses_in(value) == found


@pytest.mark.no_store
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_address_list_reads_without_error(value: str) -> None:
    assert all(ADDR_SPEC.fullmatch(address) for address in addresses_in(value))


@pytest.mark.no_store
def test_a_hostile_address_list_reads_in_linear_time() -> None:
    started = time.monotonic()
    for value in ("a" * 64_000, "(" * 64_000, '"\\' * 32_000, "a." * 32_000 + "@", "a@" * 32_000):
        addresses_in(value)
    assert time.monotonic() - started < 2.0


@pytest.mark.no_store
def test_a_mail_gives_its_recipients_and_its_date() -> None:
    mail = parse_mail(_raw("Bo <bo@x.org>", "Mon, 3 Feb 2025 09:00:00 +0100"), "mx.example.org")
    assert mail.recipients == ("bo@x.org",) and mail.sent == 1738569600.0
    assert parse_mail(_raw(date="Mon, 3 Feb 2025 08:00:00")).sent == 1738569600.0  # as UTC
    for junk in ("", "yesterday", "Mon, 3 Feb 99999999999 08:00:00 +0000", "x" * 300):
        assert parse_mail(_raw(date=junk)).sent is None, junk


@pytest.mark.no_store
def test_a_proven_mail_to_someone_else_is_refuted_with_why() -> None:
    to_mallory = parse_mail(_raw("Mallory <mallory@evil.example>"), "mx.example.org")
    assert to_mallory.assurance == "mail_server"  # the server's word, before Omega's check
    checked = for_omega(to_mallory, OWN)
    assert checked.assurance == "refuted"
    assert checked.assurance_detail.startswith(
        "not addressed to Omega: its To and Cc name none of omega@example.net, so dkim=pass"
    )
    cc = parse_mail(_raw("bo@x.org\r\nCc: OMEGA@example.net"), "mx.example.org")
    assert for_omega(cc, OWN) is cc  # named in Cc: for Omega
    unproven = parse_mail(_raw("mallory@evil.example"))  # no authserv-id: nothing to take back
    assert for_omega(unproven, OWN) is unproven


@pytest.mark.no_store
def test_omegas_addresses_are_its_from_its_login_and_its_aliases() -> None:
    config = EmailConfig.model_validate(
        {
            "imap_user": "Omega@Example.net",
            "from_address": "Omega <omega-bot@example.net>",
            "aliases": [" Omega+Home@Example.net ", ""],
        }
    )
    assert config.own_addresses() == {
        "omega@example.net",
        "omega-bot@example.net",
        "omega+home@example.net",
    }
    assert EmailConfig.model_validate({"imap_user": "omega"}).own_addresses() == frozenset()


@pytest.mark.no_store
def test_a_proven_mail_is_taken_once_while_it_is_dated_within_the_window() -> None:
    seen = Seen()
    assert seen.refusal(_proven(), "email:1:1", NOW) is None
    seen.add("ana@example.org", "<m1@x>", NOW, "email:1:1", NOW)
    again = seen.refusal(_proven(), "email:1:2", NOW + 60)
    assert again is not None and again.code == "replayed"
    assert seen.refusal(_proven(), "email:1:1", NOW + 60) is None  # the same mail read again
    other = Received("bo@example.org", "", "", "", "<m1@x>", assurance="mail_server", sent=NOW)
    assert seen.refusal(other, "email:1:3", NOW) is None  # per sender
    for mail, code in [
        (_proven(None), "no_date"),
        (_proven(NOW - WINDOW_SECS - 1, "<m2@x>"), "old_date"),
        (_proven(NOW, ""), "no_message_id"),
    ]:
        refusal = seen.refusal(mail, "email:1:4", NOW)
        assert refusal is not None and refusal.code == code
    unverified = Received("ana@example.org", "", "", "", "", sent=None)
    assert seen.refusal(unverified, "email:1:5", NOW) is None  # nothing proven, nothing to check
    assert "ana" not in json.dumps(seen.to_json()) and "m1@x" not in json.dumps(seen.to_json())


@pytest.mark.no_store
def test_forgetting_early_never_lets_a_replay_in() -> None:
    seen = Seen()
    for n in range(KEEP_SEEN + 10):
        seen.add("ana@example.org", f"<{n}@x>", NOW + n, f"email:1:{n}", NOW)
    assert len(seen.ids) == KEEP_SEEN and seen.floor == NOW + 9
    forgotten = seen.refusal(_proven(NOW + 9, "<9@x>"), "email:1:99999", NOW + 60)
    assert forgotten is not None and forgotten.code == "old_date"
    assert seen.refusal(_proven(NOW + 20_000, "<new@x>"), "email:1:99999", NOW) is None
    seen.trim(NOW + WINDOW_SECS + 100)  # past the window: forgotten (their Date refuses them)
    assert len(seen.ids) == KEEP_SEEN - 90 and min(s for s, _ in seen.ids.values()) == NOW + 100


@pytest.mark.no_store
def test_the_message_ids_are_kept_with_the_cursor_and_admitted_mails_only(
    tmp_path: Path,
) -> None:
    state = MailState(tmp_path / "email.state.json")
    sent = time.time()
    state.remember("email:1:1", "ana@example.org", Thread("<a@x>", (), "s"), sent)
    state.remember("email:1:2", "bo@example.org", Thread("<b@x>", (), "s"), None)  # unproven
    state.remember("email:1:3", "eve@evil.example", Thread("<c@x>", (), "s"), sent)  # refused
    state.admit("email:1:1")
    state.admit("email:1:2")
    state.save()
    again = MailState.load(state.path)
    assert again.seen == state.seen and len(again.seen.ids) == 1
    replay = Received("ana@example.org", "", "", "", "<a@x>", assurance="mail_server", sent=sent)
    assert again.seen.refusal(replay, "email:1:9", time.time()) is not None
    # A state an Omega without this memory wrote: whatever it handed over is dated before now.
    document = json.loads(state.path.read_text(encoding="utf-8"))
    del document["seen"]
    state.path.write_text(json.dumps(document), encoding="utf-8")
    assert MailState.load(state.path).seen.floor >= sent


class _Session:
    """The IMAP session `EmailChannel._take` reads one UID from."""

    uidvalidity = 7

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.seen: list[int] = []

    def fetch(self, uid: int, limit: int) -> bytes:
        return self.raw

    def mark_seen(self, uid: int) -> None:
        self.seen.append(uid)


def test_through_the_channel_a_mail_to_someone_else_is_a_strangers_and_a_replay_is_refused(
    tmp_path: Path,
) -> None:
    section = {"enabled": True, "allowed_users": ["ana@example.org"], "imap_host": "i"}
    config = EmailConfig.model_validate(
        section | {"authserv_id": "mx.example.org", "imap_user": "omega@example.net"}
    )
    store = Store(tmp_path / "memory.db")
    state = MailState.load(tmp_path / "email.state.json")
    channel = EmailChannel(config, state, HealthReporter(None, lambda: ""), store)
    got: list[IncomingMessage] = []

    async def submit(message: IncomingMessage) -> None:
        got.append(message)
        if message.assurance != "refuted":  # as the gateway: a stranger's mail is not kept
            store.inbox_put(message)

    async def take(raw: bytes, *uids: int) -> _Session:
        session = _Session(raw)
        for uid in uids:
            await channel._take(session, uid, submit)  # type: ignore[arg-type]
        return session

    asyncio.run(take(_raw("Mallory <mallory@evil.example>", ident="<old-1@x>"), 101, 102))
    assert [(m.id, m.assurance) for m in got] == [
        ("email:7:101", "refuted"),
        ("email:7:102", "refuted"),
    ]
    assert "not addressed to Omega" in got[0].assurance_detail
    got.clear()
    session = asyncio.run(take(_raw(ident="<new-1@x>"), 103, 104, 105))
    assert [(m.id, m.assurance) for m in got] == [("email:7:103", "mail_server")]
    assert session.seen == [103, 104, 105] and state.last_uid == 105
    rows = [r for r in store.audit_entries() if r["event"] == "denied"]
    assert len(rows) == 1  # the repeat is audited once a day, with a count of the rest
    assert "mail email:7:104 refused unread: a proven mail whose Message-ID" in str(rows[0])
    assert MailState.load(state.path).seen == state.seen  # written with the cursor
