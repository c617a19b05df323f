"""Several replicas on one memory.db, in process: the scheduler's claim of an occurrence,
the lease wrapper around jobs and channels, and web sessions shared through the store."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omega.app.fleet import Fleet
from omega.app.jobs import Job
from omega.app.leadership import lead
from omega.channels.base import Submit
from omega.gateway.pipeline import respond
from omega.loops.scheduler import Scheduler
from omega.memory import Store
from omega.memory.db import to_db_time
from omega.types import OutgoingMessage
from omega.web.security import Sessions
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import ScriptedProvider


def test_two_schedulers_fire_one_occurrence_of_a_repeating_task_once(
    make_deps: MakeDeps,
) -> None:
    one, two = make_deps(ScriptedProvider()), make_deps(ScriptedProvider())
    due = datetime.now(UTC) - timedelta(minutes=1)
    task_id, _ = one.store.create_task(
        channel="terminal", sender_id="ana", reply_target="ana", description="stretch",
        due_at=due, repeat="daily", timezone="UTC",
    )  # fmt: skip
    (stale,) = two.store.due_tasks(datetime.now(UTC))  # replica two read it...
    out_one, out_two = Recorder(), Recorder()
    assert asyncio.run(Scheduler(one, out_one, respond).run_due()) == 1  # ...one fired it
    moved = one.store.task(task_id)
    assert moved is not None and moved.status == "pending" and moved.due_at > due
    # Pending again (tomorrow), but the occurrence two read is gone: it cannot fire it again.
    assert not asyncio.run(Scheduler(two, out_two, respond).fire(stale))
    assert len(out_one.sent) == 1 and out_two.sent == []


async def _run_for(seconds: float, *jobs: Job) -> list[asyncio.Task[None]]:
    stop = asyncio.Event()
    tasks = [asyncio.create_task(job.run(stop)) for job in jobs]
    await asyncio.sleep(seconds)
    return tasks


def test_a_leased_job_runs_on_one_replica_and_moves_when_its_holder_dies(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    ran: list[str] = []

    def job(who: str) -> Job:
        async def run(stop: asyncio.Event) -> None:
            while not stop.is_set():
                ran.append(who)
                await asyncio.sleep(0.05)

        return Job("heartbeat", run)

    fleet_a, fleet_b = Fleet(a, 0.6, "A"), Fleet(b, 0.6, "B")

    async def scenario() -> tuple[set[str], set[str], set[str]]:
        task_a = asyncio.create_task(fleet_a.leased(job("A")).run(asyncio.Event()))
        await asyncio.sleep(0.1)
        task_b = asyncio.create_task(fleet_b.leased(job("B")).run(asyncio.Event()))
        await asyncio.sleep(0.5)
        first = set(ran)
        ran.clear()
        # A dies: it stops without releasing (kill -9 runs no finally).
        a.lease_release = lambda *args: False  # type: ignore[method-assign]
        task_a.cancel()
        await asyncio.gather(task_a, return_exceptions=True)
        await asyncio.sleep(0.15)
        gap = set(ran)
        await asyncio.sleep(1.2)  # within two lease times B takes over
        after = set(ran)
        task_b.cancel()
        await asyncio.gather(task_b, return_exceptions=True)
        return first, gap, after

    first, gap, after = asyncio.run(scenario())
    assert first == {"A"}
    # B waits for the lease to expire. (A's job may log once more as it is cancelled: the
    # leased run cancels it in its own turn, after the test's cancel.)
    assert "B" not in gap
    assert after == {"B"}
    assert b.leases() == []  # B was stopped cleanly: released
    a.close()
    b.close()


class _Polling:
    """A channel that counts while it receives."""

    def __init__(self, name: str = "telegram") -> None:
        self._name = name
        self.receiving = 0
        self.sent: list[str] = []
        self.messages: list[OutgoingMessage] = []
        self._stop = asyncio.Event()

    @property
    def name(self) -> str:
        return self._name

    async def run(self, submit: Submit) -> None:
        self.receiving += 1
        await self._stop.wait()

    async def send(self, message: OutgoingMessage) -> None:
        self.sent.append(message.text)
        self.messages.append(message)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self._stop.set()


def test_an_unshared_channel_receives_on_one_replica_and_sends_from_all(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    inner_a, inner_b = _Polling(), _Polling()
    led_a = lead(inner_a, Fleet(a, 0.6, "A"), sends_anywhere=True)
    led_b = lead(inner_b, Fleet(b, 0.6, "B"), sends_anywhere=True)

    async def submit(message: object) -> asyncio.Future[None]:
        raise AssertionError("nothing is received here")

    async def scenario() -> None:
        run_a = asyncio.create_task(led_a.run(submit))
        await asyncio.sleep(0.1)
        run_b = asyncio.create_task(led_b.run(submit))
        await asyncio.sleep(0.3)
        assert (inner_a.receiving, inner_b.receiving) == (1, 0)
        await led_b.send(OutgoingMessage("telegram", "42", "from B"))
        assert inner_b.sent == ["from B"]  # a follower still sends
        await led_a.stop()  # a clean stop hands the lease over at B's next try
        await run_a
        await asyncio.sleep(0.4)
        assert inner_b.receiving == 1 and led_b.leading
        await led_b.stop()
        await run_b

    asyncio.run(scenario())
    assert a.leases() == []
    a.close()
    b.close()


def test_a_follower_relays_what_only_the_leader_can_send(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    inner_a, inner_b = _Polling("whatsapp"), _Polling("whatsapp")
    led_a, led_b = lead(inner_a, Fleet(a, 0.6, "A")), lead(inner_b, Fleet(b, 0.6, "B"))

    async def submit(message: object) -> asyncio.Future[None]:
        raise AssertionError("nothing is received here")

    photo = bytes(range(256))
    sent = OutgoingMessage("whatsapp", "351900", "a chart", photo=photo, id="r1", reply_to="m1")

    async def scenario() -> None:
        run_a = asyncio.create_task(led_a.run(submit))
        await asyncio.sleep(0.1)
        run_b = asyncio.create_task(led_b.run(submit))
        await led_b.send(sent)
        await led_b.send(OutgoingMessage("whatsapp", "351900", "second"))
        await led_b.send_typing("351900")  # not relayed
        for _ in range(30):
            if len(inner_a.messages) == 2:
                break
            await asyncio.sleep(0.1)
        await led_a.stop()
        await led_b.stop()
        await asyncio.gather(run_a, run_b)

    asyncio.run(scenario())
    assert inner_b.messages == []  # the follower's own session never sent
    assert inner_a.messages == [sent, OutgoingMessage("whatsapp", "351900", "second")]
    a.close()
    b.close()


def test_a_web_login_on_one_replica_is_valid_on_another(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    on_a = Sessions(tmp_path / "a" / "web.url", "http://127.0.0.1:1", 1, a)
    on_b = Sessions(tmp_path / "b" / "web.url", "http://127.0.0.1:2", 1, b)
    token_a = on_a.new_login_link().split("token=")[1]
    token_b = on_b.new_login_link().split("token=")[1]  # B's start leaves A's link valid

    async def scenario() -> None:
        session = await on_b.login(token_a)
        assert session is not None
        assert await on_a.get(session.id) == session  # the cookie holds on A
        assert await on_a.login(token_a) is None  # the token was used up on B
        await on_a.logout(session.id)
        assert await on_b.get(session.id) is None
        assert await on_a.login(token_b) is not None  # B's own link works on A
        assert await on_b.login(token_b) is None  # ...once: refused on B, which notices

    asyncio.run(scenario())
    # Each page whose link was used elsewhere wrote a fresh one when the old one was refused.
    for folder, used in (("a", token_a), ("b", token_b)):
        link = (tmp_path / folder / "web.url").read_text()
        assert used not in link and a.web_token_valid(link.strip().split("token=")[1])
    a.close()
    b.close()


def test_a_task_added_on_another_replica_fires_without_waiting_for_the_poll_interval(
    make_deps: MakeDeps,
) -> None:
    env = {"OMEGA_STORE__LEASE_SECONDS": "1.5", "OMEGA_SCHEDULER__POLL_INTERVAL_SECS": "3600"}
    one, two = make_deps(ScriptedProvider(), **env), make_deps(ScriptedProvider(), **env)
    one.store.replica_register("h:1:a", "h", 1, "0")
    two.store.replica_register("h:2:b", "h", 2, "0")
    out = Recorder()

    async def scenario() -> None:
        stop = asyncio.Event()
        running = asyncio.create_task(Scheduler(one, out, respond).run(stop))
        await asyncio.sleep(0.2)
        # Added through the other replica: `one`'s in-memory tasks_changed is never set.
        two.store.create_task(
            channel="terminal", sender_id="ana", reply_target="ana", description="stretch",
            due_at=datetime.now(UTC) + timedelta(seconds=0.2), timezone="UTC",
        )  # fmt: skip
        for _ in range(40):
            if out.sent:
                break
            await asyncio.sleep(0.1)
        stop.set()
        await running

    asyncio.run(scenario())
    assert [m.text for m in out.sent] == ["Reminder: stretch"]


class _Pairing(_Polling):
    """A channel that pairs itself to an account (as WhatsApp does)."""

    def attach(self, send: object) -> None:
        self.attached = send

    async def request_pairing(self, channel: str, target: str, phone: str = "") -> str:
        return "pairing started"


def test_pairing_starts_only_on_the_replica_holding_the_session(tmp_path: Path) -> None:
    from omega.channels.base import PairingChannel

    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    led_a = lead(_Pairing("whatsapp"), Fleet(a, 0.6, "host:1:a"))
    led_b = lead(_Pairing("whatsapp"), Fleet(b, 0.6, "host:2:b"))
    assert isinstance(led_a, PairingChannel) and isinstance(led_b, PairingChannel)

    async def submit(message: object) -> asyncio.Future[None]:
        raise AssertionError("nothing is received here")

    async def scenario() -> tuple[str, str]:
        run_a = asyncio.create_task(led_a.run(submit))
        await asyncio.sleep(0.1)
        run_b = asyncio.create_task(led_b.run(submit))
        on_a = await led_a.request_pairing("terminal", "owner")
        on_b = await led_b.request_pairing("terminal", "owner")
        await led_a.stop()
        await led_b.stop()
        await asyncio.gather(run_a, run_b)
        return on_a, on_b

    on_a, on_b = asyncio.run(scenario())
    assert on_a == "pairing started"
    assert "host:1:a" in on_b and "pairing happens there" in on_b
    a.close()
    b.close()


def test_a_replica_that_lost_a_job_s_lease_waits_for_it_again(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    runs: list[str] = []

    async def work(stop: asyncio.Event) -> None:
        runs.append("start")
        await stop.wait()
        runs.append("stop")

    async def scenario() -> None:
        stop = asyncio.Event()
        fleet = Fleet(a, 0.6, "A")
        task = asyncio.create_task(fleet.leased(Job("critic", work)).run(stop))
        await asyncio.sleep(0.1)
        # Another replica took the lease over (A stalled past its expiry, say): B's until
        # half a second from now.
        until = to_db_time(datetime.now(UTC) + timedelta(seconds=0.5))
        with b.transaction() as conn:
            conn.execute("UPDATE leases SET holder = 'B', expires_at = ?", (until,))
        await asyncio.sleep(0.5)
        assert runs == ["start", "stop"]  # A noticed at its renewal and stopped the job
        await asyncio.sleep(0.8)  # B's lease expired: A takes it again
        assert runs == ["start", "stop", "start"]
        stop.set()
        await task

    asyncio.run(scenario())
    a.close()
    b.close()


def test_a_channel_whose_lease_was_lost_stops_receiving_and_a_fresh_one_waits(
    tmp_path: Path,
) -> None:
    a = Store(tmp_path / "memory.db")
    made: list[_Polling] = []

    def rebuild() -> _Polling:
        made.append(_Polling())
        return made[-1]

    first = _Polling()
    led = lead(first, Fleet(a, 0.6, "A"), rebuild, sends_anywhere=True)

    async def submit(message: object) -> asyncio.Future[None]:
        raise AssertionError("nothing is received here")

    async def scenario() -> None:
        running = asyncio.create_task(led.run(submit))
        await asyncio.sleep(0.1)
        assert first.receiving == 1
        until = to_db_time(datetime.now(UTC) + timedelta(seconds=0.5))
        with a.transaction() as conn:  # another replica took it over
            conn.execute("UPDATE leases SET holder = 'B', expires_at = ?", (until,))
        await asyncio.sleep(0.4)
        assert first._stop.is_set() and not led.leading  # no second getUpdates consumer
        await asyncio.sleep(1.0)  # B's lease expired without renewal: A leads again
        assert len(made) == 1 and made[0].receiving == 1 and led.inner is made[0]
        await led.stop()
        await running

    asyncio.run(scenario())
    a.close()


def test_a_replica_starting_releases_the_leases_of_a_dead_process_on_its_machine(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    from omega.replica import pid_space

    store = Store(tmp_path / "memory.db")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], stdout=-1)
    dead_pid, live_pid = int(gone.stdout), os.getppid()
    here = pid_space()
    for replica, pid, host in (("dead", dead_pid, here), ("live", live_pid, here)):
        store.replica_register(replica, host, pid, "0")
        assert store.lease_acquire(f"job:{replica}", replica, 60)
    store.replica_register("elsewhere", "other-machine", dead_pid, "0")
    assert store.lease_acquire("job:elsewhere", "elsewhere", 60)
    Fleet(store, 60).register()
    # Released at once (not after 60 s): the dead process on this machine's; the others stay.
    assert sorted(lease.name for lease in store.leases()) == ["job:elsewhere", "job:live"]
    store.close()
