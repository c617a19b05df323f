"""What every incoming message passes before it is stored: clean text, the allow-list, size
limits.

Runs in the gateway, before the durable inbox, for every channel: lone surrogates are replaced
(so the message can be stored, audited and answered), a sender not allowed (`refusal`: the
config's allow-list and memory.db's grants, read for this very message) is denied (`deny`, the
one deny path: nothing of theirs is kept, or under dm_policy = "pairing" a one-time code, see
gateway/strangers.py), a text longer than `[limits] max_message_chars`
is cut, and attachments bigger than `max_attachment_bytes` are refused. What was cut or refused
is reported as notices for the sender.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from omega.config.safety import LimitsSection
from omega.gateway.strangers import offer_pairing
from omega.memory.access import GrantRole
from omega.memory.audit import AuditEntry
from omega.text import scrub
from omega.turn import Outbox, PipelineDeps, check_auth, granted_role, tells_strangers
from omega.types import IncomingMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Notice:
    """Something the sender must be told about their message (an i18n key and its values)."""

    key: str
    values: dict[str, object]


def human_size(size: int) -> str:
    """A byte count as people read it: 512 bytes, 3.4 KB, 12.0 MB."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def clean(message: IncomingMessage) -> IncomingMessage:
    """The message with lone surrogates replaced in every text field a channel filled."""
    text, sender_id = scrub(message.text), scrub(message.sender_id)
    sender_name, reply_target = scrub(message.sender_name), scrub(message.reply_target)
    message_id = scrub(message.id)
    if (text, sender_id, sender_name, reply_target, message_id) == (
        message.text,
        message.sender_id,
        message.sender_name,
        message.reply_target,
        message.id,
    ):
        return message
    return dataclasses.replace(
        message,
        text=text,
        sender_id=sender_id,
        sender_name=sender_name,
        reply_target=reply_target,
        id=message_id,
    )


def within_limits(
    message: IncomingMessage, limits: LimitsSection
) -> tuple[IncomingMessage, list[Notice]]:
    """Cut the text to `max_message_chars` and drop attachments over `max_attachment_bytes`;
    return the message as it will be stored and the notices for the sender."""
    notices: list[Notice] = []
    text = message.text
    if len(text) > limits.max_message_chars:
        notices.append(
            Notice("message_cut", {"kept": limits.max_message_chars, "total": len(text)})
        )
        text = text[: limits.max_message_chars]
    kept = []
    for attachment in message.attachments:
        if len(attachment.data) > limits.max_attachment_bytes:
            name = scrub(attachment.name)[:80] or attachment.kind
            notices.append(
                Notice(
                    "attachment_refused",
                    {
                        "name": repr(name),
                        "size": human_size(len(attachment.data)),
                        "limit": human_size(limits.max_attachment_bytes),
                    },
                )
            )
            continue
        kept.append(attachment)
    if not notices:
        return message, notices
    return dataclasses.replace(message, text=text, attachments=kept), notices


async def refusal(deps: PipelineDeps, message: IncomingMessage) -> str | None:
    """Why the sender may not talk to Omega (None: they may), from the config and the grants
    memory.db holds now (so a revocation holds from the next message)."""
    return (await admission(deps, message))[0]


async def admission(
    deps: PipelineDeps, message: IncomingMessage
) -> tuple[str | None, GrantRole | None]:
    """`refusal`, and the role memory.db grants the sender, read once for both (the caller's
    next steps reuse it rather than read it again)."""
    granted = await granted_role(deps.store, message)
    return check_auth(deps.config, message, granted), granted


async def deny(deps: PipelineDeps, message: IncomingMessage, reason: str, out: Outbox) -> None:
    """Answer and audit a sender who is not allowed, at most once per
    `[limits] denial_every_secs` (kept in memory.db, so a restart does not answer again).
    Nothing of the message is kept: the audit row names the sender and the reason, never
    their text. Where the channel pairs (dm_policy = "pairing") a stranger in a direct chat
    gets a pairing code instead when one may be given (gateway/strangers.py); else the denial
    says why not, and one the channel did not prove is not answered at all."""
    no_code = await offer_pairing(deps, message, out)
    if no_code is None:
        return
    if no_code.why:
        reason = f"{reason}; {no_code.why}"
    store = deps.store
    every = deps.config.limits.denial_every_secs
    try:
        due, dropped = await store.call(store.denial_due, message.channel, message.sender_id, every)
    except Exception:  # without the record, silence: a stranger must not cost a reply
        log.exception("could not check the denial record of %s", message.sender_id)
        return
    if not due:
        log.info("dropped a message from %s/%s (denied)", message.channel, message.sender_id)
        return
    log.warning("denied %s/%s: %s", message.channel, message.sender_id, reason)
    detail = reason
    if dropped:
        detail += f"; {dropped} more message(s) dropped since the last denial"
    try:
        await store.call(
            store.audit,
            AuditEntry(
                channel=message.channel,
                sender_id=message.sender_id[:200],
                sender_name=message.sender_name[:100],
                status="denied",
                event="denied",
                detail=detail,
            ),
        )
    except Exception:
        log.exception("could not audit the denial of %s", message.sender_id)
    if no_code.silent or not tells_strangers(deps.config, message.channel):
        return  # refused in silence (audited above): a refusal would be noise, or misdirected
    await out.send(message.answer(deps.config.auth.deny_message, "denied", tag="denied"))
