"""The messages and values that flow between channels, the gateway and providers."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "system"]
# What a person may do through a provider's own tools (Claude Code's Bash, Write, Edit...):
# "full" runs commands and writes files (confined by the OS sandbox), "read_only" only reads.
ToolAccess = Literal["full", "read_only"]
OutgoingKind = Literal[
    "reply",
    "ack",
    "status",
    "alert",
    "reminder",
    "error",
    "photo",
    "welcome",
    "command",
    "denied",
    "notice",  # the sender's message was cut, or an attachment refused (limits)
]
# How a message Omega sends unasked passes the notification gate (gateway/notify.py): "urgent"
# (a self-healing escalation, a security alert, the spending cap) always goes out; "normal"
# (owner alerts, proposals, reminders) and "low" (digests, heartbeat findings) wait out the
# person's quiet hours and count against their daily cap. Answers to a message ignore it.
Priority = Literal["urgent", "normal", "low"]


# How a channel knows who sent a message (ARCHITECTURE §12a). Only the first three prove the
# sender; owner rights, owner commands and tools need one of them (turn.privileges).
#   "platform":    the platform authenticated the account (Telegram, WhatsApp, Slack, Discord,
#                  Matrix: its homeserver signs for its users);
#   "mail_server": the receiving mail server's DMARC or aligned-DKIM pass, read from the
#                  topmost Authentication-Results of the authserv-id the owner configured;
#   "local":       the person at this machine (the terminal) or the web page's login;
#   "stored":      Omega's own record of a sender proven when the record was made (a
#                  scheduled task firing with its creator's kept role);
#   "unverified":  the channel cannot prove the sender (e-mail without a trusted authserv-id,
#                  a plug-in that does not say): allowed people may talk, without tools;
#   "refuted":     the channel checked and the check failed (a forged From): a stranger.
Assurance = Literal["platform", "mail_server", "local", "stored", "unverified", "refuted"]
VERIFIED: frozenset[str] = frozenset({"platform", "mail_server", "local", "stored"})
# The conversation of a group message whose channel names no room (no reply target): still
# apart from the direct chat.
GROUP_WITHOUT_ROOM = "group"


@dataclass(frozen=True)
class Attachment:
    """A file that came with a message; `name` is untrusted and never used as a path."""

    kind: Literal["image", "document", "audio", "video"]
    data: bytes
    name: str = ""
    mime_type: str = ""


@dataclass
class IncomingMessage:
    """One message from a person on some channel."""

    channel: str
    sender_id: str
    text: str
    sender_name: str = ""
    is_group: bool = False
    reply_target: str = ""
    attachments: list[Attachment] = field(default_factory=list)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    received_at: float = field(default_factory=time.time)
    # The channel's own id of the sender when `sender_id` was replaced by their person key
    # (memory is keyed by person; allow-lists and ownership by the channel id).
    origin_id: str = ""
    # The thread this message belongs to when the channel keeps threads as conversations of
    # their own (a Slack, Matrix or mail thread): the channel's key of it. "" for the chat
    # itself. History, /new and the conversation's summary follow `conversation`, which is
    # this thread, else the room of a group message; the person stays the same.
    thread: str = ""
    # How the channel knows the sender (see Assurance): "unverified" unless the channel says,
    # so a channel that does not prove its senders never lends anyone the owner's rights.
    assurance: Assurance = "unverified"
    assurance_detail: str = ""  # why, for the audit ("dmarc=fail from mx.example.org")

    @property
    def verified(self) -> bool:
        """Whether the channel proved who sent this message."""
        return self.assurance in VERIFIED

    @property
    def conversation(self) -> str:
        """The channel's key of the conversation this message is part of, beside its person:
        its thread; else for a group message the room it was written in (its reply target),
        so a direct chat and a room are never one conversation; "" for the direct chat."""
        if self.thread:
            return self.thread
        if self.is_group:
            return self.reply_target or GROUP_WITHOUT_ROOM
        return ""

    @property
    def target(self) -> str:
        """Where replies go: the explicit reply target, else the sender."""
        return self.reply_target or self.sender_id

    @property
    def channel_id(self) -> str:
        """The sender's id on their channel (what allow-lists and `[auth] owners` name)."""
        return self.origin_id or self.sender_id

    def answer(self, text: str, kind: OutgoingKind = "reply", *, tag: str = "") -> OutgoingMessage:
        """A message back to wherever this one's replies go, naming this message as the one
        it answers, with a stable id `<this id>#<tag>` (the same when it is sent again).
        Without `tag`, the tag is its kind and a digest of its text, so every object of a
        turn has an id that a receiver can drop a repeat by."""
        if not tag:
            digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:8]
            tag = f"{kind}-{digest}"
        return OutgoingMessage(
            self.channel, self.target, text, kind=kind, id=f"{self.id}#{tag}", reply_to=self.id
        )


