"""The background jobs the service runs beside the gateway, as data the root builds.

A job is a name and a coroutine that works until the `stop` event it is given is set. Its
lifetime says when the root starts and stops it (see run_service): a "service" job spans the
whole run (the web page, the quant feed); a "loop" job works through the gateway and is
stopped once the in-flight replies are finished (scheduler, heartbeat, summarizer, critic, the
owner's daily digest of gaps seen with other people, the digests of held messages)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from omega.gateway.gateway import Gateway
    from omega.memory import Store
    from omega.turn import PipelineDeps
    from omega.web.app import WebServer

log = logging.getLogger(__name__)

Lifetime = Literal["service", "loop"]
JobRun = Callable[[asyncio.Event], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class Job:
    """A background job: `run(stop)` works until `stop` is set.

    lifetime "service": started before anything else with the service's stop event, stopped
    last; "loop": started once the provider is prepared, stopped once replies are finished.
    At its stop a job is cancelled, unless it has a `close` that asks it to end by itself (the
    web page closes its connections); then the root waits for it to end."""

    name: str
    run: JobRun
    lifetime: Lifetime = "loop"
    close: Callable[[], None] | None = None


def loop_jobs(deps: PipelineDeps, gateway: Gateway) -> list[Job]:
    """The summarizer, the critic, the owner's daily gap digest and the digests of what the
    notification gate held (gateway.notify) always, the scheduler and
    heartbeat when enabled (in that order), and when a channel pairs strangers, the job telling
    approved people they are in."""
    from omega.evolution.gaps import digest_loop
    from omega.gateway.pipeline import respond
    from omega.gateway.strangers import tell_approved_loop
    from omega.loops.critic_job import critic_loop
    from omega.loops.heartbeat import heartbeat_loop
    from omega.loops.scheduler import Scheduler
    from omega.loops.summarizer import summarizer_loop
    from omega.turn import dm_policies

    config = deps.config
    jobs = [
        Job("summarizer", lambda stop: summarizer_loop(deps, stop)),
        Job("critic", lambda stop: critic_loop(deps, gateway, stop)),
        Job("gap digest", lambda stop: digest_loop(deps.store, gateway, stop)),
        Job("held digest", lambda stop: gateway.notify.run(stop)),
    ]
    if config.scheduler.enabled:
        jobs.append(Job("scheduler", lambda stop: Scheduler(deps, gateway, respond).run(stop)))
    if config.heartbeat.enabled:
        jobs.append(Job("heartbeat", lambda stop: heartbeat_loop(deps, gateway, stop)))
    if any(policy.dm_policy == "pairing" for policy in dm_policies(config)):
        jobs.append(Job("pairing", lambda stop: tell_approved_loop(deps, gateway, stop)))
    return jobs


def web_page_job(web: WebServer, deps: PipelineDeps, gateway: Gateway) -> Job:
    """The local web page, served until the service's end (then closed, not cancelled)."""
    return Job("web", lambda stop: web.serve(deps, gateway), "service", close=web.shutdown)


def quant_feed_job(store: Store, deps: PipelineDeps) -> Job:
    """The quant feed: it starts once the owner sends /quant enable (numpy and ib_async are
    imported only then) and ends when intake stops."""
    from omega.quant.service import run_when_enabled

    return Job("quant", lambda stop: run_when_enabled(store, deps.config.quant, stop), "service")


def start_jobs(jobs: list[Job], stop: asyncio.Event) -> list[tuple[Job, asyncio.Task[None]]]:
    """Start each job as a task named after it, in order."""
    return [(job, asyncio.create_task(job.run(stop), name=job.name)) for job in jobs]


async def stop_jobs(
    running: list[tuple[Job, asyncio.Task[None]]], within: float | None = None
) -> None:
    """Stop jobs in order: ask one with `close` to end and wait for it; cancel the others.
    All of it takes `within` seconds at most (None: no limit): a closed job still running then
    is cancelled, and a job that ignores even that is left behind (logged) rather than hold up
    the rest of the stop (the store's close, the process's end)."""
    deadline = None if within is None else time.monotonic() + within

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    cancelled = [task for job, task in running if job.close is None]
    for job, task in running:
        if job.close is not None:
            job.close()
            done, _ = await asyncio.wait({task}, timeout=left())
            if not done:
                log.warning("job %s did not end when closed: cancelled", job.name)
                cancelled.append(task)
    for task in cancelled:
        task.cancel()
    if cancelled:
        _, stuck = await asyncio.wait(cancelled, timeout=left())
        for task in stuck:
            log.error("job %s did not end when cancelled: left behind", task.get_name())
