"""The gateway: runs channels, persists and dispatches messages, one sender at a time."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Sequence

from omega import i18n
from omega.channels.base import Channel
from omega.gateway.language import detect_language
from omega.gateway.pipeline import PipelineDeps, handle_message
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

SenderKey = tuple[str, str]


class Gateway:
    """Connects channels to the pipeline.

    Different senders are answered concurrently; one sender's messages strictly in order,
    later ones buffered (and acknowledged) while one is in flight. Every message is in the
    durable inbox before it is processed and marked finished after its reply is sent.
    """

    def __init__(self, deps: PipelineDeps, channels: Sequence[Channel]) -> None:
        self.deps = deps
        self.channels = {channel.name: channel for channel in channels}
        self._queues: dict[SenderKey, deque[IncomingMessage]] = {}
        self._workers: dict[SenderKey, asyncio.Task[None]] = {}

    async def submit(self, message: IncomingMessage) -> None:
        """Accept a new message from a channel: persist it, then dispatch it."""
        try:
            await self.deps.store.call(self.deps.store.inbox_put, message)
        except Exception:  # still answer; the log says the message was not durable
            log.exception("could not persist incoming message %s", message.id)
        await self._dispatch(message)

    async def _dispatch(self, message: IncomingMessage, acknowledge: bool = True) -> None:
        key = (message.channel, message.sender_id)
        queue = self._queues.setdefault(key, deque())
        queue.append(message)
        if key in self._workers:
            if acknowledge:
                await self.send(
                    OutgoingMessage(
                        message.channel,
                        message.target,
                        i18n.message("busy_ack", await self._language(message)),
                        kind="ack",
                    )
                )
            return
        self._workers[key] = asyncio.create_task(self._serve_sender(key), name=f"sender:{key}")

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
                error = ""
                try:
                    await handle_message(self.deps, message, self)
                except Exception as exc:  # the pipeline guards itself; this is the last net
                    log.exception("message %s failed", message.id)
                    error = repr(exc)[:500]
                try:
                    await self.deps.store.call(self.deps.store.inbox_finish, message.id, error)
                except Exception:
                    log.exception("could not mark message %s finished", message.id)
        finally:
            self._workers.pop(key, None)
            self._queues.pop(key, None)

    async def deliver(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel, raising when that is not possible."""
        channel = self.channels.get(message.channel)
        if channel is None:
            raise LookupError(f"channel {message.channel!r} is not running")
        await channel.send(message)

    async def send(self, message: OutgoingMessage) -> None:
        """Deliver through the message's channel; failures are logged, never raised."""
        try:
            await self.deliver(message)
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
        """Dispatch messages left unfinished by an earlier run, in arrival order."""
        pending = await self.deps.store.call(self.deps.store.inbox_pending)
        for message in pending:
            log.info("replaying unfinished message %s from %s", message.id, message.sender_id)
            await self._dispatch(message, acknowledge=False)
        return len(pending)

    async def drain(self) -> None:
        """Wait until every buffered and in-flight message is answered."""
        while self._workers:
            await asyncio.gather(*list(self._workers.values()), return_exceptions=True)

    def _start_loops(self, stop: asyncio.Event) -> list[asyncio.Task[None]]:
        from omega.loops.heartbeat import heartbeat_loop
        from omega.loops.scheduler import Scheduler
        from omega.loops.summarizer import summarizer_loop

        config = self.deps.config
        tasks = [asyncio.create_task(summarizer_loop(self.deps, stop), name="summarizer")]
        if config.scheduler.enabled:
            scheduler = Scheduler(self.deps, self)
            tasks.append(asyncio.create_task(scheduler.run(stop), name="scheduler"))
        if config.heartbeat.enabled:
            tasks.append(
                asyncio.create_task(heartbeat_loop(self.deps, self, stop), name="heartbeat")
            )
        return tasks

    async def _alert_unconfined_sandbox(self) -> None:
        """Tell the owner once when the configured sandbox cannot be enforced here."""
        from omega.sandbox import degraded_alert, probe

        status = probe(self.deps.config.sandbox.mode)
        if not status.degraded:
            return
        log.warning("sandbox: %s", status.describe())
        text = degraded_alert(status, self.deps.paths)
        if text:
            hb = self.deps.config.heartbeat
            channel, target = (hb.channel, hb.reply_target) if hb.reply_target else ("", "")
            if not channel:
                channel, target = next(iter(self.channels), "terminal"), "owner"
            await self.send(OutgoingMessage(channel, target, text, kind="alert"))

    async def run(
        self, stop: asyncio.Event | None = None, loops: bool = True, summarize_on_exit: bool = False
    ) -> None:
        """Serve until every channel's input ends or, when given, until `stop` is set.

        Then: stop intake, let in-flight replies finish within the grace period (what does not
        finish stays in the durable inbox for the next start), stop the loops and optionally
        summarize the conversations still open.
        """
        try:
            await self.deps.provider.prepare()
        except Exception as exc:  # an unavailable provider still lets channels answer kindly
            log.warning("provider %s could not be prepared: %s", self.deps.provider.name, exc)
        loops_stop = asyncio.Event()
        background = self._start_loops(loops_stop) if loops else []
        await self.replay_inbox()
        await self._alert_unconfined_sandbox()
        channel_tasks = [
            asyncio.create_task(channel.run(self.submit), name=f"channel:{name}")
            for name, channel in self.channels.items()
        ]
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
            await asyncio.wait(channel_tasks, timeout=5)
        for name, task in zip(self.channels, channel_tasks, strict=True):
            if task.done() and not task.cancelled() and task.exception() is not None:
                log.error("channel %s stopped with an error: %r", name, task.exception())
            task.cancel()
        try:
            await asyncio.wait_for(self.drain(), self.deps.config.omega.shutdown_grace_secs)
        except TimeoutError:
            log.warning("in-flight messages did not finish in time; they stay in the inbox")
        loops_stop.set()
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        if summarize_on_exit:
            from omega.loops.summarizer import summarize_all_active

            count = await summarize_all_active(self.deps)
            log.info("summarized %d open conversations at shutdown", count)
        log.info("gateway stopped")
