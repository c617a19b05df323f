"""Which Slack events are for Omega, and what they become: pure functions over the Events
API's JSON (no I/O), so they are tested alone.

A message's inbox id is `slack:<team>:<channel>:<ts>`: Slack's `ts` is unique within a
channel, and a retried delivery (`retry_attempt` > 0), the `message` event that accompanies an
`app_mention`, and a re-delivery after a restart all carry the same one, so the durable inbox
answers each message once. A reply target is the channel id, or `<channel>:<thread_ts>` for a
message answered inside a thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The message subtypes that are a person writing; edits, deletions, joins, bot posts are not.
PERSON_SUBTYPES = frozenset({"", "file_share", "thread_broadcast"})
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#([A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!([a-z]+)(?:\^[^|>]*)?(?:\|([^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")


@dataclass(frozen=True)
class Addressed:
    """A Slack message Omega should answer, as the channel hands it on."""

    inbox_id: str
    user: str
    text: str  # plain text: mentions, links and escapes of mrkdwn undone, Omega's mention removed
    is_group: bool
    reply_target: str
    thread: tuple[str, str] | None  # (channel, thread root ts) to follow, for channel messages
    files: tuple[dict[str, object], ...]


def inbox_id(team: str, channel: str, ts: str) -> str:
    """The durable inbox's id for the message `ts` of `channel` in workspace `team`."""
    return f"slack:{team}:{channel}:{ts}"


def reply_target(channel: str, thread_ts: str = "") -> str:
    """Where an answer goes: the channel, in the thread `thread_ts` when there is one."""
    return f"{channel}:{thread_ts}" if thread_ts else channel


def conversation_thread(target: str) -> str:
    """The conversation a message answered at `target` belongs to: its thread
    (`<channel>:<thread_ts>`, a conversation of its own), or "" for a direct chat itself."""
    return target if parse_target(target)[1] else ""


def parse_target(target: str) -> tuple[str, str]:
    """(channel, thread_ts) of a reply target; thread_ts "" for the channel itself."""
    channel, _, thread_ts = target.partition(":")
    return channel, thread_ts


def plain_text(text: str, bot_user_id: str = "") -> str:
    """Slack's message text as a person reads it: `<@U1>` as @U1 (Omega's own mention
    removed), `<#C1|general>` as #general, `<url|label>` as "label (url)", escapes undone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>\s?", "", text)
    text = _MENTION.sub(lambda m: f"@{m.group(1)}", text)
    text = _CHANNEL.sub(lambda m: f"#{m.group(2) or m.group(1)}", text)
    text = _SPECIAL.sub(lambda m: f"@{m.group(2) or m.group(1)}", text)

    def link(match: re.Match[str]) -> str:
        url, label = match.group(1), match.group(2)
        return f"{label} ({url})" if label and label != url else url

    text = _LINK.sub(link, text)
    # Slack escapes only these three; `&amp;` last, so "&amp;lt;" stays the text "&lt;".
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def _mentions(text: str, bot_user_id: str) -> bool:
    return any(m.group(1) == bot_user_id for m in _MENTION.finditer(text))


def addressed(
    event: dict[str, object],
    team: str,
    bot_user_id: str,
    followed: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
) -> Addressed | None:
    """The message an Events API `message` or `app_mention` event carries when it is for
    Omega: every direct message, and in channels a mention of Omega or (with `followed`) a
    message in a thread Omega follows; None otherwise (bots, Omega itself, edits, joins,
    channel chatter)."""
    kind = event.get("type")
    user, channel, ts = (str(event.get(key) or "") for key in ("user", "channel", "ts"))
    subtype = str(event.get("subtype") or "")
    if kind not in ("message", "app_mention") or not (user and channel and ts):
        return None
    if event.get("bot_id") or user == bot_user_id or subtype not in PERSON_SUBTYPES:
        return None
    text = str(event.get("text") or "")
    thread_ts = str(event.get("thread_ts") or "")
    channel_type = str(event.get("channel_type") or "")
    direct = channel_type == "im" or (not channel_type and channel.startswith("D"))
    raw_files = event.get("files")
    files = (
        tuple(f for f in raw_files if isinstance(f, dict)) if isinstance(raw_files, list) else ()
    )
    if direct:
        return Addressed(
            inbox_id(team, channel, ts),
            user,
            plain_text(text, bot_user_id),
            False,
            reply_target(channel, thread_ts),
            None,
            files,
        )
    root = thread_ts or ts
    if not (
        kind == "app_mention"
        or _mentions(text, bot_user_id)
        or (thread_ts and (channel, thread_ts) in followed)
    ):
        return None
    return Addressed(
        inbox_id(team, channel, ts),
        user,
        plain_text(text, bot_user_id),
        True,
        reply_target(channel, root),
        (channel, root),
        files,
    )
