"""A `dmarc=pass` proves a mail's From only for the domain its `header.from` names (audit
finding): a pass that names no domain, or another one, proves nothing, read through parse_mail
as the channel reads a mail."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from omega.channels.email.mail import parse_mail

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

AUTHSERV = "mx.example.org"


def _raw(sender: str, result: str) -> bytes:
    mail = EmailMessage()
    mail["Authentication-Results"] = result
    mail["From"] = sender
    mail["To"] = "omega@example.org"
    mail["Subject"] = "hi"
    mail["Message-ID"] = "<1@example.org>"
    mail.set_content("/status")
    return bytes(mail)


@pytest.mark.parametrize(
    ("result", "detail"),
    [
        (
            f"{AUTHSERV}; dmarc=pass",
            f"dmarc=pass (without header.from) dkim=none ({AUTHSERV})",
        ),
        (
            f"{AUTHSERV}; spf=pass smtp.mailfrom=example.org; dmarc=pass (p=REJECT)",
            f"dmarc=pass (without header.from) dkim=none ({AUTHSERV})",
        ),
        (
            f'{AUTHSERV}; dmarc=pass header.from=""',
            f"dmarc=pass (without header.from) dkim=none ({AUTHSERV})",
        ),
        (
            f"{AUTHSERV}; dmarc=pass header.from=evil.example",
            f"dmarc=pass (for another domain) dkim=none ({AUTHSERV})",
        ),
        (  # a parent of the From domain is not the From domain
            f"{AUTHSERV}; dmarc=pass header.from=org",
            f"dmarc=pass (for another domain) dkim=none ({AUTHSERV})",
        ),
    ],
)
def test_a_dmarc_pass_for_no_or_another_domain_proves_nothing(result: str, detail: str) -> None:
    mail = parse_mail(_raw("Ana <ana@example.org>", result), AUTHSERV)
    assert mail.address == "ana@example.org"
    assert (mail.assurance, mail.assurance_detail) == ("refuted", detail)


@pytest.mark.parametrize(
    "result",
    [
        f"{AUTHSERV}; dmarc=pass header.from=example.org",
        f"{AUTHSERV}; dmarc=pass header.from=Example.ORG",  # domains are case-insensitive
        f"{AUTHSERV}; dmarc=pass (p=NONE) header.from=ana@EXAMPLE.org",
    ],
)
def test_a_dmarc_pass_naming_the_from_domain_proves_it(result: str) -> None:
    mail = parse_mail(_raw("ana@Example.org", result), AUTHSERV)
    assert mail.assurance == "mail_server", mail.assurance_detail
    assert mail.assurance_detail.startswith("dmarc=pass header.from=")


def test_an_aligned_dkim_pass_still_proves_the_from_beside_a_bare_dmarc_pass() -> None:
    result = f"{AUTHSERV}; dmarc=pass; dkim=pass header.d=example.org"
    mail = parse_mail(_raw("ana@example.org", result), AUTHSERV)
    assert (mail.assurance, mail.assurance_detail) == (
        "mail_server",
        f"dkim=pass header.d=example.org ({AUTHSERV})",
    )
