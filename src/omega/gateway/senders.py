"""Each sender's messages, one at a time and strictly in order, each by a worker of its own.

A new message is claimed at once for its sender's worker, unless an earlier one of theirs is
still being answered (here or by another replica: then it waits, acknowledged) or, beside
other replicas, this one already answers its share (peers.py: then it is left to the fleet's
polls). A claimed message is taken up unless it stopped Omega MAX_ATTEMPTS times (set aside)
or its sender is no longer let in; it is answered (answering.py) with its claim renewed, and
the future its submission returned is settled once it is handled completely."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from omega import i18n
from omega.gateway import ingress
from omega.gateway.answering import answer
from omega.gateway.claims import Claims
from omega.gateway.language import detect_language
from omega.gateway.peers import Peers
from omega.gateway.persons import sender_fact
from omega.memory import Claim
from omega.owner import owner_alert
from omega.turn import Outbox, PipelineDeps
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

SenderKey = tuple[str, str]
MAX_ATTEMPTS = 3  # a message that brought Omega down this often is set aside
# What answers a message: once one is out, a next message of the sender's is not acknowledged.
ANSWERS = frozenset({"reply", "command", "error", "denied"})


async def sender_language(deps: PipelineDeps, message: IncomingMessage) -> str:
    """The sender's language: remembered, else guessed from this very message."""
    store = deps.store
    try:
        # The sender's person: `message` is not keyed by it yet (gateway.persons.as_person).
        known = await store.call(sender_fact, store, message, "preferred_language")
    except Exception:
        known = None
    return known or detect_language(message.text)


