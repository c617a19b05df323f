"""A field a DKIM signature may cover, written twice, makes a mail unreadable (mail.py): a
verifier checks the bottom-most instance of a signed field, so one added above a replayed,
signed mail keeps `dkim=pass` while the topmost, the addition, is the one a reader sees."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from omega.channels.email.mail import SINGLE_FIELDS, parse_mail

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

PROVEN = "mx.example.org; dkim=pass header.d=example.org; dmarc=pass header.from=example.org"
VALUES = {
    "Subject": "lunch on friday?",
    "Message-ID": "<orig@example.org>",
    "In-Reply-To": "<m1@example.org>",
    "References": "<m0@example.org> <m1@example.org>",
    "To": "omega@example.org",
    "Cc": "bo@example.org",
    "Date": "Mon, 1 Jan 2024 10:00:00 +0000",
    "Reply-To": "ana@example.org",
    "Sender": "ana@example.org",
}
ADDED = {  # what a replayer writes above the signed field
    "Subject": "/pending please",
    "Message-ID": "<fresh@example.org>",
    "In-Reply-To": "<other@example.org>",
    "References": "<other@example.org>",
    "To": "omega@example.org",
    "Cc": "mallory@evil.example",
    "Date": "Tue, 2 Jan 2024 10:00:00 +0000",
    "Reply-To": "mallory@evil.example",
    "Sender": "ana@example.org",  # the same address: still two fields
}


def _signed(*, added: str = "", spelled: str = "") -> bytes:
    """Ana's signed mail, as the receiving server holds it, with `added` written once more
    above it (spelled `spelled`, when given)."""
    lines = [f"Authentication-Results: {PROVEN}"]
    if added:
        lines.append(f"{spelled or added}: {ADDED[added]}")
    lines.append("DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s1; h=from:subject; b=x")
    lines.append("From: Ana <ana@example.org>")
    lines += [f"{name}: {value}" for name, value in VALUES.items()]
    return ("\r\n".join(lines) + "\r\n\r\nLunch on friday?\r\n").encode()


def test_every_field_written_once_is_read() -> None:
    assert tuple(VALUES) == SINGLE_FIELDS
    parsed = parse_mail(_signed(), "mx.example.org")
    assert parsed.refusal is None
    assert (parsed.address, parsed.assurance) == ("ana@example.org", "mail_server")
    assert parsed.subject == "lunch on friday?" and parsed.message_id == "<orig@example.org>"
    assert parsed.references == ["<m0@example.org>", "<m1@example.org>"]


@pytest.mark.parametrize("name", SINGLE_FIELDS)
def test_each_field_written_twice_refuses_the_mail_unread(name: str) -> None:
    parsed = parse_mail(_signed(added=name), "mx.example.org")
    assert parsed.refusal is not None, name
    assert f"more than one {name} field" in parsed.refusal.detail
    # Refused unread: nothing of the mail is handed on, its sender included.
    assert (parsed.address, parsed.subject, parsed.text, parsed.message_id) == ("", "", "", "")
    assert parsed.references == [] and parsed.assurance == "unverified"


@pytest.mark.parametrize("spelled", ["subject", "SUBJECT", "sUbJeCt"])
def test_a_field_is_the_same_field_in_any_case(spelled: str) -> None:
    parsed = parse_mail(_signed(added="Subject", spelled=spelled), "mx.example.org")
    assert parsed.refusal is not None
    assert parsed.refusal.detail == "the mail has more than one Subject field"


def test_fields_of_an_attached_mail_are_its_own() -> None:
    """A forwarded mail (message/rfc822) has a Subject and a Message-ID of its own: they are
    not the outer mail's second ones."""
    inner = EmailMessage()
    inner["From"], inner["Subject"] = "bo@example.org", "the old thread"
    inner["Message-ID"] = "<inner@example.org>"
    inner.set_content("old words")
    outer = EmailMessage()
    outer["From"], outer["Subject"] = "ana@example.org", "Fwd: the old thread"
    outer["Message-ID"] = "<outer@example.org>"
    outer.set_content("see below")
    outer.add_attachment(inner)
    parsed = parse_mail(bytes(outer))
    assert parsed.refusal is None
    assert (parsed.subject, parsed.message_id) == ("Fwd: the old thread", "<outer@example.org>")
