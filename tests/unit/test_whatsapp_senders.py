"""Who a WhatsApp message is from, and whose words it carries, as the real neonize adapter reads
neonize's own protobufs and the channel hands the message on: only a phone-number JID (or a
LID's phone-number alternate) becomes a phone number, and a forward is flagged as one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omega.channels.whatsapp.channel import WhatsAppChannel
from omega.channels.whatsapp.client import Received, WaMessage
from omega.config import Config
from omega.turn.privileges import role_of
from omega.types import IncomingMessage
from tests.fakes.whatsapp_client import OWNER_NUMBER, FakeWhatsApp

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

BOT_JID = "351900000099@s.whatsapp.net"  # a bot-mode Omega's own number
CONFIG = Config.model_validate(
    {
        "auth": {"owners": [f"whatsapp:+{OWNER_NUMBER}"]},
        "channel": {
            "whatsapp": {"enabled": True, "mode": "bot", "allowed_users": [f"+{OWNER_NUMBER}"]}
        },
    }
)


def event(text_message: Any, sender: Any, alt: Any = None, ident: str = "M1") -> Any:
    """A neonize `Message` event: a direct message from `sender` (its chat is the sender)."""
    from neonize.proto import Neonize_pb2 as N

    source = N.MessageSource(Chat=sender, Sender=sender)
    if alt is not None:
        source.SenderAlt.CopyFrom(alt)
    info = N.MessageInfo(ID=ident, Pushname="Someone", MessageSource=source)
    return N.Message(Info=info, Message=text_message)


def read(message: Any, sender: Any = None, alt: Any = None) -> WaMessage:
    """What the real adapter makes of `message` from `sender` (the owner's number by default)."""
    from neonize.proto import Neonize_pb2 as N

    from omega.channels.whatsapp.neonize_client import convert

    sender = sender or N.JID(User=OWNER_NUMBER, Server="s.whatsapp.net")
    return convert(event(message, sender, alt))


@contextlib.asynccontextmanager
async def serving(client: FakeWhatsApp, tmp_path: Path) -> AsyncIterator[list[IncomingMessage]]:
    """A bot-mode channel over `client`, running; what it submits is collected."""
    channel = WhatsAppChannel(CONFIG.channel.whatsapp, client, tmp_path / "session")
    submitted: list[IncomingMessage] = []

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        submitted.append(message)
        accepted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        accepted.set_result(None)  # taken into the inbox at once
        return accepted

    running = asyncio.create_task(channel.run(submit))
    while not client.connected:  # the fake connects as soon as the channel runs
        await asyncio.sleep(0)
    try:
        yield submitted
    finally:
        await channel.stop()
        await running


@pytest.mark.parametrize(
    ("server", "integrator", "expected"),
    [
        ("interop", 7, f"7-{OWNER_NUMBER}@interop"),
        ("msgr", 0, f"{OWNER_NUMBER}@msgr"),
        ("hosted", 0, f"{OWNER_NUMBER}@hosted"),
        ("bot", 0, f"{OWNER_NUMBER}@bot"),
        ("lid", 0, f"{OWNER_NUMBER}@lid"),  # a LID with no number to it
    ],
)
async def test_a_sender_on_another_server_never_becomes_the_owners_number(
    tmp_path: Path, server: str, integrator: int, expected: str
) -> None:
    """A JID whose user part is the owner's number but whose server is not WhatsApp's phone
    number server (a third-party messenger, Messenger, a hosted or bot account) keeps its whole
    `user@server`: never the owner's id, never the owner's role."""
    from neonize.proto import Neonize_pb2 as N
    from neonize.proto.waE2E import WAWebProtobufsE2E_pb2 as E

    jid = N.JID(User=OWNER_NUMBER, Server=server, Integrator=integrator)
    message = read(E.Message(conversation="/status"), jid)
    assert message.sender == expected
    client = FakeWhatsApp(account=BOT_JID)
    async with serving(client, tmp_path) as submitted:
        await client.push(Received(message))
    (incoming,) = submitted
    assert incoming.sender_id == expected != OWNER_NUMBER
    assert role_of(CONFIG, incoming) != "owner"


async def test_the_owners_phone_number_jid_and_a_lids_number_are_still_the_owner(
    tmp_path: Path,
) -> None:
    from neonize.proto import Neonize_pb2 as N
    from neonize.proto.waE2E import WAWebProtobufsE2E_pb2 as E

    phone = N.JID(User=OWNER_NUMBER, Server="s.whatsapp.net")
    lid = N.JID(User="123456789012345", Server="lid", Device=2)
    text = E.Message(conversation="/status")
    client = FakeWhatsApp(account=BOT_JID)
    async with serving(client, tmp_path) as submitted:
        await client.push(Received(read(text, phone)))
        await client.push(Received(read(text, lid, alt=phone)))
    assert [m.sender_id for m in submitted] == [OWNER_NUMBER, OWNER_NUMBER]
    assert [role_of(CONFIG, m) for m in submitted] == ["owner", "owner"]


def test_an_interop_jid_goes_back_to_neonize_with_its_integrator() -> None:
    """A reply (or a notice) to an interop sender reaches the same user on the same network."""
    from neonize.proto import Neonize_pb2 as N

    from omega.channels.whatsapp.neonize_client import _jid_text, _to_jid

    interop = N.JID(User=OWNER_NUMBER, Server="interop", Integrator=7)
    back = _to_jid(_jid_text(interop))
    assert (back.User, back.Server, back.Integrator) == (OWNER_NUMBER, "interop", 7)
    group = _to_jid("351911111111-1500000000@g.us")  # an old group id keeps its dash
    assert (group.User, group.Server, group.Integrator) == ("351911111111-1500000000", "g.us", 0)


def test_a_forward_is_flagged_on_whichever_kind_of_message_carries_it() -> None:
    from neonize.proto.waE2E import WAWebProtobufsE2E_pb2 as E

    forwarded = E.ContextInfo(isForwarded=True, forwardingScore=1)
    text = E.Message(
        extendedTextMessage=E.ExtendedTextMessage(text="/pending", contextInfo=forwarded)
    )
    photo = E.Message(imageMessage=E.ImageMessage(caption="look", contextInfo=forwarded))
    passed_on = E.ContextInfo(forwardingScore=5)  # counted, the flag itself left out
    document = E.Message(documentMessage=E.DocumentMessage(caption="x", contextInfo=passed_on))
    assert [read(m).is_forwarded for m in (text, photo, document)] == [True, True, True]
    reply = E.ContextInfo(participant=f"{OWNER_NUMBER}@s.whatsapp.net")
    own = E.Message(extendedTextMessage=E.ExtendedTextMessage(text="mine", contextInfo=reply))
    plain = E.Message(conversation="mine too")
    assert [read(m).is_forwarded for m in (own, plain)] == [False, False]
