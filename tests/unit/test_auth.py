"""Per-channel allow-lists: '*' admits anyone, empty admits nobody, unknown channels too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omega.config import Config
from omega.memory import Store
from omega.memory.inbox import inbox_message
from omega.turn import check_auth
from omega.types import Assurance, IncomingMessage


def msg(channel: str, sender: str) -> IncomingMessage:
    return IncomingMessage(channel=channel, sender_id=sender, text="hi", assurance="platform")


@pytest.mark.no_store
def test_terminal_admits_the_local_user_by_default() -> None:
    assert check_auth(Config(), msg("terminal", "anyone")) is None


@pytest.mark.no_store
def test_each_channel_uses_its_own_list() -> None:
    config = Config.model_validate(
        {
            "channel": {
                "telegram": {"allowed_users": [42]},
                "terminal": {"allowed_users": ["ana"]},
                "whatsapp": {"allowed_users": ["*"]},
            }
        }
    )
    assert check_auth(config, msg("telegram", "42")) is None
    assert "not in allowed_users" in (check_auth(config, msg("telegram", "43")) or "")
    assert check_auth(config, msg("terminal", "ana")) is None
    assert check_auth(config, msg("terminal", "bob"))
    assert check_auth(config, msg("whatsapp", "+351900000000")) is None


@pytest.mark.no_store
def test_empty_list_admits_nobody_and_unknown_channel_is_denied() -> None:
    assert "empty" in (check_auth(Config(), msg("telegram", "42")) or "")
    assert "no allow-list" in (check_auth(Config(), msg("carrier-pigeon", "x")) or "")


@pytest.mark.no_store
def test_auth_disabled_admits_everyone() -> None:
    config = Config.model_validate({"auth": {"enabled": False}})
    assert check_auth(config, msg("telegram", "7")) is None


# Who is speaking is proven, not claimed (ARCHITECTURE §12a): the channel's assurance decides
# whether an id in [auth] owners or an allow-list means anything.
OWNED = Config.model_validate(
    {
        "auth": {"owners": ["email:ana@example.org"]},
        "channel": {"email": {"enabled": True, "allowed_users": ["ana@example.org", "bob@ex.org"]}},
    }
)


def mail(sender: str, assurance: Assurance, detail: str = "") -> IncomingMessage:
    return IncomingMessage("email", sender, "hi", assurance=assurance, assurance_detail=detail)


@pytest.mark.no_store
def test_a_proven_owner_is_the_owner_and_a_proven_person_a_person() -> None:
    from omega.turn import allowed_tools, is_owner, role_of

    owner = mail("ana@example.org", "mail_server")
    assert check_auth(OWNED, owner) is None
    assert is_owner(OWNED, owner) and role_of(OWNED, owner) == "owner"
    bob = mail("bob@ex.org", "mail_server")
    assert role_of(OWNED, bob) == "person"
    assert allowed_tools(OWNED, "person") == frozenset(OWNED.auth.people_tools)


@pytest.mark.no_store
def test_a_refuted_sender_is_a_stranger_whatever_id_they_give_and_the_reason_says_why() -> None:
    from omega.turn import is_owner, role_of

    for sender in ("ana@example.org", "bob@ex.org"):
        forged = mail(sender, "refuted", "dmarc=fail (mx.example.org)")
        reason = check_auth(OWNED, forged) or ""
        assert "failed verification" in reason and "dmarc=fail" in reason
        assert not is_owner(OWNED, forged)
        assert role_of(OWNED, forged) == "stranger"


@pytest.mark.no_store
def test_an_unverified_sender_naming_an_owner_is_refused_and_granted_owner_too() -> None:
    from omega.turn import is_owner

    claim = mail("ana@example.org", "unverified", "no authserv_id configured")
    assert "names an owner but is not verified" in (check_auth(OWNED, claim) or "")
    assert not is_owner(OWNED, claim)
    eve = mail("eve@ex.org", "unverified")
    assert "names an owner" in (check_auth(OWNED, eve, "owner") or "")  # a granted owner
    assert not is_owner(OWNED, eve, "owner")


@pytest.mark.no_store
def test_an_unverified_allowed_person_is_a_guest_with_no_tool_and_no_marker_but_silent() -> None:
    from omega.turn import allowed_tools, may_use_marker, role_of

    bob = mail("bob@ex.org", "unverified")
    assert check_auth(OWNED, bob) is None
    assert role_of(OWNED, bob) == "guest"
    assert allowed_tools(OWNED, "guest") == frozenset()
    assert may_use_marker("guest", "SILENT")
    assert not may_use_marker("guest", "SCHEDULE")
    assert not may_use_marker("guest", "LIMITATION")


def test_a_messages_assurance_survives_the_durable_inbox_and_an_old_row_is_unverified(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        sent = mail("ana@example.org", "mail_server", "dmarc=pass")
        store.inbox_put(sent)
        (claim,) = store.inbox_claim("r1", 60.0, ["email"], 10)
        assert claim.message.assurance == "mail_server"
        assert claim.message.assurance_detail == "dmarc=pass"
    finally:
        store.close()
    old = json.dumps({"channel": "telegram", "sender_id": "42", "text": "hi"})
    assert inbox_message("m1", old).assurance == "unverified"
    forged = json.dumps({"channel": "telegram", "sender_id": "42", "text": "hi", "assurance": "x"})
    assert inbox_message("m2", forged).assurance == "unverified"
