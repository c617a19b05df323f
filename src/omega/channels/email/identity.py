"""Who a mail is from: its one `From:` mailbox, read strictly (docs/channels/email.md: who is
speaking).

The sender is the address in `From:` and nothing else: `Reply-To:` never names the speaker nor
where the answer goes, and a `Sender:` that names someone else makes the mail unreadable (a
mail sent on behalf of another is not that other's). Anything a lenient parser would guess at
is refused rather than guessed: comments, a second address, groups, text around the angle
brackets (`<owner@x>mallory@evil`), quoted local parts, domain literals, and any address that
is not plain ASCII after NFKC and case folding (a Kelvin sign `K` folds to `k`: a look-alike
of someone else's address). Every function here is linear in its input and never raises.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from email.header import decode_header, make_header
from email.message import Message

from omega.channels.email.limits import Refusal

MAX_FROM_CHARS = 2_000  # a From: field longer than this is refused
MAX_ADDRESS_CHARS = 254  # RFC 5321's longest path

_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
ADDR_SPEC = re.compile(rf"{_ATEXT}+(?:\.{_ATEXT}+)*@{_LABEL}(?:\.{_LABEL})*")
# What a display name may hold outside its quoted strings: atoms, dots (obs-phrase), spaces,
# and 8-bit text (a name some mail programs write in raw UTF-8).
_PHRASE = re.compile(rf"(?:{_ATEXT}|[.\t ]|[^\x00-\x7f])*")
_FOLD = re.compile(r"\r?\n(?=[ \t])")


@dataclass(frozen=True)
class Mailbox:
    """One strictly read mailbox: its address (ASCII, NFKC and case-folded) and display name."""

    address: str
    name: str = ""

    @property
    def domain(self) -> str:
        """The address's domain."""
        return self.address.rpartition("@")[2]


def _split_quoted(value: str) -> tuple[str, list[str]] | None:
    """`value` with each quoted string replaced by `"` and the strings' contents; None when a
    quote is left open or a backslash stands outside quotes."""
    outside: list[str] = []
    quoted: list[str] = []
    current: list[str] = []
    in_quote = escaped = False
    for char in value:
        if in_quote:
            if escaped:
                current.append(char)
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_quote = False
                quoted.append("".join(current))
                current = []
            else:
                current.append(char)
        elif char == '"':
            in_quote = True
            outside.append('"')
        elif char == "\\":
            return None
        else:
            outside.append(char)
    if in_quote:
        return None
    return "".join(outside), quoted


def _address(spec: str) -> str | Refusal:
    """The normalised address of an addr-spec, or why it is refused."""
    if len(spec) > MAX_ADDRESS_CHARS or ADDR_SPEC.fullmatch(spec) is None:
        if not spec.isascii():
            return Refusal("non_ascii", "the From address is not plain ASCII (a look-alike?)")
        return Refusal("from_address", "the From address is not a plain user@domain")
    folded = unicodedata.normalize("NFKC", spec).casefold()
    if not folded.isascii() or ADDR_SPEC.fullmatch(folded) is None:
        return Refusal("non_ascii", "the From address is not plain ASCII (a look-alike?)")
    return folded


def _display(name: str) -> str:
    """A display name with its RFC 2047 encoded words decoded (undecodable ones kept) and
    raw 8-bit text read as UTF-8."""
    try:
        name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()
    except UnicodeEncodeError:  # a lone surrogate no byte stands for
        name = name.encode("utf-8", "replace").decode("utf-8").strip()
    if "=?" not in name:
        return name
    try:
        return str(make_header(decode_header(name)))
    except Exception:  # a broken encoded word: shown as written
        return name


def parse_mailbox(value: str) -> Mailbox | Refusal:
    """Exactly one mailbox (`user@domain`, `Name <user@domain>`, `"Name" <user@domain>`) from
    a raw header value, or why it is not one."""
    if len(value) > MAX_FROM_CHARS:
        return Refusal("from_long", f"the From field is longer than {MAX_FROM_CHARS}")
    split = _split_quoted(_FOLD.sub("", value).strip())
    if split is None:
        return Refusal("from_quote", "the From field has an open quote or a stray backslash")
    outside, quoted = split
    if "(" in outside or ")" in outside:
        return Refusal("from_comment", "the From field has a comment")
    if "," in outside:
        return Refusal("from_list", "the From field has more than one address")
    if ":" in outside or ";" in outside:
        return Refusal("from_group", "the From field is a group")
    opens, closes = outside.count("<"), outside.count(">")
    if opens == 0 and closes == 0:
        if quoted:
            return Refusal("from_quote", "the From address has a quoted local part")
        found = _address(outside.strip())
        return found if isinstance(found, Refusal) else Mailbox(found)
    if opens != 1 or closes != 1:
        return Refusal("from_list", "the From field has more than one address")
    before, _, rest = outside.partition("<")
    spec, _, after = rest.partition(">")
    if after.strip():
        return Refusal("from_trailing", "the From field has text after its address")
    if _PHRASE.fullmatch(before.replace('"', "")) is None:
        return Refusal("from_phrase", "the From display name is not a plain phrase")
    found = _address(spec)
    if isinstance(found, Refusal):
        return found
    pieces = iter(quoted)
    name = "".join(next(pieces, "") if char == '"' else char for char in before)
    return Mailbox(found, _display(name))


def sender_of(msg: Message) -> Mailbox | Refusal:
    """The mail's one `From:` mailbox, or why it has none: no From, several From fields, a
    From that is not one plain mailbox, or a `Sender:` naming another address."""
    froms = [value for name, value in msg.raw_items() if name.strip().lower() == "from"]
    if not froms:
        return Refusal("no_from", "the mail has no From field")
    if len(froms) > 1:
        return Refusal("from_many", "the mail has more than one From field")
    found = parse_mailbox(str(froms[0]))
    if isinstance(found, Refusal):
        return found
    senders = [value for name, value in msg.raw_items() if name.strip().lower() == "sender"]
    if len(senders) > 1:
        return Refusal("sender", "the mail has more than one Sender field")
    if senders:
        sender = parse_mailbox(str(senders[0]))
        if isinstance(sender, Refusal) or sender.address != found.address:
            return Refusal("sender", "the Sender field names someone other than From")
    return found


def addresses_in(value: str) -> list[str]:
    """The addresses an address-list field (To, Cc) names, NFKC and case-folded, in order:
    quoted display names and comments are left out, and what is not a plain `user@domain` is
    skipped (never guessed at). Linear in `value`; never raises."""
    kept: list[str] = []
    depth = 0
    in_quote = escaped = False
    for char in _FOLD.sub("", value):
        if escaped:
            escaped = False
        elif in_quote or depth:
            if char == "\\":
                escaped = True
            elif in_quote:
                in_quote = char != '"'
            elif char in "()":
                depth += 1 if char == "(" else -1
        elif char in '"(':
            in_quote, depth = char == '"', int(char == "(")
            kept.append(" ")
        else:
            kept.append(char)
    found = []
    for token in re.split(r"[\s<>,;:]+", "".join(kept)):
        if 0 < len(token) <= MAX_ADDRESS_CHARS and ADDR_SPEC.fullmatch(token):
            found.append(unicodedata.normalize("NFKC", token).casefold())
    return found
