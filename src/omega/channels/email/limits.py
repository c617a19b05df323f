"""The caps a mail must fit before (and right after) it is parsed, so one hostile mail costs
linear time and bounded memory: its size, its lines, its MIME containers, then its headers and
its nesting. A mail past a cap is refused whole (never partly read): the channel audits it,
marks it \\Seen and moves its cursor past it, so it is never fetched or parsed again.

The standard library's parser is linear in lines but each MIME container adds a boundary
check to every line below it, and its parameter parsing (`Content-Type: a; b; c`) is
quadratic in a header's semicolons: those are bounded here before the parser runs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import Message

MAX_BYTES = 10 * 1024 * 1024  # a whole mail, attachments included (fetched at most +1 byte)
MAX_LINES = 200_000  # lines of the whole mail
MAX_CONTAINERS = 50  # multipart/* and message/* parts declared anywhere (an upper bound)
MAX_PARAMS = 64  # semicolons in one Content-Type or Content-Disposition header
MAX_HEADERS = 500  # header fields, summed over the mail and its parts
MAX_HEADER_CHARS = 64_000  # one header field, unfolded
MAX_DEPTH = 10  # MIME nesting below the mail itself
MAX_PARTS = 500  # MIME parts, containers included

# The header lines that make the parser open a container, and those whose parameters it parses.
_CONTAINER = re.compile(rb"(?im)^content-type:\s*(?:multipart|message)/")
_PARAM_HEADER = re.compile(rb"(?im)^content-(?:type|disposition):[^\n]*(?:\n[ \t][^\n]*)*")


@dataclass(frozen=True)
class Refusal:
    """Why a mail is refused without being read: a short code (the audit's rate-limit key)
    and a sentence for the audit row, which never quotes the mail."""

    code: str
    detail: str


def before_parsing(raw: bytes) -> Refusal | None:
    """The cap `raw` is past, checked in linear time before any parsing; None when it fits."""
    if len(raw) > MAX_BYTES:
        return Refusal("size", f"larger than {MAX_BYTES} bytes")
    lines = raw.count(b"\n") + 1
    if lines > MAX_LINES:
        return Refusal("lines", f"{lines} lines, more than {MAX_LINES}")
    lowered = raw.lower()  # ASCII-only: the same length, so offsets agree
    containers = sum(1 for _ in _CONTAINER.finditer(lowered))
    if containers > MAX_CONTAINERS:
        return Refusal("containers", f"more than {MAX_CONTAINERS} MIME containers")
    for match in _PARAM_HEADER.finditer(lowered):
        if match.group().count(b";") > MAX_PARAMS:
            return Refusal("params", f"a Content header with more than {MAX_PARAMS} parameters")
    return None


def after_parsing(msg: Message) -> Refusal | None:
    """The cap the parsed structure is past (headers, their length, parts, depth), checked
    before any header is interpreted; None when it fits."""
    headers = parts = 0
    stack: list[tuple[Message, int]] = [(msg, 0)]
    while stack:
        part, depth = stack.pop()
        parts += 1
        if parts > MAX_PARTS:
            return Refusal("parts", f"more than {MAX_PARTS} MIME parts")
        if depth > MAX_DEPTH:
            return Refusal("depth", f"MIME nesting deeper than {MAX_DEPTH}")
        items = list(part.raw_items())
        headers += len(items)
        if headers > MAX_HEADERS:
            return Refusal("headers", f"more than {MAX_HEADERS} header fields")
        if any(len(value) > MAX_HEADER_CHARS for _, value in items):
            return Refusal("header_size", f"a header field longer than {MAX_HEADER_CHARS}")
        payload = part.get_payload()
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload if isinstance(child, Message))
    return None
