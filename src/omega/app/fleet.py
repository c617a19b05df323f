"""This process as one replica of a fleet sharing one database: its identity, its beat, and
the leases under which the once-only jobs and the unshared channels run.

Every `omega start` (and `omega chat`) is a replica, also when it is alone: it registers, beats
every third of `[store] lease_seconds`, and runs each job of `leased` only while it holds the
lease `job:<name>`, each unshared channel's receiving (omega.app.leadership) only while it
holds `channel:<name>`. A replica that dies stops renewing; another takes its leases over once
they expire. A clean stop releases them at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from omega import __version__
from omega.app.jobs import Job
from omega.replica import pid_alive, pid_space, replica_name

if TYPE_CHECKING:
    from omega.memory import Store

log = logging.getLogger(__name__)

Work = Callable[[asyncio.Event], Coroutine[Any, Any, None]]


class Fleet:
    """This replica: registers in the store, beats, and holds leases for work."""

    def __init__(self, store: Store, lease_seconds: float, replica_id: str = "") -> None:
        self.store = store
        self.ttl = lease_seconds
        # One name per process, the same the inbox claims carry.
        self.id = replica_id or replica_name()
        self.host = pid_space()
        self.pid = os.getpid()

    @property
    def every(self) -> float:
        """How often leases are renewed, taken over and the beat written."""
        return self.ttl / 3

    def register(self) -> None:
        """Write this replica's row; release the leases of dead replicas on this machine."""
        self.store.replica_register(self.id, self.host, self.pid, __version__)
        for dead in self.store.replica_forget_dead(self.host, pid_alive, keep=self.id):
            log.info("replica %s is gone; its leases are released", dead)

    async def others_alive(self) -> int:
        """How many other replicas are alive now."""
        store = self.store
        try:
            replicas = await store.call(store.replicas, self.ttl)
        except Exception:
            log.exception("reading the replicas failed")
            return 0
        return sum(replica.alive and replica.id != self.id for replica in replicas)

    def beat_job(self) -> Job:
        """The service job that keeps this replica's row fresh and marks its clean stop."""
        return Job("replica", self._beat, "service")

    async def _beat(self, stop: asyncio.Event) -> None:
        store = self.store
        try:
            while not stop.is_set():
                try:
                    await store.call(store.replica_beat, self.id)
                except Exception:
                    log.exception("replica beat failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.every)
        finally:
            with contextlib.suppress(Exception):
                store.replica_stop(self.id)  # cancelled or stopped: a clean stop either way

    def leased(self, job: Job) -> Job:
        """`job`, run only while this replica holds the lease `job:<name>`."""
        name = f"job:{job.name}"

        async def run(stop: asyncio.Event) -> None:
            # A lease lost (this replica stalled past it) is waited for again.
            while not stop.is_set():
                if await self.hold(name, stop, job.run):
                    return  # the job ended by itself

        return Job(job.name, run, job.lifetime)

    async def hold(self, name: str, stop: asyncio.Event, work: Work) -> bool:
        """Wait until this replica holds the lease `name` (or `stop`), then run `work(lost)`
        renewing it every third of its time. When the lease is lost `lost` is set, `work` gets
        one renewal period to end and is then cancelled. Returns True when `work` ended by
        itself (the lease is released), False when stopped or lost."""
        store = self.store
        while not stop.is_set():
            try:
                mine = await store.call(store.lease_acquire, name, self.id, self.ttl)
            except Exception:
                log.exception("taking the lease %s failed", name)
                mine = False
            if mine:
                log.info("replica %s holds %s", self.id, name)
                return await self._run_holding(name, stop, work)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.every)
        return False

    async def _run_holding(self, name: str, stop: asyncio.Event, work: Work) -> bool:
        lost = asyncio.Event()
        task: asyncio.Task[None] = asyncio.create_task(work(lost), name=name)
        stopping = asyncio.create_task(stop.wait())
        renewed = asyncio.get_running_loop().time()
        try:
            while True:
                await asyncio.wait(
                    [task, stopping], timeout=self.every, return_when=asyncio.FIRST_COMPLETED
                )
                if task.done():
                    if not task.cancelled() and task.exception() is not None:
                        log.error("%s stopped with an error: %r", name, task.exception())
                    return True
                if stop.is_set():
                    break
                now = asyncio.get_running_loop().time()
                held = await self._renew(name)
                if held is None and now - renewed < self.ttl - self.every:
                    continue  # the database did not answer; the lease is still ours a while
                if not held:
                    log.warning("replica %s lost the lease %s; stopping that work", self.id, name)
                    break
                renewed = now
            lost.set()  # stopping or lost: the work ends as its own stop asks, or is cancelled
            await asyncio.wait([task], timeout=self.every)
            return False
        finally:
            stopping.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            with contextlib.suppress(Exception):
                self.store.lease_release(name, self.id)

    async def _renew(self, name: str) -> bool | None:
        """True: renewed; False: another replica holds it; None: the database failed."""
        try:
            return await self.store.call(self.store.lease_renew, name, self.id, self.ttl)
        except Exception:
            log.exception("renewing the lease %s failed", name)
            return None
