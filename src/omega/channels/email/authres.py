"""Whether the receiving mail server vouches for a mail's From: its `Authentication-Results`
header (RFC 8601), read strictly.

Only the topmost `Authentication-Results` field counts, and only when its authserv-id is the
one configured (`[channel.email] authserv_id`): the receiving server adds its field above every
other, and anything below it (or with another id) may have been written by the sender. The
From is proven by a `dmarc=pass` whose `header.from` names its domain (a `dmarc=pass` that
names no domain says nothing of which From passed), or a `dkim=pass` whose signing domain
(`header.d`, else the domain of `header.i`) is the From domain or a parent of it. SPF alone
proves nothing about From. Every function here is linear in its input and never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.message import Message

from omega.channels.email.identity import Mailbox
from omega.types import Assurance

MAX_FIELD_CHARS = 16_000  # a longer Authentication-Results field proves nothing


@dataclass(frozen=True)
class MethodResult:
    """One `method=result` of an Authentication-Results field, with its properties."""

    method: str
    result: str
    props: dict[str, str] = field(default_factory=dict)


def _strip_comments(value: str) -> str:
    """`value` without its (nested) comments; quoted strings are kept as they are."""
    out: list[str] = []
    depth = 0
    in_quote = escaped = False
    for char in value:
        if depth:  # inside a comment
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            continue
        if in_quote:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_quote = False
            continue
        if char == "(":
            depth = 1
        else:
            out.append(char)
            in_quote = char == '"'
    return "".join(out)


def _split_outside_quotes(value: str, sep: str) -> list[str]:
    pieces: list[str] = []
    current: list[str] = []
    in_quote = escaped = False
    for char in value:
        if escaped:
            escaped = False
        elif char == "\\" and in_quote:
            escaped = True
        elif char == '"':
            in_quote = not in_quote
        elif char == sep and not in_quote:
            pieces.append("".join(current))
            current = []
            continue
        current.append(char)
    pieces.append("".join(current))
    return pieces


def _pairs(piece: str) -> list[tuple[str, str]]:
    """The `key=value` pairs of one resinfo, spaces around `=` allowed (as RFC 8601's CFWS)."""
    words: list[str] = []
    for word in piece.split():
        if words and (word.startswith("=") or words[-1].endswith("=")):
            words[-1] += word
        else:
            words.append(word)
    pairs = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key:
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            pairs.append((key.lower(), value))
    return pairs


def parse_results(value: str) -> tuple[str, list[MethodResult]] | None:
    """The authserv-id (lower-cased) and the results of one Authentication-Results field;
    None when it is unreadable."""
    if len(value) > MAX_FIELD_CHARS:
        return None
    pieces = _split_outside_quotes(
        _strip_comments(value.replace("\r", " ").replace("\n", " ")), ";"
    )
    head = pieces[0].split()
    if not head:
        return None
    authserv = head[0].strip('"').lower()
    results = []
    for piece in pieces[1:]:
        pairs = _pairs(piece)
        if not pairs:
            continue  # "none", or an empty resinfo
        method, result = pairs[0]
        results.append(MethodResult(method.partition("/")[0], result.lower(), dict(pairs[1:])))
    return authserv, results


def _domain(value: str) -> str:
    """A property's domain: `example.org`, `@example.org` or `ana@example.org`, lower-cased."""
    return value.rpartition("@")[2].strip().rstrip(".").lower()


def aligned(signer: str, from_domain: str) -> bool:
    """Whether a DKIM signing domain speaks for the From domain: the same domain or a parent
    of it with at least two labels (`example.org` for `mail.example.org`; never
    `evil-example.org` for `example.org`, nor a bare top-level domain)."""
    signer, from_domain = _domain(signer), _domain(from_domain)
    if not signer or not from_domain:
        return False
    return signer == from_domain or ("." in signer and from_domain.endswith("." + signer))


def _proves(result: MethodResult, from_domain: str) -> bool:
    if result.result != "pass":
        return False
    if result.method == "dmarc":
        # Only for the domain it names: without `header.from` the pass may be another From's.
        claimed = _domain(result.props.get("header.from", ""))
        return bool(claimed) and claimed == _domain(from_domain)
    if result.method == "dkim":
        signer = result.props.get("header.d") or result.props.get("header.i", "")
        return aligned(signer, from_domain)
    return False


def _summary(results: list[MethodResult]) -> str:
    """`dmarc=fail dkim=pass (not aligned)`: what the server found, for the audit."""
    parts = []
    for method in ("dmarc", "dkim"):
        found = [r for r in results if r.method == method]
        if not found:
            parts.append(f"{method}=none")
        for result in found[:4]:
            unaligned = method == "dkim" and result.result == "pass"
            note = " (not aligned with the From domain)" if unaligned else ""
            if method == "dmarc" and result.result == "pass":
                named = bool(_domain(result.props.get("header.from", "")))
                note = " (for another domain)" if named else " (without header.from)"
            parts.append(f"{method}={result.result[:20]}{note}")
    return " ".join(parts)


def assurance_of(msg: Message, sender: Mailbox, authserv_id: str) -> tuple[Assurance, str]:
    """How far the receiving server vouches for `sender` (the mail's From), with why: proven
    ("mail_server"), checked and not proven ("refuted"), or not checkable ("unverified", when
    no authserv-id is configured)."""
    if not authserv_id:
        return "unverified", "no authserv_id configured"
    fields = [v for k, v in msg.raw_items() if k.strip().lower() == "authentication-results"]
    parsed = parse_results(str(fields[0])) if fields else None
    if parsed is None or parsed[0] != authserv_id:
        return "refuted", f"no Authentication-Results from {authserv_id} at the top"
    results = parsed[1]
    for result in results:
        if _proves(result, sender.domain):
            shown_keys = ("header.from", "header.d", "header.i")
            props = " ".join(f"{k}={v[:100]}" for k, v in result.props.items() if k in shown_keys)
            shown = f"{result.method}=pass {props}".strip()
            return "mail_server", f"{shown} ({authserv_id})"
    return "refuted", f"{_summary(results)} ({authserv_id})"