@dataclass(frozen=True)
class OutgoingMessage:
    """One message Omega sends."""

    channel: str
    target: str
    text: str
    kind: OutgoingKind = "reply"
    photo: bytes | None = None
    # A stable id (the same when a kept answer is re-sent after a crash) and the incoming
    # message's id it answers, so a receiver can drop duplicates; "" when not about one.
    id: str = ""
    reply_to: str = ""
    priority: Priority = "normal"  # for the notification gate, when it is sent unasked


@dataclass(frozen=True)
class ChatMessage:
    """One turn of history given to a provider."""

    role: Role
    content: str


@dataclass(frozen=True)
class McpServer:
    """An MCP server (stdio) a skill needs for a call: the command that starts it."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ImageInput:
    """An image the person sent, for providers whose model can see images."""

    data: bytes
    mime_type: str


@dataclass
class Context:
    """Everything a provider needs for one completion."""

    system_prompt: str
    messages: list[ChatMessage]
    model: str | None = None
    max_tokens: int | None = None
    sender_id: str = ""
    channel: str = ""
    # The message's conversation (IncomingMessage.conversation): its thread, or its room.
    thread: str = ""
    # Answering in a group room: what memory recalls (searched messages, summaries) stays
    # inside this conversation, so nothing said in private reaches a room.
    group: bool = False
    mcp_servers: tuple[McpServer, ...] = ()  # attached for this call (matching skills)
    # Tools only where a person is being answered (replies, plan steps, action tasks) who may
    # call one: every background call (planning, summaries, facts, heartbeat, introspection,
    # analysis) has none, nor has a guest's answer (turn_context).
    use_tools: bool = False
    # Which tools this person may call (None: all of them, for the owner); see
    # turn.privileges. Non-owners get no shell and no writes unless configured.
    allowed_tools: frozenset[str] | None = None
    # The folder this person's tools work in ("" : Omega's workspace, the owner's).
    workspace: str = ""
    # The privilege of the person answered: "read_only" keeps a provider's own tools to reading
    # (no Bash, no writes). The privilege model sets it for people who are not the owner.
    tool_access: ToolAccess = "full"
    # Images attached to the latest user message (their saved paths are in its text too).
    images: tuple[ImageInput, ...] = ()
    # The leading part of system_prompt that stays byte-identical across this person's turns
    # while nothing changes (rules, platform, markers, sandbox); providers that cache prompts
    # mark it. "" when unknown: the whole prompt is then one piece.
    stable_prefix: str = ""
    # Earlier conversations whose summary or messages memory put in system_prompt: what they
    # read (a page, a tool's result) is in this prompt too (turn.earlier_reads).
    recalled_from: tuple[str, ...] = ()

    @property
    def prompt(self) -> str:
        """The latest user message."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ""


@dataclass(frozen=True)
class Usage:
    """Token counts and cost of one completion (cost in USD, None when unknown)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    # Of input_tokens, those the provider read from its prompt cache (the stable prefix).
    cached_tokens: int = 0


@dataclass(frozen=True)
class ToolCall:
    """One tool call a provider made while answering (recorded in the tool_calls table)."""

    name: str
    arguments: dict[str, Any]
    ok: bool
    result_preview: str = ""
    duration_ms: int = 0
    error: str = ""


@dataclass(frozen=True)
class Reply:
    """A provider's answer."""

    text: str
    provider: str
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    tool_calls: tuple[ToolCall, ...] = ()
    session_id: str | None = None
    elapsed_ms: int = 0
