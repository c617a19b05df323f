"""The running service: built once from the runtime (`build_service` for `omega start`,
`build_chat` for `omega chat`), then run (`run_service`, or `serve` with signals).

Like python-telegram-bot's ApplicationBuilder and run_polling: the root decides which channels
and background jobs exist (explicit lists on the Service) and in what order the service comes
up and goes down; the gateway only admits, dispatches and delivers."""

from __future__ import annotations

import asyncio
import logging
import math
import sys
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
    from omega.turn import PipelineDeps
    from omega.web.app import WebServer

log = logging.getLogger(__name__)


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
    # Channel plug-ins that failed to load or start (told to the owner once the service runs),
    # and the third-party channels run under watch (they tell the owner when they fail).
    channel_failures: list[PluginFailure] = field(default_factory=list)
    supervised: list[SupervisedChannel] = field(default_factory=list)
    # This process as a replica of the fleet sharing its database (leases, beat).
    fleet: Fleet | None = None


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
    )


def build_chat(runtime: Runtime, store: Store, *, jsonl: bool = False) -> Service:
    """`omega chat`: the terminal (or JSON lines) and the loops. At the end of JSON input
    every answer is waited for (a script reads them all); a person who quits leaves at once
    (an unanswered message stays in the inbox)."""
    from omega.channels.terminal import InteractiveChannel, JsonlChannel
    from omega.gateway.gateway import Gateway

    deps = _open(runtime, store)
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
    return Service(deps, [channel], gateway, jobs, grace=math.inf if jsonl else 0.0, fleet=fleet)


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
    summarized (when asked), service jobs stop last."""
    gateway = service.gateway
    intake = stop if stop is not None else asyncio.Event()
    services = start_jobs([j for j in service.jobs if j.lifetime == "service"], intake)
    try:
        await gateway.prepare()
        loops_stop = asyncio.Event()
        loops = start_jobs([j for j in service.jobs if j.lifetime == "loop"], loops_stop)
        await gateway.replay_inbox()
        await _alert_unconfined_sandbox(gateway)
        try:
            await gateway.flush_owner_alerts()
        except Exception:
            log.exception("delivering kept owner alerts failed")
        await _watch_channel_plugins(service)
        await gateway.serve(stop, grace=service.grace, on_ready=on_ready)
        loops_stop.set()
        await stop_jobs(loops)
        await gateway.close()
        if service.summarize_on_exit and await _last_replica(service):
            from omega.loops.summarizer import summarize_all_active

            count = await summarize_all_active(service.deps)
            log.info("summarized %d open conversations at shutdown", count)
        log.info("gateway stopped")
    finally:
        intake.set()
        await stop_jobs(services)


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


async def _alert_unconfined_sandbox(gateway: Gateway) -> None:
    """Tell the owner once when the configured sandbox cannot be enforced here."""
    from omega.owner import owner_alert
    from omega.sandbox import degraded_alert, probe

    status = probe(gateway.deps.config.sandbox.mode)
    if not status.degraded:
        return
    log.warning("sandbox: %s", status.describe())
    text = degraded_alert(status, gateway.deps.paths)
    if text:
        await gateway.send(owner_alert(text))


def serve(service: Service) -> None:
    """Run the service until SIGINT or SIGTERM, telling the service manager READY and
    STOPPING (sd_notify); the store is closed at the end."""
    import signal

    from omega.ops.notify import sd_notify

    async def main() -> None:
        stop = asyncio.Event()

        def stopping() -> None:
            sd_notify("STOPPING=1")
            stop.set()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopping)
        await run_service(service, stop, on_ready=lambda: sd_notify("READY=1"))

    try:
        asyncio.run(main())
    finally:
        service.deps.store.close()