class Senders:
    """The sender queues and their workers, and the futures of the messages accepted here.

    `out` is where answers, acknowledgements and denials go (the gateway)."""

    def __init__(self, deps: PipelineDeps, claims: Claims, peers: Peers, out: Outbox) -> None:
        self.deps = deps
        self.claims = claims
        self.peers = peers
        self.out = out
        self.workers: dict[SenderKey, asyncio.Task[None]] = {}
        self.in_flight: set[str] = set()  # ids being handled now
        self._queues: dict[SenderKey, deque[IncomingMessage]] = {}
        self._handled: dict[str, asyncio.Future[None]] = {}
        self._interrupted: list[str] = []  # ids whose handling was cancelled part-way
        # Ids being handled whose answer has gone out (what follows is bookkeeping): a next
        # message of that sender's is not told "Got it, I'll get to this next".
        self._answered: set[str] = set()
        self._in_hand: dict[SenderKey, str] = {}  # each sender's message being handled now
        self.progress = asyncio.Event()  # set each time a message is done with (shutdown.py)

    def expect(self, message_id: str, handled: asyncio.Future[None]) -> None:
        """Settle `handled` once the message accepted here is handled completely."""
        self._handled[message_id] = handled

    def expected(self, message_id: str) -> bool:
        """Whether a message of this id was accepted here and is still tracked."""
        return message_id in self._handled

    async def dispatch(self, message: IncomingMessage, durable: bool) -> None:
        """Claim the sender's next message at once (this one, unless an earlier one of theirs
        is still being answered here or by another replica: then it waits, acknowledged).

        With other replicas alive, a replica already handling its share leaves a new sender's
        message to the fleet: the one receiving a channel (Telegram's poller) would otherwise
        answer every message itself, and more replicas would add nothing. A message that is
        not `durable` (not in the inbox) is handled here, unclaimed."""
        key = (message.channel, message.sender_id)
        busy = key in self.workers
        shared_out = False
        if durable and not busy and self.peers.alive and self.load() >= self.peers.share:
            shared_out = True  # claimed by whichever replica polls first (this one too)
        elif durable:
            await self.take_all(await self.claims.claim(1, key))
        else:  # not in the inbox: handled here, unclaimed
            self._enqueue(message)
        # Judged after the claim: meanwhile the sender's worker (claiming their next message as
        # it finished the last) or the poll may have taken this very message up here.
        if self._taken_here(key, message.id):
            waits = self._ahead(key, message.id)
        else:  # held elsewhere: behind a message of theirs another replica answers
            waits = not shared_out and (not busy or self._ahead(key, message.id))
        if waits and await self._should_acknowledge(message):
            language = await sender_language(self.deps, message)
            await self.out.send(
                message.answer(i18n.message("busy_ack", language), "ack", tag="ack")
            )

    def _taken_here(self, key: SenderKey, message_id: str) -> bool:
        """Whether this replica took the message up: queued, in hand, or already handled
        (its future, set when it was accepted, settled)."""
        if self._in_hand.get(key) == message_id or message_id not in self._handled:
            return True
        return any(queued.id == message_id for queued in self._queues.get(key, ()))

    def _ahead(self, key: SenderKey, message_id: str) -> bool:
        """Whether an earlier message of the sender's is still unanswered here: the one in
        hand, or one queued before `message_id`."""
        in_hand = self._in_hand.get(key)
        if in_hand == message_id:
            return False
        if in_hand is not None and in_hand not in self._answered:
            return True
        queue = self._queues.get(key)
        return queue is not None and bool(queue) and queue[0].id != message_id

    async def _should_acknowledge(self, message: IncomingMessage) -> bool:
        """A queued message gets "Got it" unless it is a command (its answer is the
        acknowledgement) or the sender has not been welcomed yet (the welcome comes first)."""
        if message.text.lstrip().startswith("/"):
            return False
        store = self.deps.store
        try:
            welcomed = await store.call(sender_fact, store, message, "welcomed")
        except Exception:
            return True
        return welcomed is not None

    def note_sent(self, message: OutgoingMessage) -> None:
        """A channel took `message`: when it answers a message in hand, what follows for that
        message is bookkeeping (its sender's next one is not acknowledged)."""
        if message.kind in ANSWERS and message.reply_to in self.in_flight:
            self._answered.add(message.reply_to)

    async def take_all(self, claims: list[Claim]) -> list[str]:
        """`_take` each claimed message; the ids queued. One that fails stays claimed until
        its lease runs out, then it is claimed again (logged, never lost)."""
        taken = []
        for claim in claims:
            try:
                if await self._take(claim):
                    taken.append(claim.message.id)
            except Exception:
                log.exception("could not take up claimed message %s", claim.message.id)
        return taken

    async def _take(self, claim: Claim) -> bool:
        """Handle a message this replica claimed: queue it for its sender's worker, unless it
        stopped Omega MAX_ATTEMPTS times (set aside) or, received elsewhere or by an earlier
        run, its sender is no longer let in. True when it was queued."""
        message = claim.message
        if claim.attempts >= MAX_ATTEMPTS:
            await self._give_up(message)
        elif message.id not in self._handled and (
            denial := await ingress.refusal(self.deps, message)
        ):  # kept by an older Omega, or the allow-list changed: not handled
            await self.deps.store.call(self.deps.store.inbox_finish, message.id)
            await ingress.deny(self.deps, message, denial, self.out)
        else:
            self._enqueue(message)
            return True
        self.claims.settled(message.id)
        return False

    async def _give_up(self, message: IncomingMessage) -> None:
        """Set aside a message that stopped Omega MAX_ATTEMPTS times: failed, its sender told,
        the owner alerted (otherwise it would be replayed forever)."""
        reason = f"Omega stopped while handling it {MAX_ATTEMPTS} times"
        log.error("message %s from %s given up: %s", message.id, message.sender_id, reason)
        await self.deps.store.call(self.deps.store.inbox_finish, message.id, reason)
        language = await sender_language(self.deps, message)
        await self.out.send(message.answer(i18n.message("error_poison", language), "error"))
        await self.out.send(
            owner_alert(
                f"⚠️ A message from {message.channel}:{message.sender_id} stopped Omega "
                f"{MAX_ATTEMPTS} times and was set aside: {message.text[:200]!r}"
            )
        )

    def _enqueue(self, message: IncomingMessage) -> None:
        key = (message.channel, message.sender_id)
        self._queues.setdefault(key, deque()).append(message)
        if key not in self.workers:
            self.workers[key] = asyncio.create_task(self._serve_sender(key), name=f"sender:{key}")

    async def _serve_sender(self, key: SenderKey) -> None:
        queue = self._queues[key]
        try:
            while queue:
                message = queue.popleft()
                self._in_hand[key] = message.id
                try:
                    await self._handle(message)
                except asyncio.CancelledError:  # stopped mid-answer: it stays in the inbox
                    self._interrupted.append(message.id)
                    raise
                finally:
                    self._in_hand.pop(key, None)
                    self._answered.discard(message.id)
                    handled = self._handled.pop(message.id, None)
                    if handled is not None and not handled.done():
                        handled.set_result(None)
                    self.progress.set()
                await self._claim_next(key)
        finally:
            self.workers.pop(key, None)
            self._queues.pop(key, None)

    async def _claim_next(self, key: SenderKey) -> None:
        """Claim the sender's next message, if any (at once: no wait for the poll)."""
        while claims := await self.claims.claim(1, key):
            if await self.take_all(claims):
                return

    async def _handle(self, message: IncomingMessage) -> None:
        """One message through the pipeline (its claim renewed meanwhile), then its inbox row
        settled; skipped when another replica took the claim over."""
        held = message.id in self.claims.held
        try:
            if held:
                if await self.claims.start(message.id) is None:
                    log.warning("message %s was taken over by another replica", message.id)
                    self.claims.settled(message.id)
                    return
            else:
                await self.deps.store.call(self.deps.store.inbox_begin, message.id)
        except Exception:
            log.exception("could not count the attempt at message %s", message.id)
        self.in_flight.add(message.id)
        try:
            with self.claims.kept(message.id) if held else contextlib.nullcontext():
                await answer(self.deps, message, self.out)
        finally:
            self.in_flight.discard(message.id)
            self.claims.settled(message.id)

    def load(self) -> int:
        """Messages this replica is answering or has queued."""
        return len(self.in_flight) + sum(len(queue) for queue in self._queues.values())

    async def settle_elsewhere(self) -> None:
        """Settle the futures of messages accepted here that another replica answered."""
        queued = {m.id for queue in self._queues.values() for m in queue}
        local = self.claims.held | self.in_flight | queued
        waiting = [i for i, h in self._handled.items() if not h.done() and i not in local]
        if not waiting:
            return
        store = self.deps.store
        for message_id in await store.call(store.inbox_settled, waiting):
            handled = self._handled.pop(message_id, None)
            if handled is not None and not handled.done():
                handled.set_result(None)

    def unfinished(self) -> list[str]:
        """The ids of accepted messages not yet handled completely (buffered or in flight)."""
        waiting = [mid for mid, handled in self._handled.items() if not handled.done()]
        return list(dict.fromkeys([*self._interrupted, *waiting]))

    async def unanswered(self) -> list[str]:
        """Of the unfinished messages, those whose answer has not been sent (still pending in
        the inbox); work after a sent answer (analysis, introspection) does not count."""
        ids = self.unfinished()
        if not ids:
            return []
        store = self.deps.store
        try:
            pending = {message.id for message in await store.call(store.inbox_pending)}
        except Exception:
            return ids
        return [mid for mid in ids if mid in pending]

    async def drain(self) -> None:
        """Wait until every buffered and in-flight message is answered."""
        while self.workers:
            await asyncio.gather(*list(self.workers.values()), return_exceptions=True)
