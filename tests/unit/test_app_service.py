"""The composition root (omega.app): what `omega start` runs is data it builds, and the order
in which the service comes up and goes down."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.app import Job, Service, bootstrap, build_chat, build_service, pipeline_deps, run_service
from omega.gateway.gateway import Gateway
from omega.memory import Store
from omega.types import Context, IncomingMessage, OutgoingMessage, Reply


def test_start_builds_its_channels_and_jobs_as_data(isolated_env: Path) -> None:
    isolated_env.mkdir(parents=True, exist_ok=True)
    (isolated_env / "config.toml").write_text(
        "[web]\nenabled = true\nport = 0\n\n[heartbeat]\nenabled = true\n", encoding="utf-8"
    )
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    try:
        service = build_service(runtime, store, jsonl=True)
        assert service.web is not None
        service.web.sock.close()
        assert [channel.name for channel in service.channels] == ["terminal", "web"]
        assert service.gateway.channels == {c.name: c for c in service.channels}
        assert [(job.name, job.lifetime) for job in service.jobs] == [
            ("replica", "service"),  # this process's beat in the replicas table
            ("web", "service"),
            ("quant", "service"),
            ("summarizer", "loop"),
            ("critic", "loop"),
            ("gap digest", "loop"),
            ("held digest", "loop"),
            ("scheduler", "loop"),
            ("heartbeat", "loop"),
        ]
        assert service.jobs[1].close == service.web.shutdown  # the page is closed, not cancelled
        assert service.fleet is not None
        assert [r.id for r in store.replicas(60)] == [service.fleet.id]
        assert service.summarize_on_exit and service.grace is None
    finally:
        store.close()


def test_chat_builds_the_terminal_and_the_loops(isolated_env: Path) -> None:
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    try:
        service = build_chat(runtime, store, jsonl=True)
        assert [channel.name for channel in service.channels] == ["terminal"]
        assert [job.name for job in service.jobs] == [
            "replica",
            "summarizer",
            "critic",
            "gap digest",
            "held digest",
            "scheduler",
        ]
        assert service.web is None and not service.summarize_on_exit
        assert service.grace == float("inf")  # a script reads every answer
    finally:
        store.close()


class Slow:
    """A provider that takes a while to answer, telling the test when it started."""

    name = "slow"

    def __init__(self, events: list[str], asked: asyncio.Event) -> None:
        self.events = events
        self.asked = asked

    def availability(self) -> tuple[bool, str]:
        return True, "test"

    async def prepare(self) -> None:
        for _ in range(5):  # long enough for the service jobs to start first
            await asyncio.sleep(0)
        self.events.append("provider prepared")

    async def complete(self, context: Context) -> Reply:
        if "answered" not in self.events:
            self.asked.set()
            await asyncio.sleep(0.3)
        return Reply(text="done", provider="slow", model="m")


class Desk:
    """A channel that sends one message at once and records its life."""

    name = "terminal"

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.stopped = asyncio.Event()

    async def run(self, submit: object) -> None:
        self.events.append("channel receiving")
        await submit(IncomingMessage("terminal", "ana", "hello", id="m-1", assurance="local"))  # type: ignore[operator]
        await self.stopped.wait()

    async def send(self, message: OutgoingMessage) -> None:
        if message.kind == "reply":
            self.events.append("answered")

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self.events.append("intake stopped")
        self.stopped.set()


def job(events: list[str], name: str, lifetime: str, closable: bool = False) -> Job:
    """A job that records its start and how it ended (closed, or cancelled)."""
    closed = asyncio.Event()

    async def run(stop: asyncio.Event) -> None:
        events.append(f"{name} up")
        try:
            await closed.wait()
        except asyncio.CancelledError:
            events.append(f"{name} cancelled")
            raise
        events.append(f"{name} closed")

    return Job(name, run, lifetime, close=closed.set if closable else None)  # type: ignore[arg-type]


def test_the_service_comes_up_and_goes_down_in_order(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Service jobs first, loops once the provider is prepared, channels last; down: intake,
    in-flight replies, loops, the summaries, then the service jobs (the page closed, not
    cancelled)."""
    import omega.loops.summarizer as summarizer

    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    events: list[str] = []
    asked = asyncio.Event()

    async def summarize(deps: object, **_: object) -> int:
        events.append("summarized")
        return 0

    monkeypatch.setattr(summarizer, "summarize_all_active", summarize)

    async def scenario() -> None:
        deps = pipeline_deps(runtime, store)
        deps.provider = Slow(events, asked)  # type: ignore[assignment]
        desk = Desk(events)
        jobs = [
            job(events, "web", "service", closable=True),
            job(events, "quant", "service"),
            job(events, "summarizer", "loop"),
        ]
        service = Service(deps, [desk], Gateway(deps, [desk]), jobs, summarize_on_exit=True)
        stop = asyncio.Event()
        running = asyncio.create_task(
            run_service(service, stop, on_ready=lambda: events.append("ready"))
        )
        await asyncio.wait_for(asked.wait(), 30)
        stop.set()  # while the reply is in flight
        await asyncio.wait_for(running, 30)

    try:
        asyncio.run(scenario())
    finally:
        store.close()
    prepared = events.index("provider prepared")
    assert events.index("web up") < prepared and events.index("quant up") < prepared
    assert prepared < events.index("summarizer up") < events.index("intake stopped")
    assert prepared < events.index("ready") and prepared < events.index("channel receiving")
    down = events[events.index("intake stopped") :]
    assert down == [
        "intake stopped",
        "answered",  # the in-flight reply finished before anything else went down
        "summarizer cancelled",
        "summarized",
        "web closed",
        "quant cancelled",
    ]


def test_a_job_that_does_not_end_when_closed_cannot_hold_up_the_stop(
    isolated_env: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A service job whose close does not end it (a web page holding a stream open, say) is
    cancelled once the stop's deadline comes, and the rest of the stop goes on."""
    runtime = bootstrap(isolated_env)
    store = Store(runtime.paths.db)
    events: list[str] = []
    asked = asyncio.Event()

    async def scenario() -> float:
        deps = pipeline_deps(runtime, store)
        deps.provider = Slow(events, asked)  # type: ignore[assignment]
        desk = Desk(events)
        stuck = job(events, "web", "service")
        stuck = Job(stuck.name, stuck.run, "service", close=lambda: events.append("asked to close"))
        jobs = [stuck, job(events, "quant", "service")]
        service = Service(deps, [desk], Gateway(deps, [desk]), jobs, stop_timeout=2.0)
        stop = asyncio.Event()
        running = asyncio.create_task(run_service(service, stop))
        await asyncio.wait_for(asked.wait(), 30)
        stop.set()
        began = asyncio.get_running_loop().time()
        await asyncio.wait_for(running, 10)  # unbounded before: the web job never ended
        return asyncio.get_running_loop().time() - began

    try:
        took = asyncio.run(scenario())
    finally:
        store.close()
    assert took < 2.0  # within the stop's deadline, before the hard stop would end the process
    down = events[events.index("intake stopped") :]
    assert down[-3] == "asked to close"
    assert set(down[-2:]) == {"web cancelled", "quant cancelled"}
    assert "job web did not end when closed: cancelled" in caplog.text
