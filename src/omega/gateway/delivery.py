"""The last stages of every answer: keep it with its inbox row, store, audit, send, mark done
(exactly-once delivery; the gateway re-sends a kept answer after a restart)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

from omega.gateway import attachments
from omega.turn import (
    Outbox,
    PipelineDeps,
    db_call,
    elapsed_ms,
    message_entry,
    usage_fields,
)
from omega.types import (
    IncomingMessage,
    OutgoingKind,
    OutgoingMessage,
    Reply,
)

log = logging.getLogger(__name__)

# The inbox rows send_stored marked done in the current answer (see `finished_rows`).
_FINISHED: ContextVar[set[str] | None] = ContextVar("omega_finished_rows", default=None)


async def send_stored(
    deps: PipelineDeps,
    message_id: str,
    out: Outbox,
    messages: list[OutgoingMessage],
    images: list[str],
) -> None:
    """Send an answer already stored with its inbox row: its messages, then its workspace
    images as photos (each removed once sent); then mark the message done at once.

    The gateway calls this too, on a restart, for an answer stored but not marked sent."""
    # Ids from the inbox row and the position: a re-send after a restart repeats them.
    number = 0
    for outgoing in messages:
        number += 1
        await out.send(
            dataclasses.replace(outgoing, id=f"{message_id}#{number}", reply_to=message_id)
        )
    target = messages[0] if messages else None
    for name in images:
        path = Path(name)
        try:
            # Beneath the workspace, no symlink at any step, one link: never Omega's files.
            data = await asyncio.to_thread(attachments.read_own_file, path, deps.paths.workspace)
        except OSError as exc:
            log.warning("could not read workspace image %s: %s", path, exc)
            continue
        if target is not None:
            number += 1
            await out.send(
                OutgoingMessage(
                    target.channel,
                    target.target,
                    path.name,
                    kind="photo",
                    photo=data,
                    id=f"{message_id}#{number}",
                    reply_to=message_id,
                )
            )
        attachments.cleanup([path], deps.paths.workspace)
    try:
        await deps.store.call(deps.store.inbox_finish, message_id)
    except Exception:
        log.exception("marking message %s answered failed; carrying on without it", message_id)
    else:
        if (rows := _FINISHED.get()) is not None:
            rows.add(message_id)


def finished_rows() -> set[str]:
    """Collect, from here on in this context, the inbox rows `send_stored` marks done (the
    caller then need not mark them again: one write fewer per message)."""
    rows: set[str] = set()
    _FINISHED.set(rows)
    return rows


async def deliver_answer(
    deps: PipelineDeps,
    message: IncomingMessage,
    out: Outbox,
    messages: list[OutgoingMessage],
    images: list[Path] | None = None,
) -> None:
    """Store the answer with the message's inbox row, then send it (`send_stored`)."""
    names = [str(path) for path in images or []]
    await db_call(
        deps, "store the reply", False, deps.store.inbox_store_reply, message.id, messages, names
    )
    await send_stored(deps, message.id, out, messages, names)


async def conclude(
    deps: PipelineDeps,
    message: IncomingMessage,
    out: Outbox,
    text: str,
    *,
    started: float,
    reply: Reply | None = None,
    event: str = "exchange",
    detail: str = "",
    kind: OutgoingKind = "reply",
    images_before: dict[Path, int] | None = None,
    folder: Path | None = None,
) -> None:
    """The last stages of every answer: keep it with the inbox row, store the exchange, audit
    it, send it with the workspace images the turn made, mark the message done.

    Exactly-once: provider, tools and markers have all run when the answer is kept, so a
    restart after this point re-sends the kept answer and runs none of them again. What is
    left: a stop while the provider or the markers are still at work (before the answer is
    kept) runs the turn again; a stop between sending and marking done (one database write)
    sends the answer twice; a stop after keeping it and before the exchange is stored leaves
    the exchange out of the history."""
    images: list[Path] = []
    if images_before is not None:
        # The person's own folder, compared with its snapshot from the start of the turn.
        after = await asyncio.to_thread(attachments.snapshot_images, folder or deps.paths.workspace)
        images = attachments.new_images(images_before, after)
    answer = [message.answer(text, kind)]
    names = [str(path) for path in images]
    entry = message_entry(
        message,
        output_text=text,
        **usage_fields(reply, provider=deps.provider.name),
        status="ok",
        event=event,
        processing_ms=elapsed_ms(started),
        detail=detail[:2000],
    )
    store = deps.store
    parts: tuple[tuple[str, Callable[[], object]], ...] = (
        ("store the reply", lambda: store.inbox_store_reply(message.id, answer, names)),
        (
            "store exchange",
            lambda: store.store_exchange(
                message.channel,
                message.sender_id,
                message.text,
                text,
                message.conversation,
                room=message.is_group,
            ),
        ),
        ("audit", lambda: store.audit(entry)),
    )

    def keep() -> None:
        with store.transaction():  # one commit: no history without its kept answer, and back
            for _, write in parts:
                write()

    try:
        await store.call(keep)
    except Exception:  # each part on its own, as far as each goes
        log.exception("keeping the answer to %s failed; writing its parts one by one", message.id)
        for what, write in parts:
            await db_call(deps, what, None, write)
    await send_stored(deps, message.id, out, answer, names)
