"""The gateway: admits, persists and dispatches messages (one sender at a time) and delivers
the replies, on the channels and when the composition root (omega.app) tells it to serve.

One module because admission, per-sender dispatch, delivery (owner routes; the notification
gate and the hourly collapse are in notify.py and collapse.py) and the inbox replay share one
state (the channels, the sender queues and workers, the handled futures, this replica's claims)
and one contract: every accepted message is answered exactly once, by whichever replica
claimed it (omega.gateway.claims).
Building the service, its background jobs and its start/stop order live in omega.app."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import getpass
import logging
import math
from collections import deque
from collections.abc import Callable, Sequence

from omega import i18n
from omega.channels.base import Channel, PairingChannel
from omega.gateway import ingress
from omega.gateway.claims import Claims
from omega.gateway.collapse import AlertCollapse
from omega.gateway.delivery import send_stored
from omega.gateway.language import detect_language
from omega.gateway.notify import NotificationGate
from omega.gateway.pipeline import handle_message
from omega.logs import redact, redact_known
from omega.memory import Claim
from omega.memory.wakeups import INBOX, wait_for
from omega.owner import OWNER, owner_addresses, owner_alert
from omega.text import scrub
from omega.turn import PipelineDeps, granted_role, is_owner
from omega.types import IncomingMessage, OutgoingKind, OutgoingMessage

log = logging.getLogger(__name__)

PEERS_CHECK_SECS = 5.0  # how often the poll loop looks at which replicas are alive
POLL_BATCH = 16  # what one poll claims at most

SenderKey = tuple[str, str]
MAX_ATTEMPTS = 3  # a message that brought Omega down this often is set aside
# What answers a message: once one is out, a next message of the sender's is not acknowledged.
ANSWERS = frozenset({"reply", "command", "error", "denied"})


# What Omega itself writes (errors, progress, alerts, notices): every credential shape is
# hidden. What the model or a person wrote (replies, reminders, commands' listings of what a
# person said): only the configured secrets, so ordinary text is never mangled.
_FULLY_REDACTED: frozenset[str] = frozenset({"error", "status", "alert", "denied", "notice", "ack"})


def _redacted(message: OutgoingMessage) -> OutgoingMessage:
    """The message as it may leave Omega: no configured secret, no credential in errors, no
    lone surrogate (which would make the channel fail and the message be lost)."""
    target = scrub(message.target)
    text = scrub(message.text)
    if message.kind != "photo":
        text = redact(text) if message.kind in _FULLY_REDACTED else redact_known(text)
    if text == message.text and target == message.target:
        return message
    return dataclasses.replace(message, text=text, target=target)


def _kind(value: str) -> OutgoingKind:
    return "status" if value == "status" else "alert"


class Gateway:
    """Connects channels to the pipeline.

    Different senders are answered concurrently; one sender's messages strictly in order,
    later ones buffered (and acknowledged) while one is in flight. Every message is in the
    durable inbox before it is processed and marked finished after its reply is sent. A
    message is handled by the replica that claimed it: the one that received it claims it at
    once; the others look every `[omega] inbox_poll_secs` for what no live replica holds.
    """

    def __init__(self, deps: PipelineDeps, channels: Sequence[Channel]) -> None:
        self.deps = deps
        self.channels = {channel.name: channel for channel in channels}
        self._queues: dict[SenderKey, deque[IncomingMessage]] = {}
        self._workers: dict[SenderKey, asyncio.Task[None]] = {}
        self._handled: dict[str, asyncio.Future[None]] = {}
        self._interrupted: list[str] = []  # ids whose handling was cancelled part-way
        self._in_flight: set[str] = set()  # ids being handled now
        # Ids being handled whose answer has gone out (what follows is bookkeeping): a next
        # message of that sender's is not told "Got it, I'll get to this next".
        self._answered: set[str] = set()
        self._in_hand: dict[SenderKey, str] = {}  # each sender's message being handled now
        self._peers_alive = False  # other replicas share this database (see _dispatch)
        # With other replicas alive, a replica answering this many messages leaves a new
        # sender's message to the fleet's polls instead of claiming it at once (alone, it
        # claims everything): half of what it may ask of its provider at once.
        self._share = max(1, deps.config.limits.max_concurrent_provider_calls // 2)
        self._peers_checked = -PEERS_CHECK_SECS
        self.claims = Claims(deps.store, self.channels, deps.config.omega.inbox_lease_secs)
        self.collapse = AlertCollapse(lambda: self.deps.config.limits, self.send)
        self.notify = NotificationGate(deps, self._release, self.owner_routes_now)
        deps.state.tell_owner = self.send  # the spending cap's alert (turn.spend)
        for channel in channels:
            if isinstance(channel, PairingChannel):
                channel.attach(self.send)
                deps.state.pairing[channel.name] = channel

    async def submit(self, message: IncomingMessage) -> asyncio.Future[None]:
        """Accept a new message from a channel: admit it, persist it, then dispatch it.

        A sender who is not allowed costs nothing: nothing of the message is stored or
        acknowledged, and they are answered (and audited) at most once per
        `[limits] denial_every_secs`. A message whose id is already in the inbox (pending or
        handled) is not handled again. The returned future resolves once the message has been
        handled completely (at once for those two)."""
        handled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        message = ingress.clean(message)
        denial = await ingress.refusal(self.deps, message)
        if denial:
            await ingress.deny(self.deps, message, denial, self)
            handled.set_result(None)
            return handled
        message, notices = ingress.within_limits(message, self.deps.config.limits)
        durable = True
        try:
            new = await self.deps.store.call(
                self.deps.store.inbox_put, message, self.claims.replica
            )
        except Exception:  # still answer; the log says the message was not durable
            log.exception("could not persist incoming message %s", message.id)
            new = message.id not in self._handled
            durable = False
        if not new:
            log.warning("message %s was received before; not handled twice", message.id)
            handled.set_result(None)
            return handled
        self._handled[message.id] = handled
        if notices:
            language = await self._language(message)
            for number, notice in enumerate(notices, 1):
                await self.send(
                    message.answer(
                        i18n.message(notice.key, language, **notice.values),
                        "notice",
                        tag=f"notice-{number}",
                    )
                )
        await self._dispatch(message, durable)
        # The owner is here (by the config or memory.db's grants): give them what was kept.
        granted = await granted_role(self.deps.store, message)
        if is_owner(self.deps.config, message, granted):
            try:
                await self.flush_owner_alerts()
            except Exception:
                log.exception("delivering kept owner alerts failed")
        return handled

    async def _dispatch(self, message: IncomingMessage, durable: bool) -> None:
        """Claim the sender's next message at once (this one, unless an earlier one of theirs
        is still being answered here or by another replica: then it waits, acknowledged).

        With other replicas alive, a replica already handling its share leaves a new sender's
        message to the fleet: the one receiving a channel (Telegram's poller) would otherwise
        answer every message itself, and more replicas would add nothing."""
        key = (message.channel, message.sender_id)
        busy = key in self._workers
        still_answering = busy and self._still_answering(key)
        shared_out = False
        if durable and not busy and self._peers_alive and self._own_load() >= self._share:
            taken: list[str] = []
            shared_out = True  # claimed by whichever replica polls first (this one too)
        elif durable:
            taken = await self._take_all(await self.claims.claim(1, key))
        else:  # not in the inbox: handled here, unclaimed
            self._enqueue(message)
            taken = [message.id]
        waits = still_answering or (not busy and message.id not in taken and not shared_out)
        if waits and await self._should_acknowledge(message):
            await self.send(
                message.answer(
                    i18n.message("busy_ack", await self._language(message)), "ack", tag="ack"
                )
            )

    def _still_answering(self, key: SenderKey) -> bool:
        """Whether the sender waits on an answer here: a message queued, or the one in hand
        not yet answered."""
        if self._queues.get(key):
            return True
        in_hand = self._in_hand.get(key)
        return in_hand is not None and in_hand not in self._answered

    async def _take_all(self, claims: list[Claim]) -> list[str]:
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
            await ingress.deny(self.deps, message, denial, self)
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
        language = await self._language(message)
        await self.send(message.answer(i18n.message("error_poison", language), "error"))
        await self.send(
            owner_alert(
                f"⚠️ A message from {message.channel}:{message.sender_id} stopped Omega "
                f"{MAX_ATTEMPTS} times and was set aside: {message.text[:200]!r}"
            )
        )

    def _enqueue(self, message: IncomingMessage) -> None:
        key = (message.channel, message.sender_id)
        self._queues.setdefault(key, deque()).append(message)
        if key not in self._workers:
            self._workers[key] = asyncio.create_task(self._serve_sender(key), name=f"sender:{key}")

    async def _should_acknowledge(self, message: IncomingMessage) -> bool:
        """A queued message gets "Got it" unless it is a command (its answer is the
        acknowledgement) or the sender has not been welcomed yet (the welcome comes first)."""
        if message.text.lstrip().startswith("/"):
            return False
        store = self.deps.store
        try:
            welcomed = await store.call(store.get_fact, message.sender_id, "welcomed")
        except Exception:
            return True
        return welcomed is not None

    async def _language(self, message: IncomingMessage) -> str:
        """The sender's language: remembered, else guessed from this very message."""
        store = self.deps.store
        try:
            known = await store.call(store.get_fact, message.sender_id, "preferred_language")
        except Exception:
            known = None
        return known or detect_language(message.text)

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
                await self._claim_next(key)
        finally:
            self._workers.pop(key, None)
            self._queues.pop(key, None)

    async def _claim_next(self, key: SenderKey) -> None:
        """Claim the sender's next message, if any (at once: no wait for the poll)."""
        while claims := await self.claims.claim(1, key):
            if await self._take_all(claims):
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
        self._in_flight.add(message.id)
        try:
            with self.claims.kept(message.id) if held else contextlib.nullcontext():
                await self._run(message)
        finally:
            self._in_flight.discard(message.id)
            self.claims.settled(message.id)

    async def _run(self, message: IncomingMessage) -> None:
        error = ""
        try:
            stored = await self.deps.store.call(self.deps.store.inbox_stored_reply, message.id)
        except Exception:
            log.exception("could not read the stored reply of message %s", message.id)
            stored = None
        try:
            if stored is not None:
                # Answered before Omega stopped, not yet marked sent: send the very same answer
                # again; provider, tools and markers are not run a second time.
                log.info("re-sending the stored reply to message %s", message.id)
                await send_stored(self.deps, message.id, self, *stored)
            else:
                await handle_message(self.deps, message, self)
        except asyncio.CancelledError:
            # Shutdown, not a crash: this attempt does not count against the message.
            with contextlib.suppress(Exception):
                self.deps.store.inbox_release(message.id)
            raise
        except Exception as exc:  # the pipeline guards itself; this is the last net
            log.exception("message %s failed", message.id)
            error = repr(exc)[:500]
        try:
            await self.deps.store.call(self.deps.store.inbox_finish, message.id, error)
        except Exception:
            log.exception("could not mark message %s finished", message.id)

    async def deliver(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel, raising when that is not possible; one sent
        unasked passes the notification gate first, which may hold it (gateway.notify)."""
        if await self.notify.admit(message):
            await self._deliver(message)

    async def _release(self, message: OutgoingMessage) -> None:
        """A digest of held messages: the owner's kept when unreachable, a person's raising."""
        await (self._send(message) if message.channel == OWNER else self._deliver(message))

    async def _deliver(self, message: OutgoingMessage) -> None:
        if message.channel == OWNER:
            if message.kind == "alert" and not self.collapse.allowed(message):
                return
            if await self._to_owner(message) is None:
                raise LookupError("no running channel reaches the owner")
            return
        channel = self.channels.get(message.channel)
        if channel is None:
            raise LookupError(f"channel {message.channel!r} is not running")
        await channel.send(_redacted(message))
        if message.kind in ANSWERS and message.reply_to in self._in_flight:
            self._answered.add(message.reply_to)

    def owner_routes(self) -> list[tuple[str, str]]:
        """Where the owner can be reached now: configured addresses on running channels, then
        the terminal (whoever sits at it is the owner), then a channel that knows the owner is
        there now (the web page while it is open)."""
        routes = [route for route in owner_addresses(self.deps.config) if route[0] in self.channels]
        if "terminal" in self.channels:
            routes.append(("terminal", getpass.getuser()))
        for name, channel in self.channels.items():
            present = getattr(channel, "owner_target", None)
            target = present() if callable(present) else None
            if isinstance(target, str) and target:
                routes.append((name, target))
        return list(dict.fromkeys(routes))

    async def owner_routes_now(self) -> list[tuple[str, str]]:
        """`owner_routes`, with the owners let in at run time (`omega people allow --owner`,
        read from memory.db now) after the configured ones: a revoked owner is no route."""
        routes = self.owner_routes()
        store = self.deps.store
        try:
            grants = await store.call(store.grants)
        except Exception:
            log.exception("could not read the owners granted at run time")
            return routes
        granted = [
            (g.channel, g.sender_id)
            for g in grants
            if g.role == "owner" and g.channel in self.channels
        ]
        configured = len([r for r in owner_addresses(self.deps.config) if r[0] in self.channels])
        return list(dict.fromkeys([*routes[:configured], *granted, *routes[configured:]]))

    async def _to_owner(self, message: OutgoingMessage) -> tuple[str, str] | None:
        """Deliver to the first owner route that takes it; the route used, or None."""
        for channel, target in await self.owner_routes_now():
            try:
                await self._deliver(dataclasses.replace(message, channel=channel, target=target))
                return channel, target
            except Exception as exc:
                log.warning("owner %s not delivered on %s: %s", message.kind, channel, exc)
        return None

    async def flush_owner_alerts(self) -> int:
        """Deliver alerts kept while no owner channel was running; return how many went out."""
        store = self.deps.store
        if not await self.owner_routes_now():
            return 0
        sent = 0
        for alert in await store.call(store.pending_owner_alerts):
            route = await self._to_owner(owner_alert(alert.text, kind=_kind(alert.kind)))
            if route is None:
                break
            await store.call(store.owner_alert_delivered, alert.id, *route)
            sent += 1
        return sent

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel; failures are logged, never raised.

        One sent unasked passes the notification gate first (gateway.notify). A message for the
        owner goes to wherever the owner can be reached, or is kept (in memory.db, shown by
        `omega status` and /status) until a channel for them runs."""
        if await self.notify.admit(message):
            await self._send(message)

    async def _send(self, message: OutgoingMessage) -> None:
        if message.channel == OWNER:
            if await self._to_owner(message) is None:
                log.warning("no channel reaches the owner now; %s kept for later", message.kind)
                try:
                    await self.deps.store.call(
                        self.deps.store.keep_owner_alert, message.text, message.kind
                    )
                except Exception:
                    log.exception("could not keep the owner %s: %.200s", message.kind, message.text)
            return
        try:
            await self._deliver(message)
        except LookupError as exc:
            log.warning("outgoing %s message dropped: %s", message.kind, exc)
        except Exception:
            log.exception("sending on %s failed", message.channel)

    async def typing(self, channel_name: str, target: str) -> None:
        """Show a typing indicator; failures are logged, never raised."""
        channel = self.channels.get(channel_name)
        if channel is None:
            return
        try:
            await channel.send_typing(target)
        except Exception as exc:
            log.debug("typing indicator on %s failed: %s", channel_name, exc)

    async def replay_inbox(self) -> int:
        """Take up messages left unfinished by an earlier run (or by a replica of this host
        that died), in arrival order; a live replica's claims are left to it. Return how
        many were queued.

        A message that was being handled when Omega died MAX_ATTEMPTS times is not tried again:
        it is marked failed, its sender is told, and the owner is alerted."""
        store = self.deps.store
        await store.call(store.inbox_prune)
        await self.claims.adopt_dead()
        replayed = 0
        while claims := await self.claims.claim(limit=100):
            taken = await self._take_all(claims)
            for message_id in taken:
                log.info("replaying unfinished message %s", message_id)
            replayed += len(taken)
        return replayed

    def _own_load(self) -> int:
        """Messages this replica is answering or has queued."""
        return len(self._in_flight) + sum(len(queue) for queue in self._queues.values())

    def _poll_share(self) -> int:
        """How many messages one poll claims: alone, a batch; beside other replicas, what
        keeps this one near its share (at least one, so the fleet always makes progress)."""
        if not self._peers_alive:
            return POLL_BATCH
        return max(1, 2 * self._share - self._own_load())

    async def _look_for_peers(self) -> None:
        """Whether other replicas are alive now (read at most every PEERS_CHECK_SECS)."""
        now = asyncio.get_running_loop().time()
        if now - self._peers_checked < PEERS_CHECK_SECS:
            return
        self._peers_checked = now
        store = self.deps.store
        ttl = self.deps.config.store.lease_seconds
        alive = [r for r in await store.call(store.replicas, ttl) if r.alive]
        self._peers_alive = len(alive) > 1

    async def _poll(self, every: float) -> None:
        """Take up what other replicas received (or left behind when they died), and settle
        the submitted messages that another replica answered: at once when woken (a new or
        released inbox row on PostgreSQL), else every `every` seconds."""
        store = self.deps.store
        woken = store.wake_event(INBOX)  # PostgreSQL: another replica's new row wakes us
        while True:
            await wait_for(woken, every)
            try:
                await self._look_for_peers()
                await self._take_all(await self.claims.claim(self._poll_share()))
                await self._settle_elsewhere()
            except Exception:
                log.exception("looking for inbox messages failed")

    async def _settle_elsewhere(self) -> None:
        queued = {m.id for queue in self._queues.values() for m in queue}
        local = self.claims.held | self._in_flight | queued
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
        while self._workers:
            await asyncio.gather(*list(self._workers.values()), return_exceptions=True)

    async def prepare(self) -> None:
        """Prepare the provider; one that cannot be prepared still lets channels answer kindly."""
        try:
            await self.deps.provider.prepare()
        except Exception as exc:
            log.warning("provider %s could not be prepared: %s", self.deps.provider.name, exc)

    async def serve(
        self,
        stop: asyncio.Event | None = None,
        grace: float | None = None,
        on_ready: Callable[[], object] | None = None,
    ) -> None:
        """Run the channels until every one's input ends or, when given, until `stop` is set.

        `on_ready` is called once every channel is receiving. Then: stop intake and let
        in-flight replies finish within `grace` (None: `[omega] shutdown_grace_secs`); what
        does not finish stays in the durable inbox for the next start."""
        channel_tasks = [
            asyncio.create_task(channel.run(self.submit), name=f"channel:{name}")
            for name, channel in self.channels.items()
        ]
        poller = asyncio.create_task(
            self._poll(self.deps.config.omega.inbox_poll_secs), name="inbox-poll"
        )
        if on_ready is not None:
            on_ready()
        if stop is None:
            await asyncio.gather(*channel_tasks, return_exceptions=True)
        else:
            await stop.wait()
            log.info("shutting down: intake stopped")
            for channel in self.channels.values():
                try:
                    await channel.stop()
                except Exception:
                    log.exception("stopping a channel failed")
            if channel_tasks:  # `omega start` with no channel runs only the loops
                await asyncio.wait(channel_tasks, timeout=5)
        for name, task in zip(self.channels, channel_tasks, strict=True):
            if task.done() and not task.cancelled() and task.exception() is not None:
                log.error("channel %s stopped with an error: %r", name, task.exception())
            task.cancel()
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)
        if grace is None:
            grace = self.deps.config.omega.shutdown_grace_secs
        if self._workers:  # (wait_for(..., 0) times out even on nothing to wait for)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.drain(), None if math.isinf(grace) else grace)
        # What is not being handled now goes back to the other replicas (or the next start).
        await self.claims.release(keep=set(self._in_flight))
        left = await self.unanswered()
        if left:  # an answer already sent is no loss, whatever work followed it
            log.warning("%d messages were not answered in time; they stay in the inbox", len(left))

    async def close(self) -> None:
        """Send the alerts collapsed into the digest so far (kept for the owner, never dropped)."""
        await self.collapse.close()
