"""Mail in and out: a received message as text, attachments and thread headers; a reply as
a MIME message that stays in the sender's thread. Pure functions over the standard library."""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import formatdate, getaddresses, parseaddr
from html.parser import HTMLParser
from typing import ClassVar

from omega.types import Attachment

__all__ = ["Received", "build_mail", "parse_mail", "reply_subject"]


@dataclass
class Received:
    """What Omega takes from one mail."""

    address: str  # the sender's address, lower-cased, without display name ("" if none)
    name: str  # the display name
    text: str  # the new text, quoted history removed
    subject: str
    message_id: str  # "<...>", "" when the mail had none
    references: list[str] = field(default_factory=list)  # the thread, oldest first
    attachments: list[Attachment] = field(default_factory=list)
    auto: bool = False  # an auto-reply, bounce or list mail: never answered


def parse_mail(raw: bytes) -> Received:
    """Read one RFC 5322 message (never raises on malformed mail: what is unreadable is left
    out)."""
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    name, address = parseaddr(str(msg.get("Reply-To") or msg.get("From") or ""))
    if not address:
        name, address = parseaddr(str(msg.get("From") or ""))
    references = _ids(str(msg.get("References") or ""))
    reply_to = _ids(str(msg.get("In-Reply-To") or ""))
    for ident in reply_to:
        if ident not in references:
            references.append(ident)
    text, attachments = _body(msg)
    return Received(
        address=address.strip().lower() if "@" in address else "",
        name=name.strip(),
        text=strip_quoted(text),
        subject=" ".join(str(msg.get("Subject") or "").split()),
        message_id=(_ids(str(msg.get("Message-ID") or "")) or [""])[0],
        references=references,
        attachments=attachments,
        auto=_automatic(msg),
    )


def _ids(header: str) -> list[str]:
    return re.findall(r"<[^<>\s]+>", header)


def _automatic(msg: EmailMessage) -> bool:
    """Mail no person wrote (RFC 3834 Auto-Submitted, bulk or list mail, bounces): answering
    it makes loops."""
    auto = str(msg.get("Auto-Submitted") or "no").strip().lower()
    precedence = str(msg.get("Precedence") or "").strip().lower()
    sender = parseaddr(str(msg.get("From") or ""))[1].lower()
    return (
        auto != "no"
        or precedence in {"bulk", "junk", "list"}
        or bool(msg.get("List-Id"))
        or sender.startswith(("mailer-daemon@", "postmaster@"))
    )


def _body(msg: EmailMessage) -> tuple[str, list[Attachment]]:
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


def _payload(part: EmailMessage) -> bytes:
    """The part's decoded bytes; b"" when its transfer encoding is broken beyond reading."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # the email package's decoders raise assorted errors on junk
        return b""
    return payload if isinstance(payload, bytes) else b""


def _decode(part: EmailMessage, payload: bytes) -> str:
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, "replace")
    except LookupError:  # an unknown charset name
        return payload.decode("utf-8", "replace")


def _attachment(part: EmailMessage, kind: str, payload: bytes) -> Attachment:
    major = kind.split("/")[0]
    category = major if major in ("image", "audio", "video") else "document"
    return Attachment(
        kind=category,  # type: ignore[arg-type]
        data=payload,
        name=str(part.get_filename() or ""),
        mime_type=kind,
    )


class _Text(HTMLParser):
    """HTML to plain text: block elements become line breaks, scripts and styles vanish."""

    BLOCKS: ClassVar[set[str]] = {
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag in self.BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.out.append(data)


def html_to_text(markup: str) -> str:
    """The readable text of an HTML mail body."""
    parser = _Text()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # HTMLParser is lenient; whatever it still raises leaves the raw text
        return html.unescape(re.sub(r"<[^>]*>", " ", markup))
    lines = [" ".join(line.split()) for line in "".join(parser.out).splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# The line a mail program writes above the history it quotes.
_ATTRIBUTION = re.compile(
    r"^(On .{1,200}wrote:|-----\s*Original Message\s*-----|From: .+|Le .{1,200}a écrit\s*:"
    r"|Am .{1,200}schrieb .{0,100}:|El .{1,200}escribió:|Em .{1,200}escreveu:)\s*$",
    re.IGNORECASE,
)


def strip_quoted(text: str) -> str:
    """The new text of a reply: everything from the quoted history (">" lines, an
    "On ... wrote:" line) and the signature ("-- ") down is removed."""
    lines = text.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        rest = [x for x in lines[index + 1 :] if x.strip()]
        if line.rstrip() == "--":  # the signature separator "-- "
            break
        if _ATTRIBUTION.match(line.strip()) and (not rest or rest[0].lstrip().startswith(">")):
            break
        if line.lstrip().startswith(">") and all(x.lstrip().startswith(">") for x in rest):
            break
        kept.append(line)
    return "\n".join(kept).strip()


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
