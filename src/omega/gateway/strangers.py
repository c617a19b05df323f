"""What a stranger gets under dm_policy = "pairing", and what the owner does with their code.

A stranger who writes in a direct chat, and whom their channel proved (`message.verified`:
a code is never sent to an address anyone can claim, such as a mail's unproven From), gets
one short message with a one-time code and the owner is alerted; everything of the stranger
the owner sees (id and name as `omega.text.literal`, first words as `quote_untrusted`) is
quoted as data, never an instruction. The owner, who knows the person, asks them for the code
and enters it on any surface (`omega people approve|deny`, /approve_person, /deny_person, the
web page's People page), all through `enter_code`.
An approved person is told through their channel by `tell_approved`, run at once by in-process
surfaces and every few seconds by the service (for the CLI, another process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from omega import i18n
from omega.gateway.language import detect_language
from omega.memory.pairing import PairingRequest, Resolution
from omega.memory.store import Store
from omega.owner import owner_alert
from omega.text import literal, quote_untrusted
from omega.turn import Outbox, PipelineDeps, dm_policy
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)
TELL_EVERY_SECS = 2.0  # how soon a person approved from the CLI hears it


def utc_clock() -> datetime:
    """Now, for pairing (one place a test moves the clock)."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class NoCode:
    """Why a stranger got no pairing code, for the denial that follows: `why` joins the
    audited reason ("" when the channel does not pair them), `silent` holds back the deny
    message too (a sender their channel did not prove gets nothing at all)."""

    why: str = ""
    silent: bool = False


async def offer_pairing(deps: PipelineDeps, message: IncomingMessage, out: Outbox) -> NoCode | None:
    """Answer a stranger with a pairing code when their channel pairs, they write in a direct
    chat and their channel proved who they are. None: answered here (a code, or a reminder
    that theirs waits); else why they get no code (then they are denied, see `NoCode`)."""
    if message.is_group or dm_policy(deps.config, message.channel) != "pairing":
        return NoCode()
    if not message.verified:
        detail = f" ({message.assurance_detail})" if message.assurance_detail else ""
        return NoCode(
            f"no pairing code: the sender is {message.assurance}{detail}, and a code goes only "
            "to a sender their channel proved",
            silent=True,
        )
    store = deps.store
    try:
        offer = await store.call(
            store.pairing_offer,
            message.channel,
            message.channel_id,
            message.target,
            message.sender_name,
            message.text,
            utc_clock(),
            deps.config.limits.max_pairing_codes_per_channel_per_day,
        )
    except Exception:  # without the record, silence: a stranger must not cost a reply
        log.exception("could not record a pairing request of %s", literal(message.channel_id))
        return None
    if offer.outcome in ("limited", "full", "capped"):
        log.warning("no pairing code for %s", who(message.channel, message.channel_id))
        return NoCode(f"no pairing code: {offer.why}")
    language = detect_language(message.text)
    if offer.outcome == "waiting":
        every = deps.config.limits.denial_every_secs
        due, _ = await store.call(store.denial_due, message.channel, message.channel_id, every)
        if due:
            await out.send(message.answer(i18n.message("pairing_waiting", language), "denied"))
        return None
    log.warning("pairing code issued to %s", who(message.channel, message.channel_id))
    text = i18n.message("pairing_code", language, code=offer.code)
    await out.send(message.answer(text, "denied", tag="pairing"))
    if offer.request is not None:
        await out.send(owner_alert(describe_request(offer.request, "asks to talk to you")))
    return None


def who(channel: str, sender_id: str, sender_name: str = "") -> str:
    """A stranger as the owner reads them: `channel:"id"`, and `named "name"` when their
    channel gave one (both quoted literals: nothing in them reads as Omega's words)."""
    named = f" named {literal(sender_name, 60)}" if sender_name else ""
    return f"{channel}:{literal(sender_id)}{named}"


def describe_request(request: PairingRequest, what: str) -> str:
    """One request as the owner reads it: channel, id, name, first words (quoted), expiry."""
    words = quote_untrusted(request.first_words, "their first words", 100)
    expires = request.expires_at.strftime("%H:%M UTC")
    return (
        f"🔐 {who(request.channel, request.sender_id, request.sender_name)} {what}: {words}. "
        "If you know them, ask for their code and send /approve_person CODE (or /deny_person "
        f"CODE) before {expires}."
    )


def pending_lines(requests: list[PairingRequest]) -> list[str]:
    """The waiting requests, one line each, for the CLI and /pending."""
    lines = []
    for request in requests:
        name = literal(request.sender_name, 60) if request.sender_name else "-"
        words = quote_untrusted(request.first_words, "first words", 100)
        lines.append(
            f"{request.channel}:{literal(request.sender_id)}  {name}  {words}  "
            f"expires {request.expires_at.strftime('%Y-%m-%d %H:%M UTC')}"
        )
    return lines


_REFUSALS = {
    "malformed": "that is not a pairing code (8 letters and digits)",
    "wrong": "no request has that code",
    "expired": "that code has expired; they can write again for a new one",
    "used": "that code was already used",
    "limited": "too many wrong codes lately; wait 15 minutes",
}


def enter_code(store: Store, text: str, approve: bool, actor: str) -> tuple[bool, str]:
    """Approve or deny the request whose code is `text`, as `actor` ("cli", "web",
    "channel:id"); return whether it was done and what to tell the owner. Runs on the
    database thread (or with the store to itself)."""
    result: Resolution = store.pairing_resolve(text, approve, actor, utc_clock())
    request = result.request
    if result.outcome == "approved" and request is not None:
        return True, (
            f"Approved: {who(request.channel, request.sender_id)} may talk to me now (role "
            "person); they will be told."
        )
    if result.outcome == "denied" and request is not None:
        return True, f"Denied: {who(request.channel, request.sender_id)} (no new code for a day)."
    return False, f"Not done: {_REFUSALS[result.outcome]}."


async def tell_approved(deps: PipelineDeps, out: Outbox) -> int:
    """Tell every approved person not told yet, through their channel; return how many."""
    store = deps.store
    told = await store.call(store.pairing_untold, utc_clock())
    for request in told:
        text = i18n.message("pairing_approved", "English")
        await out.send(OutgoingMessage(request.channel, request.reply_target, text, kind="notice"))
        log.info("told %s they were approved", who(request.channel, request.sender_id))
    return len(told)


async def tell_approved_loop(deps: PipelineDeps, out: Outbox, stop: asyncio.Event) -> None:
    """`tell_approved` every TELL_EVERY_SECS until `stop` (approvals made by the CLI)."""
    while not stop.is_set():
        try:
            await tell_approved(deps, out)
        except Exception:
            log.exception("telling approved people failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), TELL_EVERY_SECS)
