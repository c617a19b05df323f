"""The running service: built once from the runtime (`build_service` for `omega start`,
`build_chat` for `omega chat`), then run (`run_service`, or `serve` with signals).

Like python-telegram-bot's ApplicationBuilder and run_polling: the root decides which channels
and background jobs exist (explicit lists on the Service) and in what order the service comes
up and goes down; the gateway only admits, dispatches and delivers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from omega.app.fleet import Fleet
from omega.app.jobs import Job, loop_jobs, quant_feed_job, start_jobs, stop_jobs, web_page_job
from omega.app.runtime import Runtime, pipeline_deps

if TYPE_CHECKING:
    from omega.channels.base import Channel
    from omega.channels.registry import PluginFailure
    from omega.channels.supervised import SupervisedChannel
    from omega.gateway.gateway import Gateway
    from omega.memory import Store
    from omega.turn import FolderMigration, PipelineDeps
    from omega.web.app import WebServer

log = logging.getLogger(__name__)

STOP_RESERVE_SECS = 1.5  # of the stop's deadline, kept for the service jobs and the store


@dataclass
class Service:
    """Everything one running Omega is made of; `run_service` runs it."""

    deps: PipelineDeps
    channels: list[Channel]
    gateway: Gateway
    jobs: list[Job] = field(default_factory=list)
    web: WebServer | None = None
    # Summarize the conversations still open once the replies are finished (`omega start`).
    summarize_on_exit: bool = False
    # How long in-flight replies may take after intake stops (None: [omega] shutdown_grace_secs).
    grace: float | None = None
    # And how long they may go without one finished (`omega chat --jsonl`; None: no such bound).
    stall: float | None = None
    # Channel plug-ins that failed to load or start (told to the owner once the service runs),
    # and the third-party channels run under watch (they tell the owner when they fail).
    channel_failures: list[PluginFailure] = field(default_factory=list)
    supervised: list[SupervisedChannel] = field(default_factory=list)
    # This process as a replica of the fleet sharing its database (leases, beat).
    fleet: Fleet | None = None
    # A stop ends within this long, whatever the provider does ([service] stop_timeout_secs;
    # None: no deadline). What does not fit is queued in the store.
    stop_timeout: float | None = None


def build_service(runtime: Runtime, store: Store, *, jsonl: bool = False) -> Service:
    """`omega start`: every enabled channel, the web page, the quant feed and the loops.

    Holds the run lock, warns about an unconfined sandbox, logs the self-checks. Raises
    StartError when the web page cannot listen."""
    from omega.app.channels import message_channels
    from omega.gateway.gateway import Gateway
    from omega.ops.selfcheck import CheckContext, log_checks, run_checks
    from omega.quant.service import feed_unavailable

    deps = _open(runtime, store)
    fleet = _join_fleet(runtime, store)
    # Registers the plug-ins' checks; unshared channels receive on the lease holder only.
    started = message_channels(runtime, store, jsonl=jsonl, fleet=fleet)
    log_checks(run_checks(CheckContext(runtime.config, runtime.paths, store, network=True)))
    if runtime.config.quant.enabled and (why := feed_unavailable()):
        sys.stderr.write(f"omega: warning: [quant] is enabled but {why}; not started\n")
    channels, web = started.channels, started.web
    deps.state.platform_hints.update(started.hints)
    gateway = Gateway(deps, channels)
    jobs = [fleet.beat_job()]
    jobs += [web_page_job(web, deps, gateway)] if web is not None else []
    jobs += [fleet.leased(job) for job in [quant_feed_job(store, deps), *loop_jobs(deps, gateway)]]
    return Service(
        deps,
        channels,
        gateway,
        jobs,
        web,
        summarize_on_exit=True,
        channel_failures=started.failures,
        supervised=started.supervised,
        fleet=fleet,
        stop_timeout=runtime.config.service.stop_timeout_secs,
    )


def build_chat(runtime: Runtime, store: Store, *, jsonl: bool = False) -> Service:
    """`omega chat`: the terminal (or JSON lines) and the loops. At the end of JSON input
    every answer is waited for (a script reads them all) while they come: once none was
    finished for `[omega] chat_stall_secs`, the rest stays in the inbox and the chat ends; a
    person who quits leaves at once (an unanswered message stays in the inbox)."""
    from omega.channels.registry import discover
    from omega.channels.terminal import InteractiveChannel, JsonlChannel
    from omega.gateway.gateway import Gateway

    deps = _open(runtime, store)
    # The platform line of each of Omega's own channels (the heartbeat writes to the owner's,
    # wherever they are); third-party plug-ins are not loaded for a chat.
    deps.state.platform_hints.update(discover(declared=()).platform_hints())
    ok, reason = deps.provider.availability()
    if not ok:
        sys.stderr.write(
            f"omega: warning: provider {deps.provider.name} is not available: {reason}\n"
        )
    downloads = runtime.paths.downloads
    channel: Channel = (
        JsonlChannel(downloads=downloads)
        if jsonl
        else InteractiveChannel(runtime.config.omega.name, downloads=downloads)
    )
    gateway = Gateway(deps, [channel])
    fleet = _join_fleet(runtime, store)
    jobs = [fleet.beat_job(), *(fleet.leased(job) for job in loop_jobs(deps, gateway))]
    if not jsonl:
        return Service(deps, [channel], gateway, jobs, grace=0.0, fleet=fleet)
    stall = runtime.config.omega.chat_stall_secs or derived_stall(deps.provider_timeout)
    return Service(deps, [channel], gateway, jobs, grace=math.inf, stall=stall, fleet=fleet)


def derived_stall(provider_timeout: float) -> float:
    """`[omega] chat_stall_secs` left at 0: three provider calls that each take all of their
    time and every wait for a `retry-after`, plus a minute."""
    from omega.providers.limiter import LOAD_RETRIES, MAX_RETRY_AFTER_SECS

    return 3 * (provider_timeout + LOAD_RETRIES * MAX_RETRY_AFTER_SECS) + 60.0


def _join_fleet(runtime: Runtime, store: Store) -> Fleet:
    """This process as a replica: registered now; its once-only jobs run under leases."""
    fleet = Fleet(store, runtime.config.store.lease_seconds)
    fleet.register()
    return fleet


def _open(runtime: Runtime, store: Store) -> PipelineDeps:
    """Hold the run lock (`omega restore` waits until this process ends), build the pipeline
    deps and warn when commands the model runs are not confined."""
    from omega.ops.runlock import hold_running

    hold_running(runtime.paths.home)
    deps = pipeline_deps(runtime, store)
    _warn_sandbox(runtime)
    return deps


def _warn_sandbox(runtime: Runtime) -> None:
    """Warn at start (stderr and log) when commands the model runs are not confined."""
    from omega.sandbox import probe

    status = probe(runtime.config.sandbox.mode)
    if status.mode == "rwx" or status.degraded:
        logging.getLogger("omega.sandbox").warning("sandbox: %s", status.describe())
        sys.stderr.write(f"omega: warning: sandbox {status.describe()}\n")


async def run_service(
    service: Service,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[], object] | None = None,
) -> None:
    """Run until every channel's input ends or, when given, until `stop` is set.

    Up: service jobs, the provider prepared, loop jobs, the inbox replayed, the sandbox alert,
    kept owner alerts, the channels (then `on_ready`: the service manager's readiness). Down:
    intake stops, in-flight replies finish within the grace period (what does not stays in
    the durable inbox), loop jobs stop, collapsed alerts go out, open conversations are
    summarized (when asked; what is not stays open, queued for the summarizer), service jobs
    stop last. With `service.stop_timeout`, all of the way down fits in it (StopClock).
    With OMEGA_DUMP_STACKS set, SIGUSR1 writes where it is (omega.ops.stacks)."""
    from omega.ops.stacks import install_stack_dump

    install_stack_dump()
    gateway = service.gateway
    intake = stop if stop is not None else asyncio.Event()
    clock = StopClock(service.stop_timeout)
    watch = asyncio.create_task(clock.watch(intake), name="stop-clock")
    services = start_jobs([j for j in service.jobs if j.lifetime == "service"], intake)
    try:
        moved = await _rename_person_folders(service)  # before any turn uses one
        await gateway.prepare()
        loops_stop = asyncio.Event()
        loops = start_jobs([j for j in service.jobs if j.lifetime == "loop"], loops_stop)
        await gateway.replay_inbox()
        await _alert_unconfined_sandbox(gateway)
        await _alert_contested_folders(gateway, moved)
        try:
            await gateway.flush_owner_alerts()
        except Exception:
            log.exception("delivering kept owner alerts failed")
        await _watch_channel_plugins(service)
        grace = clock.grace(service.grace, service.deps.config.omega.shutdown_grace_secs)
        await gateway.serve(stop, grace=grace, on_ready=on_ready, stall=service.stall)
        loops_stop.set()
        await stop_jobs(loops, clock.left())
        try:
            await asyncio.wait_for(gateway.close(), clock.left())
        except TimeoutError:
            log.warning("the collapsed owner alerts were not sent before the stop deadline")
        if service.summarize_on_exit and await _last_replica(service):
            from omega.loops.summarizer import summarize_all_active

            count = await summarize_all_active(service.deps, within=clock.left())
            log.info("summarized %d open conversations at shutdown", count)
        log.info("gateway stopped")
    finally:
        intake.set()
        watch.cancel()
        await stop_jobs(services, clock.left(reserve=False))


class StopClock:
    """The stop's deadline: it starts when intake stops and ends `timeout` seconds later, less
    a reserve for stopping the service jobs and closing the store (None: no deadline)."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.reserve = 0.0 if timeout is None else min(STOP_RESERVE_SECS, timeout * 0.2)
        self.started: float | None = None

    async def watch(self, stop: asyncio.Event) -> None:
        """Note when the stop began."""
        await stop.wait()
        self.started = time.monotonic()

    def left(self, reserve: bool = True) -> float | None:
        """Seconds the stop's remaining steps may still take (None: no limit); with
        `reserve=False`, the service jobs' share too (half the reserve: the store's close
        keeps the other half)."""
        if self.timeout is None:
            return None
        began = self.started if self.started is not None else time.monotonic()
        kept = self.reserve if reserve else self.reserve / 2
        return max(0.0, began + self.timeout - kept - time.monotonic())

    def grace(self, asked: float | None, configured: float) -> float | None:
        """How long in-flight replies may take: what was asked (else [omega]
        shutdown_grace_secs), never past the deadline. None leaves it to the gateway."""
        if self.timeout is None:
            return asked
        wanted = configured if asked is None else asked
        return min(wanted, max(0.0, self.timeout - self.reserve))


async def _last_replica(service: Service) -> bool:
    """Whether no other replica runs on this database: only then are the open conversations
    summarized at shutdown (another replica may be in one; its summarizer closes them)."""
    if service.fleet is None:
        return True
    others = await service.fleet.others_alive()
    if others:
        log.info("%d other replicas run: open conversations stay open", others)
    return not others


async def _watch_channel_plugins(service: Service) -> None:
    """Tell the owner which channel plug-ins failed to load or start, and let the running
    third-party channels tell them when they fail."""
    from omega.owner import owner_alert

    gateway = service.gateway

    async def alert(text: str) -> None:
        await gateway.send(owner_alert(text))

    for channel in service.supervised:
        channel.alert = alert
    for failure in service.channel_failures:
        await alert(
            f"The channel plug-in {failure.name} {failure.reason}. The other channels run; "
            "see `omega status` and omega.log."
        )


async def _rename_person_folders(service: Service) -> FolderMigration:
    """People's folders named with the old short digest get their new names (turn.folders)."""
    from omega.turn import FolderMigration, migrate_person_folders

    deps = service.deps
    try:
        return await deps.store.call(migrate_person_folders, deps.paths.workspace, deps.store)
    except Exception:  # a folder left under its old name is unreachable, never given away
        log.exception("renaming people's folders failed")
        return FolderMigration()


async def _alert_contested_folders(gateway: Gateway, moved: FolderMigration) -> None:
    """Tell the owner of a person's folder two persons could claim (given to neither), and of
    old folders left beside their person's (one per channel linked: to merge by hand)."""
    from omega.owner import owner_alert

    if moved.contested:
        names = ", ".join(f"people/{name}" for name in moved.contested)
        text = (
            f"Two people's ids lead to the same folder ({names}): someone may have chosen an "
            "id to reach another person's files. Neither gets it; look at what it holds, and "
            "move it into the right person's folder (`omega people list` names them)."
        )
        await gateway.send(owner_alert(text, priority="urgent"))
    if moved.beside:
        pairs = "; ".join(f"people/{old} beside people/{new}" for old, new in moved.beside)
        text = (
            "A person's folders are one folder now, whichever linked channel they write from. "
            f"These were kept under their old names, beside it: {pairs}. Move their files "
            "into the folder beside them by hand."
        )
        await gateway.send(owner_alert(text))


async def _alert_unconfined_sandbox(gateway: Gateway) -> None:
    """Tell the owner once when the configured sandbox cannot be enforced here."""
    from omega.owner import owner_alert
    from omega.sandbox import degraded_alert, probe

    status = probe(gateway.deps.config.sandbox.mode)
    if not status.degraded:
        return
    log.warning("sandbox: %s", status.describe())
    text = degraded_alert(status, gateway.deps.paths)
    if text:  # a security alert: past quiet hours and the daily cap
        await gateway.send(owner_alert(text, priority="urgent"))


def serve(service: Service) -> None:
    """Run the service until SIGINT or SIGTERM, telling the service manager READY and
    STOPPING (sd_notify); the store is closed at the end. A stop that is still running when
    `service.stop_timeout` has passed ends the process there (`hard_stop`)."""
    import signal

    from omega.ops.notify import sd_notify

    async def main() -> None:
        stop = asyncio.Event()

        def stopping() -> None:
            if stop.is_set():
                return
            sd_notify("STOPPING=1")
            stop.set()
            if service.stop_timeout is not None:
                timer = threading.Timer(service.stop_timeout, hard_stop, (service.stop_timeout,))
                timer.daemon = True
                timer.start()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopping)
        await run_service(service, stop, on_ready=lambda: sd_notify("READY=1"))

    try:
        asyncio.run(main())
    finally:
        service.deps.store.close()


def hard_stop(timeout: float) -> None:
    """The last resort of a stop past its deadline: what is durable is in the store (committed
    transactions; an unanswered message stays in the inbox, an unsummarized conversation
    open), so the process ends now rather than be killed by the service manager."""
    log.error("the stop took longer than %gs: exiting now", timeout)
    sys.stderr.write(f"omega: the stop took longer than {timeout:g}s; exiting now\n")
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    os._exit(1)
