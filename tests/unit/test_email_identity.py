"""Who a mail is from (identity.py) and whether its receiving server vouches for it
(authres.py): one plain From mailbox or nothing, the topmost Authentication-Results of the
configured authserv-id or nothing; fuzzed with hypothesis."""

from __future__ import annotations

from email import policy
from email.message import Message
from email.parser import BytesParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.channels.email.authres import aligned, assurance_of, parse_results
from omega.channels.email.identity import ADDR_SPEC, Mailbox, parse_mailbox, sender_of
from omega.channels.email.limits import Refusal

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

AUTHSERV = "mx.example.org"


def _msg(*headers: str) -> Message:
    raw = "\r\n".join(headers).encode("utf-8", "surrogateescape") + b"\r\n\r\nbody\r\n"
    return BytesParser(policy=policy.compat32).parsebytes(raw)


@pytest.mark.parametrize(
    ("value", "address", "name"),
    [
        ("ana@example.org", "ana@example.org", ""),
        ("Ana <ANA@Example.ORG>", "ana@example.org", "Ana"),
        ('"Ana, B. (boss)" <ana@example.org>', "ana@example.org", "Ana, B. (boss)"),
        ("Ana B. Smith <ana.b+tag@mail.example.org>", "ana.b+tag@mail.example.org", "Ana B. Smith"),
        ("=?utf-8?q?Jos=C3=A9?= <jose@example.org>", "jose@example.org", "José"),
        ("José <jose@example.org>", "jose@example.org", "José"),
        ("<ana@example.org>", "ana@example.org", ""),
        ('"ana@example.org" <mallory@evil.example>', "mallory@evil.example", "ana@example.org"),
        ("Ana\r\n <ana@example.org>", "ana@example.org", "Ana"),
    ],
)
def test_one_plain_mailbox_is_read(value: str, address: str, name: str) -> None:
    assert parse_mailbox(value) == Mailbox(address, name)


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("ana@example.org (x) <mallory@evil.example>", "from_comment"),
        ("ana@example.org (Ana)", "from_comment"),
        ("<ana@example.org>mallory@evil.example", "from_trailing"),
        ("ana@example.org, mallory@evil.example", "from_list"),
        ("<ana@example.org> <mallory@evil.example>", "from_list"),
        ("ana@example.org <mallory@evil.example>", "from_phrase"),
        ("friends: ana@example.org;", "from_group"),
        ("<@evil.example:ana@example.org>", "from_group"),
        ('"ana"@example.org', "from_quote"),
        ('"Ana <ana@example.org>', "from_quote"),
        ("ana@[192.0.2.1]", "from_address"),
        ("ana@example.org.", "from_address"),
        ("", "from_address"),
        ("\u212aate@example.org", "non_ascii"),  # the Kelvin sign folds to "kate@"
        ("ana@ex\u0430mple.org", "non_ascii"),  # a Cyrillic a
        ("ana\uff20example.org", "non_ascii"),  # a full-width @
        ("Ana <\udce2\udc84\udcaaate@example.org>", "non_ascii"),  # raw UTF-8 bytes
        ("a" * 3000 + "@example.org", "from_long"),
    ],
)
def test_anything_else_is_refused(value: str, code: str) -> None:
    found = parse_mailbox(value)
    assert isinstance(found, Refusal) and found.code == code, found


def test_one_from_field_and_no_other_sender() -> None:
    assert sender_of(_msg("From: ana@example.org", "Sender: ANA@example.org")) == Mailbox(
        "ana@example.org"
    )
    for headers in (
        ("Subject: none",),
        ("From: ana@example.org", "From: mallory@evil.example"),
        ("From: ana@example.org", "Sender: mallory@evil.example"),
        ("From: ana@example.org", "Sender: (nobody)"),
    ):
        assert isinstance(sender_of(_msg(*headers)), Refusal), headers
    # Reply-To is not read at all.
    assert sender_of(_msg("From: mallory@evil.example", "Reply-To: ana@example.org")) == Mailbox(
        "mallory@evil.example"
    )


