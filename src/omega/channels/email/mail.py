"""Mail in and out: a received message as its sender (identity.py, authres.py), text,
attachments and thread headers; a reply as a MIME message that stays in the sender's thread.
Pure functions over the standard library.

A received mail is parsed with the `compat32` policy: the structure only, in linear time once
limits.py's caps hold; the few headers Omega reads are read here, strictly, instead of by the
`email.headerregistry` parser, whose cost some hostile headers make quadratic (or deeper
than the recursion limit).

A mail with two of a field that a DKIM signature may cover and that Omega reads or a reader
trusts (Subject, Message-ID, In-Reply-To, References, To, Cc, Date, Reply-To, Sender; From in
identity.py) is refused unread: a verifier checks the bottom-most instance of a signed field,
so a field added above a replayed, signed mail would keep `dkim=pass` while a reader of the
topmost one reads the addition (RFC 6376 §5.4.2).

Who a mail is addressed to (To, Cc) and when it was written (Date) are read too: a proven mail
is proof for Omega only when it was sent to Omega, and only once (replay.py)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from email import policy
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import formatdate, getaddresses, mktime_tz, parsedate_tz

from omega.channels.email.authres import assurance_of
from omega.channels.email.identity import addresses_in, sender_of
from omega.channels.email.limits import Refusal, after_parsing, before_parsing
from omega.channels.email.text import html_to_text, strip_quoted
from omega.types import Assurance, Attachment

__all__ = ["SINGLE_FIELDS", "Received", "Thread", "build_mail", "parse_mail", "reply_subject"]

MAX_SUBJECT_CHARS = 998  # RFC 5322's line length: longer subjects are cut
MAX_REFERENCES = 50  # the newest ids of a thread kept from References/In-Reply-To
MAX_ID_CHARS = 998
MAX_DATE_CHARS = 200  # a longer Date field is unreadable
# Fields a mail may hold at most once (RFC 5322 §3.6); a mail with two of one is refused before
# any of them is read (a second Sender already by identity.sender_of).
SINGLE_FIELDS = (
    "Subject",
    "Message-ID",
    "In-Reply-To",
    "References",
    "To",
    "Cc",
    "Date",
    "Reply-To",
    "Sender",
)


@dataclass
class Received:
    """What Omega takes from one mail."""

    address: str  # the sender's From address, NFKC and case-folded ("" when refused)
    name: str  # the display name
    text: str  # the new text, quoted history removed
    subject: str
    message_id: str  # "<...>", "" when the mail had none
    references: list[str] = field(default_factory=list)  # the thread, oldest first
    attachments: list[Attachment] = field(default_factory=list)
    auto: bool = False  # an auto-reply, bounce or list mail: never answered
    # How the receiving server vouched for the From, and why (authres.py).
    assurance: Assurance = "unverified"
    assurance_detail: str = ""
    # The addresses its To and Cc fields name (folded), and when its Date says it was written
    # (POSIX seconds; None when it has no readable Date): replay.py's checks of a proven mail.
    recipients: tuple[str, ...] = ()
    sent: float | None = None
    # Why the mail is refused unread (past a cap, no single plain From, a repeated field):
    # never submitted.
    refusal: Refusal | None = None


def _refused(refusal: Refusal) -> Received:
    return Received("", "", "", "", "", refusal=refusal)


def parse_mail(raw: bytes, authserv_id: str = "") -> Received:
    """Read one RFC 5322 message: its caps first (limits.py), then its sender and how the
    mail server `authserv_id` vouches for it, then its text and attachments. Never raises on
    malformed mail: what is unreadable is left out, a mail without a readable sender or past a
    cap comes back with `refusal` set and nothing else."""
    refusal = before_parsing(raw)
    if refusal is not None:
        return _refused(refusal)
    msg = BytesParser(policy=policy.compat32).parsebytes(raw)
    refusal = after_parsing(msg)
    if refusal is not None:
        return _refused(refusal)
    sender = sender_of(msg)
    if isinstance(sender, Refusal):
        return _refused(sender)
    refusal = _repeated_field(msg)
    if refusal is not None:
        return _refused(refusal)
    assurance, detail = assurance_of(msg, sender, authserv_id)
    references = _ids(_raw(msg, "References"))
    for ident in _ids(_raw(msg, "In-Reply-To")):
        if ident not in references:
            references.append(ident)
    text, attachments = _body(msg)
    return Received(
        address=sender.address,
        name=sender.name[:200],
        text=strip_quoted(text),
        subject=" ".join(_decoded(_raw(msg, "Subject")[:4000]).split())[:MAX_SUBJECT_CHARS],
        message_id=(_ids(_raw(msg, "Message-ID")) or [""])[0],
        references=references[-MAX_REFERENCES:],
        attachments=attachments,
        auto=_automatic(msg, sender.address),
        assurance=assurance,
        assurance_detail=detail,
        recipients=(*addresses_in(_raw(msg, "To")), *addresses_in(_raw(msg, "Cc"))),
        sent=_date(_raw(msg, "Date")),
    )


def _repeated_field(msg: Message) -> Refusal | None:
    """Why the mail is refused when it holds one of SINGLE_FIELDS more than once; None when
    each is there at most once."""
    counts: dict[str, int] = {}
    for key, _ in msg.raw_items():
        name = key.strip().lower()
        counts[name] = counts.get(name, 0) + 1
    for field_name in SINGLE_FIELDS:
        if counts.get(field_name.lower(), 0) > 1:
            return Refusal("field_repeated", f"the mail has more than one {field_name} field")
    return None


def _raw(msg: Message, name: str) -> str:
    """The first `name` field's value as written, unfolded ("" when there is none); a field in
    SINGLE_FIELDS is there once at most by now (`_repeated_field`)."""
    wanted = name.lower()
    for key, value in msg.raw_items():
        if key.strip().lower() == wanted:
            return re.sub(r"\r?\n(?=[ \t])", "", str(value)).strip()
    return ""


def _date(value: str) -> float | None:
    """A Date field as POSIX seconds (a zone left out is read as UTC); None when there is none
    or it is unreadable."""
    if not value or len(value) > MAX_DATE_CHARS:
        return None
    try:
        parsed = parsedate_tz(value)
        if parsed is None:
            return None
        return float(mktime_tz((*parsed[:9], parsed[9] or 0)))
    except Exception:  # the email package raises assorted errors on junk dates
        return None


def _from_8bit(text: str) -> str:
    """Raw 8-bit header bytes (kept by the parser as surrogates) read as UTF-8."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate no byte stands for
        return text.encode("utf-8", "replace").decode("utf-8")


