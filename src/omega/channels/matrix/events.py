"""Matrix message contents, read and written: whether a room message is addressed to Omega,
the thread it is in (and a reply sent into it), the reply fallback stripped, where a new
room's events start to be for Omega, Markdown sent as Matrix's HTML (`org.matrix.custom.html`)
with the plain text beside it, and transaction ids.

Pure functions on the JSON contents, so they are tested (and fuzzed) without a homeserver."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from omega.channels.telegram.format import render_html  # the same small tag set Matrix allows

HTML_FORMAT = "org.matrix.custom.html"
_PRE = re.compile(r"(<pre>.*?</pre>)", re.DOTALL)


def addressed(content: Mapping[str, object], user_id: str, display_name: str = "") -> bool:
    """Whether a room message mentions Omega: in `m.mentions`, as a pill linking to its id
    in the HTML, or by its id or display name in the text (a whole word, any case)."""
    mentions = content.get("m.mentions")
    if isinstance(mentions, Mapping):
        users = mentions.get("user_ids")
        if isinstance(users, list) and user_id in users:
            return True
    formatted = content.get("formatted_body")
    if isinstance(formatted, str) and (
        f"matrix.to/#/{user_id}" in formatted or f"matrix.to/#/{user_id}" in unquote(formatted)
    ):
        return True
    body = content.get("body")
    if not isinstance(body, str):
        return False
    names = [user_id, user_id.partition(":")[0]]  # @omega:example.org and @omega
    if display_name.strip():
        names.append(display_name.strip())
    return any(
        re.search(rf"(?<![\w@]){re.escape(name)}(?![\w:])", body, re.IGNORECASE) for name in names
    )


def thread_root(content: Mapping[str, object]) -> str:
    """The event id of the thread a message is in (`m.relates_to` of rel_type `m.thread`),
    "" when it is in none."""
    relation = content.get("m.relates_to")
    if not isinstance(relation, Mapping) or relation.get("rel_type") != "m.thread":
        return ""
    root = relation.get("event_id")
    if isinstance(root, str) and root.startswith("$") and not any(c.isspace() for c in root):
        return root
    return ""


def thread_target(room_id: str, root: str) -> str:
    """Where an answer goes: the room, or `<room id> <root event id>` inside a thread there
    (also the thread's key: a thread is a conversation of its own)."""
    return f"{room_id} {root}" if root else room_id


def parse_target(target: str) -> tuple[str, str]:
    """(room or person, thread root) of a reply target; the root "" outside a thread."""
    room, space, root = target.rpartition(" ")
    if space and root.startswith("$"):
        return room, root
    return target, ""


def in_thread(content: dict[str, object], root: str) -> dict[str, object]:
    """`content` as sent inside the thread `root` (as a reply to it for clients without
    threads), or unchanged outside one."""
    if not root:
        return content
    relation = {
        "rel_type": "m.thread",
        "event_id": root,
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": root},
    }
    return {**content, "m.relates_to": relation}


def strip_reply_fallback(body: str) -> str:
    """The text of a reply without the quoted lines ("> ...") clients put before it."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> <"):
        return body
    at = 0
    while at < len(lines) and lines[at].startswith(">"):
        at += 1
    return "\n".join(lines[at:]).lstrip("\n")


def matrix_html(telegram_html: str) -> str:
    """Telegram-style HTML (newlines as line breaks) as Matrix HTML, where newlines outside
    <pre> would be collapsed: each becomes <br>."""
    parts = _PRE.split(telegram_html)
    return "".join(
        part if part.startswith("<pre>") else part.replace("\n", "<br>") for part in parts
    )


def text_contents(pieces: list[str], notice: bool = False) -> list[dict[str, object]]:
    """The `m.room.message` contents that send `pieces` of Markdown (a long reply split), each
    with its plain text and its HTML; a code block split across pieces is closed and reopened."""
    contents: list[dict[str, object]] = []
    code: str | None = None
    for piece in pieces:
        rendered, code = render_html(piece, code)
        contents.append(
            {
                "msgtype": "m.notice" if notice else "m.text",
                "body": piece,
                "format": HTML_FORMAT,
                "formatted_body": matrix_html(rendered),
            }
        )
    return contents


def image_content(mxc: str, data: bytes, name: str, mime: str) -> dict[str, object]:
    """The `m.image` content for a picture uploaded as `mxc`."""
    return {
        "msgtype": "m.image",
        "body": name,
        "url": mxc,
        "info": {"mimetype": mime, "size": len(data)},
    }


def transaction_id(message_id: str, part: str) -> str:
    """The transaction id of one part of a message: the same for the same message re-sent."""
    if not message_id:
        return uuid.uuid4().hex
    return f"omega-{hashlib.sha256(message_id.encode()).hexdigest()[:32]}-{part}"


def since_invited(sources: list[Mapping[str, Any]], user_id: str) -> int | None:
    """Where the events of a room Omega has just joined start to be for it: after its
    invitation (what came before is the room's history), else after its join; None when the
    events are of a room joined earlier."""
    cut = None
    for index, source in enumerate(sources):
        if source.get("type") == "m.room.member" and source.get("state_key") == user_id:
            membership = (source.get("content") or {}).get("membership")
            before = ((source.get("unsigned") or {}).get("prev_content") or {}).get("membership")
            if membership == "invite" or (membership == "join" != before and cut is None):
                cut = index + 1  # a join after a join is a change of Omega's name or picture
    return cut
