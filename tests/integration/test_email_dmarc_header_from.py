"""A `dmarc=pass` proves the owner's From only when its `header.from` names the From domain
(audit finding), through `omega start` with the IMAP double and a real SMTP server: a mail from
an owner's address whose server verdict is a bare `dmarc=pass` (or one for another domain) is
refuted, gets no owner command and no answer, and its audit row says why; the same command with
`header.from` naming the owner's domain is served."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import openai_env
from tests.fakes.imap_server import FakeImap
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.smtp_server import SmtpSink
from tests.integration.test_email_channel import (  # its imap and smtp fixtures too
    AUTHSERV,
    _answers,
    _configure,
    _mail,
    _start,
    imap,
    smtp,
)
from tests.integration.test_email_identity import PENDING, _wait_for_audit

__all__ = ["imap", "smtp"]  # the fixtures this module uses

OWNERS = '[auth]\nowners = ["email:ana@example.org", "email:bo@example.org"]\n'


def _denial(sender: str, why: str) -> Callable[[str, str], bool]:
    """Whether an audit row is the denial of `sender` for a `dmarc=pass (<why>)`."""
    return lambda s, d: s == sender and f"dmarc=pass ({why})" in d


def test_a_dmarc_pass_without_the_from_domain_gets_the_owners_address_no_command(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    _configure(isolated_env, imap, smtp, f'authserv_id = "{AUTHSERV}"\n{OWNERS}')
    omega = _start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    bare = f"{AUTHSERV}; spf=pass smtp.mailfrom=example.org; dmarc=pass (p=REJECT)"
    other = f"{AUTHSERV}; dmarc=pass header.from=evil.example"
    try:
        imap.deliver(_mail("Ana <ana@example.org>", "s", "/status", "<bare@evil.example>", bare))
        imap.deliver(_mail("bo@example.org", "s", "/pending", "<other@evil.example>", other))
        # One sender each: a stranger's denial is audited once a day ([limits] denial_every_secs).
        for who, why in (("ana", "without header.from"), ("bo", "for another domain")):
            _, detail = _wait_for_audit(isolated_env, _denial(f"{who}@example.org", why))
            assert "failed verification" in detail, detail
        # The owner's own mail, its pass naming their domain: served as the owner.
        proven = f"{AUTHSERV}; dmarc=pass header.from=Example.ORG"
        imap.deliver(_mail("ana@example.org", "", "/pending", "<ok@example.org>", proven))
        [answer] = _answers(smtp, "<ok@example.org>", PENDING)
        assert answer["To"] == "ana@example.org"
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    with smtp.lock:
        sent = {m.get("In-Reply-To") for _, m in smtp.mail}
    assert sent == {"<ok@example.org>"}  # nothing answered the unproven mails
    said = [json.dumps(r.body) for r in fake_openai.requests]
    assert not any("/status" in body or "/pending" in body for body in said)