def _decoded(value: str) -> str:
    """A header value with its RFC 2047 encoded words decoded (broken ones kept as written)."""
    value = _from_8bit(value)
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except Exception:  # the email package raises assorted errors on broken encoded words
        return value


def _ids(header: str) -> list[str]:
    return [x for x in re.findall(r"<[^<>\s]+>", header) if len(x) <= MAX_ID_CHARS]


def _automatic(msg: Message, sender: str) -> bool:
    """Mail no person wrote (RFC 3834 Auto-Submitted, bulk or list mail, bounces): answering
    it makes loops."""
    auto = (_raw(msg, "Auto-Submitted") or "no").lower()
    precedence = _raw(msg, "Precedence").lower()
    return (
        auto != "no"
        or precedence in {"bulk", "junk", "list"}
        or bool(_raw(msg, "List-Id"))
        or sender.startswith(("mailer-daemon@", "postmaster@"))
    )


def _body(msg: Message) -> tuple[str, list[Attachment]]:
    plain: list[str] = []
    htmls: list[str] = []
    attachments: list[Attachment] = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        disposition = part.get_content_disposition()
        payload = _payload(part)
        if disposition == "attachment" or (disposition == "inline" and part.get_filename()):
            attachments.append(_attachment(part, kind, payload))
        elif kind == "text/plain":
            plain.append(_decode(part, payload))
        elif kind == "text/html":
            htmls.append(_decode(part, payload))
        elif not kind.startswith(("text/", "multipart/", "message/")):
            attachments.append(_attachment(part, kind, payload))
    if plain:
        return "\n".join(plain), attachments
    return "\n".join(html_to_text(x) for x in htmls), attachments


def _payload(part: Message) -> bytes:
    """The part's decoded bytes; b"" when its transfer encoding is broken beyond reading."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # the email package's decoders raise assorted errors on junk
        return b""
    return payload if isinstance(payload, bytes) else b""


def _decode(part: Message, payload: bytes) -> str:
    try:
        charset = part.get_content_charset() or "utf-8"
        return payload.decode(charset, "replace")
    except (LookupError, ValueError):  # an unknown or unusable charset name
        return payload.decode("utf-8", "replace")


def _filename(part: Message) -> str:
    try:
        name = part.get_filename()
    except Exception:  # a malformed RFC 2231 parameter
        return ""
    return _decoded(str(name))[:255] if name else ""


def _attachment(part: Message, kind: str, payload: bytes) -> Attachment:
    major = kind.split("/")[0]
    category = major if major in ("image", "audio", "video") else "document"
    return Attachment(
        kind=category,  # type: ignore[arg-type]
        data=payload,
        name=_filename(part),
        mime_type=kind,
    )


def reply_subject(subject: str) -> str:
    """`Re: <subject>`, without stacking prefixes."""
    subject = subject.strip()
    if re.match(r"^(re|aw|sv|vs)\s*:", subject, re.IGNORECASE):
        return subject
    return f"Re: {subject}" if subject else "Re:"


def _photo_type(data: bytes) -> tuple[str, str, str]:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image", "png", "photo.png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image", "jpeg", "photo.jpg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image", "gif", "photo.gif"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image", "webp", "photo.webp"
    return "application", "octet-stream", "file.bin"


@dataclass(frozen=True)
class Thread:
    """The mail a reply answers: its Message-ID, the thread before it, its subject."""

    message_id: str = ""
    references: tuple[str, ...] = ()
    subject: str = ""


def build_mail(
    sender: str,
    to: str,
    text: str,
    thread: Thread,
    *,
    stable_id: str = "",
    default_subject: str = "A message from Omega",
    photo: bytes | None = None,
) -> EmailMessage:
    """A plain-text mail to `to`, in `thread` when it answers one (In-Reply-To, References,
    "Re:" subject), with `photo` as an attachment. A `stable_id` gives a stable Message-ID, so
    a mail re-sent after a crash is recognisably the same one."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = reply_subject(thread.subject) if thread.message_id else default_subject
    mail["Date"] = formatdate(usegmt=True)
    domain = (getaddresses([sender])[0][1].partition("@")[2] or "omega.invalid").strip()
    seed = stable_id or f"{to}\0{text}\0{mail['Date']}"
    mail["Message-ID"] = f"<omega.{hashlib.sha256(seed.encode()).hexdigest()[:32]}@{domain}>"
    mail["Auto-Submitted"] = "auto-replied" if thread.message_id else "auto-generated"
    if thread.message_id:
        mail["In-Reply-To"] = thread.message_id
        mail["References"] = " ".join([*thread.references, thread.message_id][-20:])
    mail.set_content(text or " ")
    if photo:
        major, minor, name = _photo_type(photo)
        mail.add_attachment(photo, maintype=major, subtype=minor, filename=name)
    return mail
