"""Who a message is from, for memory and for commands: its sender's person (identity links
followed only for a sender their channel proved), and whether that person's role may run a
command (a guest's command changes only a person no other channel id shares)."""

from __future__ import annotations

import dataclasses

from omega.memory.people import PREFIX
from omega.memory.store import Store
from omega.turn import OWNER_COMMANDS, PipelineDeps, Role, db_call, may_run_command
from omega.types import IncomingMessage

__all__ = [
    "NOT_FOR_GUESTS",
    "as_person",
    "command_refusal",
    "sender_fact",
    "shared_person",
    "unlinked_person",
]

# The answer to a command a guest may not run (one that is not the owner's): they are told
# where they wrote from, never a forger (a guest's replies go to the address they named).
NOT_FOR_GUESTS = (
    "I can't do that from here: this channel cannot prove who is writing. "
    "Ask me from a channel that can."
)


async def as_person(deps: PipelineDeps, message: IncomingMessage) -> IncomingMessage:
    """The message keyed by its sender's person (memory, tasks, folder), its channel id kept
    for rights and its replies still going to the channel id (identities, store.person_of).

    Identity links are followed for a verified sender only: one their channel cannot prove
    (anyone may write their From) stays a person of their own channel id, never the person a
    link joins it to (`unlinked_person`)."""
    if message.origin_id:
        return message
    if message.verified:
        person = await db_call(
            deps,
            "resolve identity",
            message.sender_id,
            deps.store.person_of,
            message.channel,
            message.sender_id,
        )
    else:
        person = await db_call(
            deps,
            "resolve identity",
            _scoped(message.channel, message.sender_id),  # fail closed: never a shared key
            unlinked_person,
            deps.store,
            message.channel,
            message.sender_id,
        )
    if person == message.sender_id:
        return message
    return dataclasses.replace(
        message, sender_id=person, origin_id=message.sender_id, reply_target=message.target
    )


def _scoped(channel: str, sender_id: str) -> str:
    """The channel-scoped key of a channel id (`channel:id`): a key that identities give that
    id alone (store.person_of); no other channel's id can be given it."""
    return f"{channel}{PREFIX}{sender_id}"


def shared_person(store: Store, person: str, channel: str, channel_id: str) -> bool:
    """Whether `person` is the person of a channel id other than `channel:channel_id` (an
    identity link joined them)."""
    rows = store.query(
        "SELECT 1 FROM identities WHERE person = ? AND NOT (channel = ? AND sender_id = ?) LIMIT 1",
        (person, channel, channel_id),
    )
    return bool(rows)


def unlinked_person(store: Store, channel: str, sender_id: str) -> str:
    """The person key of a sender their channel did not prove: their identity's own key
    while no other channel id shares it, else their channel-scoped key (`channel:id`; with
    `:unverified` after it when that is the shared key itself), which no link joined to anyone.
    A link made either way (this id to the owner, or the owner's id to this one) joins no
    unproven sender to the owner's memory."""
    return _unlinked(store, store.person_of(channel, sender_id), channel, sender_id)


def _unlinked(store: Store, person: str, channel: str, sender_id: str) -> str:
    """`unlinked_person` of a channel id whose identity's key is `person`."""
    if not shared_person(store, person, channel, sender_id):
        return person
    scoped = _scoped(channel, sender_id)
    return scoped if scoped != person else f"{scoped}{PREFIX}unverified"


def sender_fact(store: Store, message: IncomingMessage, key: str) -> str | None:
    """One fact of the person `as_person` keys `message`'s sender by, read before the pipeline
    keyed it (the "Got it" and notices in their language); None for a sender never seen. Never
    the facts of whoever's key this channel id merely spells (Telegram's "8" is person "8",
    so another channel's "8" is "<channel>:8"), nor a linked person's for a guest. Call on
    the store's thread."""
    if message.origin_id:  # keyed already
        return store.get_fact(message.sender_id, key)
    channel, sender_id = message.channel, message.sender_id
    person = store.known_person(channel, sender_id) or store.unrecorded_person(channel, sender_id)
    if person is None:
        return None
    if not message.verified:
        person = _unlinked(store, person, channel, sender_id)
    return store.get_fact(person, key)


async def command_refusal(
    deps: PipelineDeps, message: IncomingMessage, role: Role, name: str
) -> str | None:
    """Why `role` may not run /`name` (the audit's detail), None when they may. A guest's
    command changes only a person no other channel id shares (read now; unreadable: shared)."""
    shared = False
    if role == "guest":
        shared = await db_call(
            deps,
            "read whether the person is shared",
            True,
            shared_person,
            deps.store,
            message.sender_id,
            message.channel,
            message.channel_id,
        )
    if may_run_command(role, name, shared=shared):
        return None
    if role != "guest" or name in OWNER_COMMANDS:
        return f"/{name} is the owner's; role: {role}"
    if shared:
        return f"/{name} would change a person other channel ids share; role: guest (unverified)"
    return f"/{name} is not for a sender their channel cannot prove; role: guest (unverified)"