_local = st.from_regex(r"[a-z0-9][a-z0-9._+-]{0,20}[a-z0-9]", fullmatch=True).filter(
    lambda s: ".." not in s
)
_domain = st.from_regex(r"[a-z0-9]{1,10}(\.[a-z0-9]{1,10}){1,3}", fullmatch=True)
_name = st.text(
    st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from('()<>,;:@"\\'),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_from_value_gives_a_plain_ascii_address_found_in_it_or_a_refusal(value: str) -> None:
    found = parse_mailbox(value)
    if isinstance(found, Mailbox):
        assert found.address.isascii() and found.address == found.address.lower()
        assert ADDR_SPEC.fullmatch(found.address)
        assert found.address in value.lower()
        assert "(" not in value.replace(found.name, "") and "," not in value.replace(found.name, "")


@settings(max_examples=200, deadline=None)
@given(_local, _domain, _name)
def test_a_quoted_display_name_never_changes_the_address(
    local: str, domain: str, name: str
) -> None:
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    found = parse_mailbox(f'"{quoted}" <{local}@{domain}>')
    assert isinstance(found, Mailbox) and found.address == f"{local}@{domain}"
    assert "=?" in name or found.name == name.strip()


@settings(max_examples=200, deadline=None)
@given(
    _local,
    _domain,
    st.sampled_from(
        [
            "{a} (c) <m@evil.example>",
            "<{a}>m@evil.example",
            "<{a}> m@evil.example",
            "{a}, m@evil.example",
            "m@evil.example, {a}",
            "g: {a}, m@evil.example;",
            "<{a}> (x)",
            "{a} <m@evil.example>",
            "<m@evil.example> {a}",
            "<{a}><m@evil.example>",
        ]
    ),
)
def test_a_second_address_next_to_the_owners_is_always_refused(
    local: str, domain: str, shape: str
) -> None:
    assert isinstance(parse_mailbox(shape.format(a=f"{local}@{domain}")), Refusal)


def test_authentication_results_are_read_with_comments_versions_and_quotes() -> None:
    parsed = parse_results(
        "MX.Example.ORG 1; dkim=pass (2048-bit key; secure) header.d=example.org "
        'header.s=sel header.b="ab;c"; spf=pass (sender IP is 192.0.2.1) '
        "smtp.mailfrom=example.org; dmarc = pass (p=NONE sp=NONE) header.from=example.org"
    )
    assert parsed is not None
    authserv, results = parsed
    assert authserv == "mx.example.org"
    assert [(r.method, r.result) for r in results] == [
        ("dkim", "pass"),
        ("spf", "pass"),
        ("dmarc", "pass"),
    ]
    assert results[0].props == {"header.d": "example.org", "header.s": "sel", "header.b": "ab;c"}
    assert parse_results("mx.example.org; none") == ("mx.example.org", [])


def test_dkim_alignment_is_the_domain_or_a_parent_never_a_look_alike() -> None:
    assert aligned("example.org", "example.org")
    assert aligned("example.org", "mail.example.org")
    assert aligned("@Example.ORG", "example.org")  # header.i
    assert not aligned("evil-example.org", "example.org")
    assert not aligned("mail.example.org", "example.org")
    assert not aligned("org", "example.org")
    assert not aligned("", "example.org")


ANA = Mailbox("ana@example.org")


@pytest.mark.parametrize(
    ("headers", "assurance", "detail"),
    [
        (
            ["Authentication-Results: mx.example.org; dmarc=pass header.from=example.org"],
            "mail_server",
            "dmarc=pass header.from=example.org (mx.example.org)",
        ),
        (  # a pass naming no domain proves no From (test_email_dmarc_header_from.py)
            ["Authentication-Results: mx.example.org; dmarc=pass"],
            "refuted",
            "dmarc=pass (without header.from) dkim=none (mx.example.org)",
        ),
        (
            ["Authentication-Results: mx.example.org; dkim=pass header.i=@example.org"],
            "mail_server",
            "dkim=pass header.i=@example.org (mx.example.org)",
        ),
        (
            ["Authentication-Results: mx.example.org; dkim=fail; spf=fail; dmarc=fail"],
            "refuted",
            "dmarc=fail dkim=fail (mx.example.org)",
        ),
        (
            ["Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=example.org"],
            "refuted",
            "dmarc=none dkim=none (mx.example.org)",
        ),
        (
            ["Authentication-Results: mx.example.org; dkim=pass header.d=evil-example.org"],
            "refuted",
            "dmarc=none dkim=pass (not aligned with the From domain) (mx.example.org)",
        ),
        (
            ["Authentication-Results: mx.example.org; dmarc=pass header.from=evil.example"],
            "refuted",
            "dmarc=pass (for another domain) dkim=none (mx.example.org)",
        ),
        (  # the sender's own header below the server's: counts for nothing
            [
                "Authentication-Results: mx.example.org; dmarc=fail header.from=example.org",
                "Authentication-Results: mx.example.org; dmarc=pass header.from=example.org",
            ],
            "refuted",
            "dmarc=fail dkim=none (mx.example.org)",
        ),
        (  # the topmost is another server's: nothing below it is read
            [
                "Authentication-Results: relay.evil.example; dmarc=pass",
                "Authentication-Results: mx.example.org; dmarc=pass header.from=example.org",
            ],
            "refuted",
            "no Authentication-Results from mx.example.org at the top",
        ),
        ([], "refuted", "no Authentication-Results from mx.example.org at the top"),
    ],
)
def test_only_the_topmost_header_of_the_configured_server_proves_the_from(
    headers: list[str], assurance: str, detail: str
) -> None:
    msg = _msg(*headers, "From: ana@example.org")
    assert assurance_of(msg, ANA, AUTHSERV) == (assurance, detail)


def test_without_an_authserv_id_nobody_is_proven() -> None:
    msg = _msg("Authentication-Results: mx.example.org; dmarc=pass", "From: ana@example.org")
    assert assurance_of(msg, ANA, "") == ("unverified", "no authserv_id configured")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_authentication_results_value_parses_without_error(value: str) -> None:
    parsed = parse_results(value)
    if parsed is not None and parsed[0] == AUTHSERV:
        msg = _msg(f"Authentication-Results: {value}".replace("\r", " ").replace("\n", " "))
        assurance, _ = assurance_of(msg, ANA, AUTHSERV)
        assert assurance in ("mail_server", "refuted")
        if assurance == "mail_server":
            assert "pass" in value.lower()
