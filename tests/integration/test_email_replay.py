"""A signed mail of the owner's, re-sent unchanged to Omega's mailbox, through `omega start` with
the IMAP double and a real SMTP server. The receiving server still says dkim=pass and
dmarc=pass, but: a mail the owner wrote to someone else (To: mallory@...) is a stranger's,
denied and audited ("not addressed to Omega"); one the owner wrote to Omega is answered once,
however often it is delivered again (under new UIDs, across a restart); a proven mail dated
past the window, or without a Date, is refused unread. The owner's ordinary mail, to Omega's
address or an alias, is served as the owner."""

from __future__ import annotations

import time
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path

from tests.conftest import openai_env, run_omega
from tests.fakes.imap_server import FakeImap
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.smtp_server import SmtpSink
from tests.integration.test_email_channel import (  # its imap and smtp fixtures too
    AUTHSERV,
    PROVEN,
    _answers,
    _configure,
    _mail,
    _start,
    _text,
    imap,
    smtp,
)
from tests.integration.test_email_identity import PENDING, _wait_for_audit

__all__ = ["imap", "smtp"]  # the fixtures this module uses

OWNER = f'authserv_id = "{AUTHSERV}"\n[auth]\nowners = ["email:ana@example.org"]\n'


def _wait_until_seen(imap: FakeImap, uids: list[int]) -> None:
    """Until the mails `uids` (and no others) are flagged \\Seen: each was passed."""
    deadline = time.monotonic() + 30
    while imap.seen() != uids:
        assert time.monotonic() < deadline, imap.seen()
        time.sleep(0.05)


def _saying(why: str) -> Callable[[str, str], bool]:
    """Whether an audit row's detail says `why`."""
    return lambda sender, detail: why in detail


def _answered(smtp: SmtpSink, ident: str) -> list[str]:
    """What the mails answering `ident` say."""
    with smtp.lock:
        return [_text(m) for _, m in smtp.mail if m.get("In-Reply-To") == ident]


def test_the_owners_signed_mail_to_someone_else_gets_no_owner_rights_and_is_audited(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    extra = 'aliases = ["Omega+Home@Example.org"]\n' + OWNER
    _configure(isolated_env, imap, smtp, extra)
    omega = _start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    month_ago = formatdate(time.time() - 31 * 86_400, usegmt=True)
    try:
        # Ana's mail to Mallory, which Mallory re-sent to Omega: the server's pass is for it.
        imap.deliver(
            _mail(
                "Ana <ana@example.org>",
                "",
                "/pending",
                "<to-mallory@example.org>",
                PROVEN,
                To="Mallory <mallory@evil.example>",
                Cc='"omega@example.org" <eve@evil.example> (omega@example.org)',
            )
        )
        sender, detail = _wait_for_audit(
            isolated_env, lambda s, d: s == "ana@example.org" and "not addressed to Omega" in d
        )
        assert "failed verification" in detail, detail
        # Her own mail to Omega, but written more than the window ago, or without a Date.
        imap.deliver(
            _mail("ana@example.org", "", "/pending", "<old@example.org>", PROVEN, Date=month_ago)
        )
        imap.deliver(
            _mail("ana@example.org", "", "/pending", "<undated@example.org>", PROVEN, Date="")
        )
        for why in ("dated more than 30 days ago", "without a readable Date"):
            sender, detail = _wait_for_audit(isolated_env, _saying(why))
            assert sender == "" and "refused unread" in detail and "pending" not in detail
        # Her ordinary mail, to an alias of Omega's (in Cc, any letter case): the owner's.
        imap.deliver(
            _mail(
                "ana@example.org",
                "",
                "/pending",
                "<ok@example.org>",
                PROVEN,
                To="bo@example.org",
                Cc="Omega <omega+home@EXAMPLE.org>",
            )
        )
        [answer] = _answers(smtp, "<ok@example.org>", PENDING, isolated_env)
        assert answer["To"] == "ana@example.org"
        _wait_until_seen(imap, [1, 2, 3, 4])
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    with smtp.lock:
        answered = {m.get("In-Reply-To") for _, m in smtp.mail}
    assert answered == {"<ok@example.org>"}  # nothing answered the others, not even a refusal


def test_the_owners_mail_delivered_again_is_answered_once_across_a_restart(
    fake_openai: FakeOpenAI, isolated_env: Path, imap: FakeImap, smtp: SmtpSink
) -> None:
    _configure(isolated_env, imap, smtp, OWNER)
    env = openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600")
    signed = _mail("Ana <ana@example.org>", "", "/pending", "<once@example.org>", PROVEN)
    omega = _start(env, isolated_env)
    try:
        imap.deliver(signed)  # her ordinary mail to Omega: served as the owner
        _answers(smtp, "<once@example.org>", PENDING, isolated_env)
        imap.deliver(signed)  # the same mail, re-sent: a new UID, the same Message-ID
        sender, detail = _wait_for_audit(isolated_env, lambda s, d: "(a replay)" in d)
        assert sender == "" and f"mail email:{imap.uidvalidity}:2 refused unread" in detail
        _wait_until_seen(imap, [1, 2])
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    omega = _start(env, isolated_env)  # the Message-ID is remembered across the restart
    try:
        imap.deliver(signed)
        _wait_until_seen(imap, [1, 2, 3])
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    assert _answered(smtp, "<once@example.org>").count(PENDING) == 1
    log = (isolated_env / "omega.log").read_text(encoding="utf-8", errors="replace")
    assert f"refused mail email:{imap.uidvalidity}:3 unread: a proven mail whose Message-ID" in log


def test_status_warns_when_no_address_of_omegas_is_known(isolated_env: Path) -> None:
    """A proven mail must name one of Omega's addresses: with none known (imap_user a plain
    login, no from_address or aliases) every mail would be refused, so `omega status` says so."""
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(
        '[channel.email]\nenabled = true\nimap_host = "127.0.0.1"\nimap_user = "omega"\n'
        'imap_password = "pw-123456"\nsmtp_host = "127.0.0.1"\n'
        'authserv_id = "mx.example.org"\nallowed_users = ["ana@example.org"]\n',
        encoding="utf-8",
    )
    status = run_omega("status")
    assert "no address of Omega's is known" in status.stdout, status.stdout + status.stderr
    (isolated_env / "config.toml").write_text(
        (isolated_env / "config.toml").read_text() + 'from_address = "omega@example.org"\n',
        encoding="utf-8",
    )
    assert "no address of Omega's is known" not in run_omega("status").stdout
