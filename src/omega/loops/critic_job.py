"""The critic's job: every CRITIC_MINUTES, when tools were called since its last pass, the
critic reviews them (omega.evolution.reflection.critic), so a tool that keeps failing becomes a
limitation and a proposal whether introspection runs or not (it is off, or too few calls came)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from omega.evolution.reflection import newest_call, run_critic
from omega.turn import Outbox, PipelineDeps

log = logging.getLogger(__name__)
CRITIC_MINUTES = 30.0


async def critic_pass(deps: PipelineDeps, out: Outbox, last_seen: int) -> int:
    """One pass when calls newer than `last_seen` were recorded; the newest call id read."""
    newest = await deps.store.call(newest_call, deps.store)
    if newest <= last_seen:
        return last_seen
    try:
        report, raised = await run_critic(deps, out)
        log.debug(
            "critic pass over %d calls: %d tools, %d issues",
            sum(t.calls for t in report.tools),
            len(report.tools),
            len(report.issues),
        )
        if raised:
            log.info("critic: tools that keep failing: %s", ", ".join(raised))
    except Exception:
        log.exception("the critic's pass failed")
    return newest


async def critic_loop(
    deps: PipelineDeps, out: Outbox, stop: asyncio.Event, seconds_per_minute: float = 60.0
) -> None:
    """Run a critic pass every CRITIC_MINUTES until `stop` is set."""
    last_seen = 0
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=CRITIC_MINUTES * seconds_per_minute)
        if stop.is_set():
            return
        last_seen = await critic_pass(deps, out, last_seen)
