"""Pairing codes and run-time grants in memory.db: issue, expiry, single use, brute force,
limits per channel and per sender, revocation; the code parser fuzzed; dm_policy checked at
config load."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from omega.config import Config
from omega.config.channels import TelegramConfig, TerminalConfig
from omega.memory import Store
from omega.memory.pairing import (
    ALPHABET,
    ATTEMPT_WINDOW,
    CODE_LENGTH,
    MAX_WRONG_ATTEMPTS,
    VALID_FOR,
    new_code,
    parse_code,
)
from omega.turn import check_auth, dm_policies, is_owner, role_of
from omega.types import IncomingMessage

T0 = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "memory.db")
    yield opened
    opened.close()


def offer(store: Store, sender: str, text: str = "hello there", now: datetime = T0) -> str:
    result = store.pairing_offer("telegram", sender, sender, f"Name {sender}", text, now)
    assert result.outcome == "issued", result
    return result.code


def test_a_code_is_eight_unambiguous_characters_and_only_its_hash_is_kept(store: Store) -> None:
    code = offer(store, "7", "hi, I am Eve, Ana's friend from school " + "blah " * 50)
    assert len(code) == CODE_LENGTH and set(code) <= set(ALPHABET)
    assert not set("0O1IL") & set(ALPHABET)
    (row,) = store.query("SELECT * FROM pairing_requests")
    assert code not in " ".join(str(value) for value in tuple(row))
    assert len(row["code_hash"]) == 64 and len(row["salt"]) == 32
    assert row["first_words"].startswith("hi, I am Eve") and len(row["first_words"]) <= 80
    (pending,) = store.pairing_pending(T0)
    assert (pending.channel, pending.sender_id, pending.sender_name) == ("telegram", "7", "Name 7")
    assert pending.expires_at == T0 + VALID_FOR


def test_approval_lets_the_sender_in_once_and_blanks_what_they_wrote(store: Store) -> None:
    code = offer(store, "7", "secret-words-of-a-stranger")
    assert store.granted_role("telegram", "7") is None
    done = store.pairing_resolve(code.lower()[:4] + "-" + code[4:], True, "cli", T0)
    assert done.outcome == "approved"
    assert store.granted_role("telegram", "7") == "person"
    assert store.pairing_resolve(code, True, "cli", T0).outcome == "used"
    assert store.pairing_resolve(code, False, "cli", T0).outcome == "used"
    (row,) = store.query("SELECT first_words, sender_name, status FROM pairing_requests")
    assert tuple(row) == ("", "", "approved")
    events = [r["event"] for r in store.query("SELECT event FROM audit_log ORDER BY id")]
    assert events == ["pairing:requested", "access:allowed", "pairing:approved"]
    # The person is told exactly once.
    assert [r.sender_id for r in store.pairing_untold(T0)] == ["7"]
    assert store.pairing_untold(T0) == []


def test_expired_wrong_and_malformed_codes_are_refused(store: Store) -> None:
    code = offer(store, "7")
    later = T0 + VALID_FOR + timedelta(seconds=1)
    assert store.pairing_pending(later) == []
    assert store.pairing_resolve(code, True, "cli", later).outcome == "expired"
    other = next(c for c in iter(new_code, None) if c != code)
    assert store.pairing_resolve(other, True, "web", T0).outcome == "wrong"
    assert store.pairing_resolve("hello", True, "web", T0).outcome == "malformed"
    assert store.granted_role("telegram", "7") is None


def test_brute_force_is_refused_per_surface_even_with_the_right_code(store: Store) -> None:
    code = offer(store, "7")
    wrong = next(c for c in iter(new_code, None) if c != code)
    for _ in range(MAX_WRONG_ATTEMPTS):
        assert store.pairing_resolve(wrong, True, "telegram:99", T0).outcome == "wrong"
    assert store.pairing_resolve(code, True, "telegram:99", T0).outcome == "limited"
    assert store.granted_role("telegram", "7") is None
    # Another surface is not locked; the guesser is again once the window passed.
    later = T0 + ATTEMPT_WINDOW + timedelta(seconds=1)
    assert store.pairing_resolve(wrong, True, "telegram:99", later).outcome == "wrong"
    assert store.pairing_resolve(code, True, "cli", T0).outcome == "approved"


def test_three_requests_wait_per_channel_and_a_fourth_is_refused_not_the_oldest(
    store: Store,
) -> None:
    """A full waiting list refuses the newcomer: a request never pushes out a code the owner
    may be about to approve (rotating senders once expired a real stranger's code)."""
    codes = [offer(store, str(n), now=T0 + timedelta(minutes=n)) for n in range(3)]
    fourth = store.pairing_offer("telegram", "3", "3", "", "hi", T0 + timedelta(minutes=3))
    assert (fourth.outcome, fourth.code, fourth.request) == ("full", "", None)
    assert "3 requests on telegram wait" in fourth.why
    waiting = store.pairing_pending(T0 + timedelta(minutes=5))
    assert [r.sender_id for r in waiting] == ["0", "1", "2"]
    assert store.pairing_resolve(codes[0], True, "cli", T0).outcome == "approved"
    # A place is free again: the refused sender may ask now, and another channel never waited.
    assert store.pairing_offer("telegram", "3", "3", "", "hi", T0).outcome == "issued"
    assert store.pairing_offer("slack", "3", "3", "", "hi", T0).outcome == "issued"


def test_a_channel_gives_its_daily_codes_and_then_none_whoever_asks(store: Store) -> None:
    """`codes_per_channel` counts every code a channel issued in the last day, settled or not,
    on top of the per-sender limit: rotating senders cannot make it send more."""
    given = []
    for n in range(4):
        at = T0 + timedelta(minutes=n)
        result = store.pairing_offer("email", f"s{n}", f"s{n}", "", "hi", at, 4)
        assert result.outcome == "issued"
        given.append(result.code)
        store.pairing_resolve(result.code, False, "cli", at)  # keeps the waiting list empty
    capped = store.pairing_offer("email", "s9", "s9", "", "hi", T0 + timedelta(hours=5), 4)
    assert (capped.outcome, capped.code) == ("capped", "")
    assert capped.why == "email gave 4 codes within a day"
    assert store.pairing_pending(T0 + timedelta(hours=5)) == []
    # Other channels keep their own count; a day after the first code, one may be issued.
    assert store.pairing_offer("telegram", "s9", "s9", "", "hi", T0, 4).outcome == "issued"
    later = T0 + timedelta(days=1, minutes=1)
    assert store.pairing_offer("email", "s9", "s9", "", "hi", later, 4).outcome == "issued"
    assert store.pairing_offer("email", "s8", "s8", "", "hi", later, 4).outcome == "capped"


def test_one_sender_gets_one_code_at_a_time_and_three_a_day(store: Store) -> None:
    offer(store, "7")
    assert store.pairing_offer("telegram", "7", "7", "", "again", T0).outcome == "waiting"
    offer(store, "7", now=T0 + VALID_FOR * 1.5)
    offer(store, "7", now=T0 + VALID_FOR * 3)
    limited = store.pairing_offer("telegram", "7", "7", "", "x", T0 + VALID_FOR * 4.5)
    assert (limited.outcome, limited.why) == ("limited", "3 codes to this sender within a day")
    # A day later they may ask again.
    assert store.pairing_offer("telegram", "7", "7", "", "x", T0 + timedelta(days=2)).code


def test_a_denied_or_revoked_sender_gets_no_new_code(store: Store) -> None:
    code = offer(store, "7")
    assert store.pairing_resolve(code, False, "cli", T0).outcome == "denied"
    later = T0 + VALID_FOR * 2
    assert store.pairing_offer("telegram", "7", "7", "", "x", later).outcome == "limited"
    store.revoke_access("telegram", "8", "cli")
    assert store.pairing_offer("telegram", "8", "8", "", "x", later).outcome == "limited"
    store.grant_access("telegram", "8", "person", "cli")
    assert store.granted_role("telegram", "8") == "person"


def test_revoking_cancels_the_tasks_that_channel_id_made(store: Store) -> None:
    store.grant_access("telegram", "7", "person", "cli")
    due = T0 + timedelta(days=1)
    mine, _ = store.create_task(
        channel="telegram", sender_id="7", reply_target="7", description="a", due_at=due
    )
    linked, _ = store.create_task(
        channel="telegram",
        sender_id="ana",
        reply_target="7",
        description="b",
        due_at=due,
        origin_id="7",
    )
    other, _ = store.create_task(
        channel="telegram", sender_id="8", reply_target="8", description="c", due_at=due
    )
    assert store.revoke_access("telegram", "7", "cli") == (True, 2)
    status = {r["id"]: r["status"] for r in store.query("SELECT id, status FROM scheduled_tasks")}
    assert status == {mine: "cancelled", linked: "cancelled", other: "pending"}
    assert store.granted_role("telegram", "7") is None
    assert store.grants() == []
    (row,) = store.query("SELECT detail FROM audit_log WHERE event = 'access:revoked'")
    assert "2 pending task(s) cancelled" in row["detail"]


def test_grants_are_merged_with_the_config_which_stays_the_override(store: Store) -> None:
    config = Config.model_validate(
        {"channel": {"telegram": {"allowed_users": [42]}}, "auth": {"owners": ["telegram:42"]}}
    )
    eve = IncomingMessage("telegram", "7", "hi", assurance="platform")
    assert check_auth(config, eve) and role_of(config, eve) == "stranger"
    assert check_auth(config, eve, "person") is None
    assert role_of(config, eve, "person") == "person"
    assert role_of(config, eve, "owner") == "owner" and is_owner(config, eve, "owner")
    ana = IncomingMessage("telegram", "42", "hi", assurance="platform")
    assert role_of(config, ana) == "owner"  # the config needs no row
    store.grant_access("telegram", "7", "owner", "cli")
    (telegram,) = [p for p in dm_policies(config, store) if p.channel == "telegram"]
    assert telegram.config_allowed == ("42",) and telegram.granted == ("7",)
    assert telegram.owners == ("42", "7") and not telegram.wildcard
    assert telegram.dm_policy == "allowlist"


@pytest.mark.no_store
def test_dm_policy_open_needs_a_wildcard_and_pairing_refuses_one() -> None:
    with pytest.raises(ValidationError, match='"open" admits anyone'):
        TelegramConfig(dm_policy="open", allowed_users=[42])
    with pytest.raises(ValidationError, match="nobody would ever need to pair"):
        TerminalConfig(dm_policy="pairing", allowed_users=["*"])
    assert TelegramConfig(dm_policy="open", allowed_users=["*"]).dm_policy == "open"
    assert TelegramConfig().dm_policy == "allowlist"  # the default keeps today's behaviour


def test_the_migration_refuses_an_unknown_role(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError), store.transaction() as conn:
        conn.execute("INSERT INTO access_grants VALUES ('telegram', '7', 'admin', 'x', '2026')")


@pytest.mark.no_store
@given(st.text(max_size=100))
def test_the_code_parser_never_raises_and_returns_only_codes(text: str) -> None:
    code = parse_code(text)
    assert code is None or (len(code) == CODE_LENGTH and set(code) <= set(ALPHABET))


@pytest.mark.no_store
@given(
    st.text(alphabet=ALPHABET, min_size=CODE_LENGTH, max_size=CODE_LENGTH),
    st.sampled_from(["", " ", "-", "  ", "\t", "."]),
    st.booleans(),
)
def test_a_code_reads_back_however_it_is_typed(code: str, separator: str, lower: bool) -> None:
    typed = code[:4] + separator + code[4:]
    assert parse_code(f"  {typed.lower() if lower else typed}\n") == code


@pytest.mark.no_store
@given(st.text(alphabet="0O1IL", min_size=1, max_size=8), st.integers(0, CODE_LENGTH - 1))
def test_a_look_alike_letter_is_never_part_of_a_code(bad: str, at: int) -> None:
    code = new_code()
    assert parse_code(code[:at] + bad + code[at + len(bad) :]) is None


@pytest.mark.no_store
def test_a_plug_in_channels_table_counts_before_its_plug_in_validates_it() -> None:
    """A third-party channel's [channel.<name>] (kept as a table until its plug-in binds it)
    has its allow-list and DM policy read like a built-in's: the pairing job and the audit
    see it, and its allowed ids are let in."""
    config = Config.model_validate(
        {"channel": {"fifo": {"enabled": True, "dm_policy": "pairing", "allowed_users": ["ana"]}}}
    )
    [fifo] = [p for p in dm_policies(config) if p.channel == "fifo"]
    assert (fifo.enabled, fifo.dm_policy, fifo.config_allowed) == (True, "pairing", ("ana",))
    assert check_auth(config, IncomingMessage("fifo", "ana", "hi")) is None
    assert check_auth(config, IncomingMessage("fifo", "eve", "hi")) is not None


@pytest.mark.no_store
def test_a_channel_may_refuse_strangers_in_silence() -> None:
    """`tell_strangers = false` (the e-mail channel's default) turns the deny message off for
    that channel only; built-in channels still tell."""
    from omega.turn import tells_strangers

    config = Config.model_validate(
        {"channel": {"email": {"enabled": True, "tell_strangers": False}}}
    )
    assert not tells_strangers(config, "email")
    assert tells_strangers(config, "telegram")
