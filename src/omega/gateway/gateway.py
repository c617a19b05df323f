"""The gateway: admits, persists and dispatches messages (one sender at a time) and delivers
the replies, on the channels and when the composition root (omega.app) tells it to serve.

Its parts share one contract: every accepted message is answered exactly once, by whichever
replica claimed it (claims.py). Admission is here; each sender's queue and worker are in
senders.py (one attempt at an answer in answering.py), what leaves Omega in outbound.py (the
notification gate and the hourly collapse in notify.py and collapse.py), the other replicas in
peers.py and inbox_poll.py, and stopping in shutdown.py.
Building the service, its background jobs and its start/stop order live in omega.app."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from omega import i18n
from omega.channels.base import Channel, PairingChannel
from omega.gateway import inbox_poll, ingress, shutdown
from omega.gateway.claims import Claims
from omega.gateway.outbound import Outbound
from omega.gateway.peers import Peers
from omega.gateway.senders import Senders, sender_language
from omega.turn import PipelineDeps, is_owner
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)


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
        self.claims = Claims(deps.store, self.channels, deps.config.omega.inbox_lease_secs)
        self.peers = Peers(deps)
        self.senders = Senders(deps, self.claims, self.peers, self)
        self.outbound = Outbound(deps, self.channels, self.senders.note_sent)
        self.notify = self.outbound.notify  # the digest's background job runs it (omega.app)
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
        denial, granted = await ingress.admission(self.deps, message)
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
            new = not self.senders.expected(message.id)
            durable = False
        if not new:
            log.warning("message %s was received before; not handled twice", message.id)
            handled.set_result(None)
            return handled
        self.senders.expect(message.id, handled)
        if notices:
            language = await sender_language(self.deps, message)
            for number, notice in enumerate(notices, 1):
                await self.send(
                    message.answer(
                        i18n.message(notice.key, language, **notice.values),
                        "notice",
                        tag=f"notice-{number}",
                    )
                )
        await self.senders.dispatch(message, durable)
        # The owner is here (by the config or memory.db's grants): give them what was kept.
        if is_owner(self.deps.config, message, granted):
            try:
                await self.flush_owner_alerts()
            except Exception:
                log.exception("delivering kept owner alerts failed")
        return handled

    async def deliver(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel, raising when that is not possible; one sent
        unasked passes the notification gate first, which may hold it (gateway.notify)."""
        await self.outbound.deliver(message)

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel; failures are logged, never raised.

        One sent unasked passes the notification gate first (gateway.notify). A message for the
        owner goes to wherever the owner can be reached, or is kept (in memory.db, shown by
        `omega status` and /status) until a channel for them runs."""
        await self.outbound.send(message)

    async def typing(self, channel_name: str, target: str) -> None:
        """Show a typing indicator; failures are logged, never raised."""
        await self.outbound.typing(channel_name, target)

    def owner_routes(self) -> list[tuple[str, str]]:
        """Where the owner can be reached now on the running channels (outbound.py)."""
        return self.outbound.owner_routes()

    async def flush_owner_alerts(self) -> int:
        """Deliver alerts kept while no owner channel was running; return how many went out."""
        return await self.outbound.flush_owner_alerts()

    async def replay_inbox(self) -> int:
        """Take up messages left unfinished by an earlier run (or by a replica of this host
        that died); a live replica's claims are left to it. Return how many were queued."""
        return await inbox_poll.replay_inbox(self.deps, self.claims, self.senders)

    def unfinished(self) -> list[str]:
        """The ids of accepted messages not yet handled completely (buffered or in flight)."""
        return self.senders.unfinished()

    async def unanswered(self) -> list[str]:
        """Of the unfinished messages, those whose answer has not been sent."""
        return await self.senders.unanswered()

    async def drain(self) -> None:
        """Wait until every buffered and in-flight message is answered."""
        await self.senders.drain()

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
        stall: float | None = None,
    ) -> None:
        """Run the channels until every one's input ends or, when given, until `stop` is set.

        `on_ready` is called once every channel is receiving. Then: stop intake and let
        in-flight replies finish within `grace` (None: `[omega] shutdown_grace_secs`) and,
        with `stall`, while one is finished at least every `stall` seconds; what does not
        finish stays in the durable inbox for the next start."""
        channel_tasks = [
            asyncio.create_task(channel.run(self.submit), name=f"channel:{name}")
            for name, channel in self.channels.items()
        ]
        every = self.deps.config.omega.inbox_poll_secs
        poller = asyncio.create_task(
            inbox_poll.poll(self.deps, self.claims, self.senders, self.peers, every),
            name="inbox-poll",
        )
        if on_ready is not None:
            on_ready()
        if stop is None:
            await asyncio.gather(*channel_tasks, return_exceptions=True)
        else:
            await stop.wait()
            await shutdown.stop_intake(self.channels, channel_tasks)
        await shutdown.end_tasks(self.channels, channel_tasks, poller)
        if grace is None:
            grace = self.deps.config.omega.shutdown_grace_secs
        await shutdown.drain(self.senders, self.claims, grace, stall)

    async def close(self) -> None:
        """Send the alerts collapsed into the digest so far (kept for the owner, never dropped)."""
        await self.outbound.collapse.close()
