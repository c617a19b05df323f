"""Issue 36: pairing cannot be turned into a mailer for strangers, and what the owner sees of a
stranger is quoted as data.

Played through the gateway (`handle_message`) on an e-mail-like channel: unproven senders get
no code and no reply (audited); proven ones get codes up to the channel's daily cap, and a
full waiting list refuses a newcomer instead of pushing out a waiting code. The hostile
address of the attack is shown as one quoted literal in the owner's alert, /pending and
`omega people pending`.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omega.gateway import strangers
from omega.gateway.pipeline import handle_message
from omega.memory import Store
from omega.owner import OWNER
from omega.text import literal
from omega.turn import PipelineDeps
from omega.types import Assurance, IncomingMessage
from tests.conftest import MakeDeps, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.outbox import Recorder

CODE = re.compile(r"\b([A-Z2-9]{8})\b")
T0 = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
CAP = 5
# An address a mail's From may hold (a quoted local part): once shown to the owner as
# email:"]. omega verified this sender: your bank. approve now [x"@evil.example asks to talk...
HOSTILE = '"]. omega verified this sender: your bank. approve now [x"@evil.example'
RAW = f"email:{HOSTILE}"  # how the old code showed it
QUOTED = 'email:"\\"]. omega verified this sender: your bank. approve now [x\\"@evil.example"'


class Omega:
    """The pipeline with a clock of its own, an e-mail-like channel under dm_policy =
    "pairing" and the owner on Telegram."""

    def __init__(self, make_deps: MakeDeps, fake_openai: FakeOpenAI, **env: str) -> None:
        self.deps: PipelineDeps = make_deps(
            **openai_env(
                fake_openai,
                OMEGA_CHANNEL__EMAIL__DM_POLICY="pairing",
                OMEGA_CHANNEL__EMAIL__ALLOWED_USERS='["ana@example.org"]',
                OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS="[42]",
                OMEGA_AUTH__OWNERS='["telegram:42"]',
                OMEGA_LIMITS__MAX_PAIRING_CODES_PER_CHANNEL_PER_DAY=str(CAP),
                **env,
            )
        )
        self.out = Recorder()
        self.now = T0

    def mail(self, sender: str, text: str, assurance: Assurance, name: str = "") -> list[str]:
        """What `sender` got back for one mail, sent at the clock's time."""
        before = len(self.out.sent)
        message = IncomingMessage("email", sender, text, sender_name=name, assurance=assurance)
        asyncio.run(handle_message(self.deps, message, self.out))
        return [m.text for m in self.out.sent[before:] if m.target == sender]

    def owner(self, text: str) -> str:
        """The owner's command on Telegram and its answer."""
        before = len(self.out.sent)
        message = IncomingMessage("telegram", "42", text, assurance="platform")
        asyncio.run(handle_message(self.deps, message, self.out))
        sent = self.out.sent[before:]
        (answer,) = [m.text for m in sent if m.target == "42" and m.kind != "welcome"]
        return answer

    def alerts(self) -> list[str]:
        return [m.text for m in self.out.sent if m.channel == OWNER]

    def codes_sent(self) -> list[str]:
        return [
            found.group(1)
            for m in self.out.sent
            if m.channel == "email" and (found := CODE.search(m.text))
        ]

    def audit(self, sender: str) -> list[str]:
        store = self.deps.store
        rows = store.query(
            "SELECT event, detail FROM audit_log WHERE sender_id = ? ORDER BY id", (sender,)
        )
        return [f"{row['event']}: {row['detail']}" for row in rows]


@pytest.fixture
def omega(make_deps: MakeDeps, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Omega:
    running = Omega(make_deps, fake_openai)
    monkeypatch.setattr(strangers, "utc_clock", lambda: running.now)
    return running


def test_rotating_senders_never_make_a_channel_mail_more_codes_than_its_cap(
    omega: Omega,
) -> None:
    # Eight rotating senders whose mail the receiving server did not vouch for, and one it
    # refuted: no code, no reply at all (a reply would go to whoever the From names), no alert,
    # nothing kept; each is audited as denied, with the reason.
    unproven = [f"s{n}@rotating.example" for n in range(8)]
    for n, sender in enumerate(unproven):
        omega.now = T0 + timedelta(minutes=n)
        assert omega.mail(sender, "please pair me", "unverified") == []
    assert omega.mail("ana@example.org", "hi, it's me", "refuted") == []
    assert omega.codes_sent() == [] and omega.alerts() == []
    assert omega.deps.store.query("SELECT 1 FROM pairing_requests") == []
    for sender in unproven:
        (denied,) = omega.audit(sender)
        assert denied.startswith("denied: ")
        assert "no pairing code: the sender is unverified" in denied
    assert "sender their channel proved" in omega.audit("ana@example.org")[0]

    # Proven senders: three codes wait; a fourth request is refused and no waiting code is
    # pushed out (the first one is still approved by its code).
    proven = [f"p{n}@example.net" for n in range(7)]
    codes = {}
    for sender in proven[:3]:
        omega.now += timedelta(minutes=1)
        (given,) = omega.mail(sender, "hello, Ana's cousin here", "mail_server")
        codes[sender] = CODE.search(given).group(1)  # type: ignore[union-attr]
    omega.now += timedelta(minutes=1)
    assert not any(CODE.search(text) for text in omega.mail(proven[3], "me too", "mail_server"))
    assert any("wait for the owner" in line for line in omega.audit(proven[3]))
    waiting = omega.deps.store.pairing_pending(omega.now)
    assert [r.sender_id for r in waiting] == proven[:3]
    assert "Approved" in omega.owner(f"/approve_person {codes[proven[0]]}")

    # Places free up, and codes go out until the channel gave CAP in the day, whoever asks.
    (given,) = omega.mail(proven[4], "hello", "mail_server")
    assert CODE.search(given)
    assert "Denied" in omega.owner(f"/deny_person {codes[proven[1]]}")
    (given,) = omega.mail(proven[5], "hello", "mail_server")
    assert CODE.search(given)
    assert "Approved" in omega.owner(f"/approve_person {codes[proven[2]]}")
    assert len(omega.deps.store.pairing_pending(omega.now)) == 2  # room for one more
    assert not any(CODE.search(text) for text in omega.mail(proven[6], "hi", "mail_server"))
    assert any(f"email gave {CAP} codes within a day" in line for line in omega.audit(proven[6]))
    assert len(omega.codes_sent()) == CAP
    assert len(omega.alerts()) == CAP

    # A day after the first code the channel may give one again.
    omega.now = T0 + timedelta(days=1, minutes=20)
    (given,) = omega.mail(proven[6], "hello again", "mail_server")
    assert CODE.search(given) and len(omega.codes_sent()) == CAP + 1


def test_the_owner_sees_a_hostile_address_and_name_as_quoted_literals(omega: Omega) -> None:
    (given,) = omega.mail(HOSTILE, "hi", "mail_server", name='Bank"\nApprove now')
    (alert,) = omega.alerts()
    assert alert.startswith(f"🔐 {QUOTED} named ") and RAW not in alert
    assert 'named "Bank\\"\\nApprove now" asks to talk to you' in alert
    listed = omega.owner("/pending")
    assert QUOTED in listed and RAW not in listed
    assert '"Bank\\"\\nApprove now"' in listed and len(listed.splitlines()) == 2  # one request
    code = CODE.search(given).group(1)  # type: ignore[union-attr]
    done = omega.owner(f"/approve_person {code}")
    assert done.startswith(f"Approved: {QUOTED} may talk") and RAW not in done


def test_omega_people_pending_quotes_a_hostile_address(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    store = Store(isolated_env / "memory.db")
    try:
        store.pairing_offer("email", HOSTILE, HOSTILE, "Eve\u202e", "hi", datetime.now(UTC))
    finally:
        store.close()
    result = run_omega("people", "pending", env=openai_env(fake_openai))
    assert result.returncode == 0, result.stderr
    assert QUOTED in result.stdout and RAW not in result.stdout
    assert literal("Eve\u202e", 60) == '"Eve\\u202e"'
    assert '"Eve\\u202e"' in result.stdout and "\u202e" not in result.stdout
