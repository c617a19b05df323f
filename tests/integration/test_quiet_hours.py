"""The notification gate (issue 39), through the real gateway with a real store and a clock the
test moves: quiet hours set with /quiet hold a normal alert and a heartbeat finding until one
digest when they end, sent once; urgent alerts and the person's own reminder go through; the
daily cap holds the extra ones for the digest; held messages outlive the process that held
them, and two replicas send one digest. The same through `omega chat --jsonl` under faketime,
`omega people quiet` and the web page."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote
from zoneinfo import ZoneInfo

import pytest

from omega.gateway.gateway import Gateway
from omega.gateway.notify import unasked
from omega.gateway.pipeline import respond
from omega.hours import QUIET_FACT
from omega.loops.heartbeat import run_heartbeat
from omega.loops.scheduler import Scheduler
from omega.memory.audit import AuditEntry
from omega.owner import owner_alert
from omega.turn import PipelineDeps
from omega.turn.spend import refusal
from omega.types import IncomingMessage, OutgoingMessage
from tests.conftest import OMEGA_BIN, MakeDeps, jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.providers import DIRECT, ScriptedProvider
from tests.integration.web_support import RunningWeb, login

MADRID = ZoneInfo("Europe/Madrid")
OWNER_ID = "42"
ANA = "7"
ENV = {
    "OMEGA_OMEGA__TIMEZONE": "Europe/Madrid",
    "OMEGA_AUTH__OWNERS": f'["telegram:{OWNER_ID}"]',
    "OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS": f"[{OWNER_ID}]",
}


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """A wall-clock time in Madrid, January 2030, as UTC."""
    return datetime(2030, 1, day, hour, minute, tzinfo=MADRID).astimezone(UTC)


class Phone:
    """The owner's Telegram: any replica sends on it; it records what it got, and can fail."""

    name = "telegram"
    answers_from_any_replica = True

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []
        self.down = False
        self.attempts = 0  # sends tried, refused or not

    async def run(self, submit: object) -> None:
        await asyncio.Event().wait()

    async def send(self, message: OutgoingMessage) -> None:
        self.attempts += 1
        if self.down:
            raise ConnectionError("telegram is down")
        self.sent.append(message)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None

    def texts(self, kind: str = "") -> list[str]:
        """What arrived (of one kind)."""
        return [m.text for m in self.sent if not kind or m.kind == kind]


def gateway(deps: PipelineDeps, now: list[datetime]) -> tuple[Gateway, Phone]:
    """A gateway on the phone whose gate reads the time from `now[0]`."""
    phone = Phone()
    gate = Gateway(deps, [phone])
    gate.notify.clock = lambda: now[0]
    return gate, phone


async def say(gate: Gateway, text: str) -> None:
    """The owner writes on Telegram; returns once it is answered."""
    await (await gate.submit(IncomingMessage("telegram", OWNER_ID, text, assurance="platform")))


def held(deps: PipelineDeps) -> list[tuple[str, str, bool]]:
    """(reason, priority, sent) of every held message, in order."""
    rows = deps.store.query("SELECT reason, priority, sent_at FROM held_messages ORDER BY id")
    return [(row["reason"], row["priority"], row["sent_at"] is not None) for row in rows]


async def add_task(deps: PipelineDeps, person: str, description: str, due: datetime) -> None:
    """A reminder `person` set on Telegram, due at `due`."""
    await deps.store.call(
        lambda: deps.store.create_task(
            channel="telegram",
            sender_id=person,
            reply_target=person,
            description=description,
            due_at=due,
        )
    )


def test_an_alert_in_quiet_hours_waits_for_one_morning_digest(
    make_deps: MakeDeps, isolated_env: Path
) -> None:
    provider = ScriptedProvider("💧 You have not logged any water since noon.", plan=DIRECT)
    deps = make_deps(provider, **ENV)
    (isolated_env / "HEARTBEAT.md").write_text("- Am I drinking enough water?\n")
    now = [at(7, 21, 0)]

    async def run() -> list[int]:
        gate, phone = gateway(deps, now)
        await say(gate, "/quiet 22:00-07:30")
        assert "Quiet hours set: 22:00-07:30 (Europe/Madrid)" in phone.texts()[-1]
        now[0] = at(7, 23, 0)
        await gate.send(owner_alert("💾 The disk is 95% full."))
        now[0] = at(7, 23, 20)
        assert await run_heartbeat(deps, gate)  # a finding, for the owner
        assert not any("disk" in t or "water" in t for t in phone.texts())
        phone.sent.clear()
        counts = []
        for moment in (at(8, 7, 0), at(8, 7, 30), at(8, 7, 31), at(8, 12, 0)):
            now[0] = moment
            counts.append(await gate.notify.release_due())
        [digest] = phone.sent
        assert (digest.channel, digest.target, digest.kind) == ("telegram", OWNER_ID, "status")
        assert digest.id == "held:1-2"
        assert "held for you during your quiet hours (22:00-07:30)" in digest.text
        # Normal before low, each with the local time it was held.
        assert digest.text.index("[23:00] 💾 The disk") < digest.text.index("[23:20] 💧")
        return counts

    assert asyncio.run(run()) == [0, 1, 0, 0]  # when they end, and once
    assert held(deps) == [("quiet", "normal", True), ("quiet", "low", True)]


def quiet_around_now() -> tuple[datetime, str]:
    """The real time now (the inbox stamps messages with it) and quiet hours in Madrid that
    began an hour ago and end in three."""
    real = datetime.now(UTC)
    local = real.astimezone(MADRID)
    return real, f"{local - timedelta(hours=1):%H:%M}-{local + timedelta(hours=3):%H:%M}"


def test_someone_chatting_in_their_quiet_hours_is_awake_until_they_stop(
    make_deps: MakeDeps,
) -> None:
    deps = make_deps(ScriptedProvider("Sure.", plan=DIRECT), **ENV)
    real, quiet = quiet_around_now()
    now = [real]

    async def run() -> Phone:
        gate, phone = gateway(deps, now)
        await say(gate, f"/quiet {quiet}")  # they are writing: awake
        await gate.send(owner_alert("💾 The disk is 95% full."))
        now[0] = real + timedelta(minutes=20)  # the last message was 20 minutes ago
        await gate.send(owner_alert("a proposal waits"))
        return phone

    phone = asyncio.run(run())
    assert phone.texts("alert") == ["💾 The disk is 95% full."]
    assert held(deps) == [("quiet", "normal", False)]


def test_someone_else_chatting_does_not_wake_the_owner(make_deps: MakeDeps) -> None:
    env = {**ENV, "OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS": f"[{OWNER_ID}, {ANA}]"}
    deps = make_deps(ScriptedProvider("Hi Ana.", plan=DIRECT), **env)
    real, quiet = quiet_around_now()
    owner = deps.store.person_of("telegram", OWNER_ID)
    deps.store.set_fact(owner, QUIET_FACT, quiet)

    async def run() -> Phone:
        gate, phone = gateway(deps, [real])
        await (await gate.submit(IncomingMessage("telegram", ANA, "hello", assurance="platform")))
        await gate.send(owner_alert("💾 The disk is 95% full."))
        return phone

    phone = asyncio.run(run())
    assert phone.texts("alert") == [] and held(deps) == [("quiet", "normal", False)]


def test_urgent_alerts_go_through_quiet_hours(make_deps: MakeDeps) -> None:
    deps = make_deps(ScriptedProvider(plan=DIRECT), OMEGA_LIMITS__DAILY_USD="1", **ENV)
    now = [at(7, 21, 0)]

    async def run() -> Phone:
        gate, phone = gateway(deps, now)
        await say(gate, "/quiet 22:00-07:30")
        now[0] = at(8, 2, 0)
        # The spending cap, through its own path: today's calls cost more than the cap.
        entry = AuditEntry("telegram", OWNER_ID, "ok", provider="p", model="m", cost_usd=3.0)
        await deps.store.call(deps.store.audit, entry)
        assert await refusal(deps, "exchange") is not None
        await gate.send(owner_alert("🚨 SELF-HEALING ESCALATION: x", priority="urgent"))
        await gate.send(owner_alert("a proposal waits"))
        return phone

    phone = asyncio.run(run())
    alerts = phone.texts("alert")
    assert len(alerts) == 2 and "daily cap" in alerts[0] and "ESCALATION" in alerts[1]
    assert held(deps) == [("quiet", "normal", False)]
    assert deps.store.counts()["held_for_digest"] == 1  # `omega status`, the Health page


def test_the_persons_own_reminder_goes_through_quiet_hours(make_deps: MakeDeps) -> None:
    provider = ScriptedProvider(
        "Will do.\nSCHEDULE: take the pills | 2030-01-07T23:30 | once", plan=DIRECT
    )
    deps = make_deps(provider, **ENV)
    now = [at(7, 21, 0)]

    async def run() -> Phone:
        gate, phone = gateway(deps, now)
        await say(gate, "/quiet 22:00-07:30")
        await say(gate, "remind me at 23:30 to take the pills")
        # One set for the afternoon, due while Omega was down, fires late.
        await add_task(deps, OWNER_ID, "call the bank", at(7, 14, 0))
        phone.sent.clear()
        now[0] = at(7, 23, 30)
        scheduler = Scheduler(deps, gate, respond)
        assert await scheduler.run_due(now[0]) == 2
        return phone

    phone = asyncio.run(run())
    assert phone.texts() == ["Reminder: take the pills"]  # set for now: it goes through
    assert held(deps) == [("quiet", "normal", False)]  # the late one waits for the morning
    [(kind, text)] = deps.store.query("SELECT kind, text FROM held_messages")
    assert (kind, text) == ("reminder", "Reminder: call the bank")


def test_the_daily_cap_holds_the_extra_messages_for_the_digest(make_deps: MakeDeps) -> None:
    deps = make_deps(
        ScriptedProvider("Sure.\nSCHEDULE: stretch | 2030-01-07T12:05 | once", plan=DIRECT),
        OMEGA_LIMITS__MAX_UNASKED_PER_DAY="2",
        **ENV,
    )
    now = [at(7, 12, 0)]

    async def run() -> tuple[Phone, list[int]]:
        gate, phone = gateway(deps, now)
        await say(gate, "remind me to stretch at 12:05")
        phone.sent.clear()
        for number in range(1, 5):
            await gate.send(owner_alert(f"alert {number}"))
        await gate.send(owner_alert("security: the sandbox is off", priority="urgent"))
        now[0] = at(7, 12, 5)
        await Scheduler(deps, gate, respond).run_due(now[0])  # asked for: never capped
        sent = []
        for moment in (at(7, 23, 0), at(8, 7, 59), at(8, 8, 0)):
            now[0] = moment
            sent.append(await gate.notify.release_due())
        await gate.send(owner_alert("alert 5"))  # a new day, a new count
        return phone, sent

    phone, sent = asyncio.run(run())
    assert sent == [0, 0, 1]  # next morning at 08:00 (no quiet hours set)
    texts = phone.texts()
    assert texts[:4] == [
        "alert 1",
        "alert 2",
        "security: the sandbox is off",
        "Reminder: stretch",
    ]
    assert "past the day's limit of 2 unasked messages" in texts[4]
    assert "alert 3" in texts[4] and "alert 4" in texts[4]
    assert texts[5:] == ["alert 5"]
    assert held(deps) == [("cap", "normal", True), ("cap", "normal", True)]


def test_held_messages_outlive_their_process_and_two_replicas_send_one_digest(
    make_deps: MakeDeps,
) -> None:
    first = make_deps(ScriptedProvider(plan=DIRECT), **ENV)
    now = [at(7, 21, 0)]

    async def hold() -> None:
        gate, _ = gateway(first, now)
        await say(gate, "/quiet 22:00-07:30")
        now[0] = at(7, 23, 0)
        await gate.send(owner_alert("a proposal waits for review"))
        await gate.send(owner_alert("a tool keeps failing", priority="low"))

    asyncio.run(hold())
    # Two other processes on the same database (two connections: two replicas).
    replicas = [make_deps(ScriptedProvider(plan=DIRECT)) for _ in range(2)]
    now[0] = at(8, 7, 31)

    async def release() -> tuple[list[int], list[Phone]]:
        gates = [gateway(deps, now) for deps in replicas]
        counts = await asyncio.gather(*(gate.notify.release_due() for gate, _ in gates))
        again = await asyncio.gather(*(gate.notify.release_due() for gate, _ in gates))
        return [*counts, *again], [phone for _, phone in gates]

    counts, phones = asyncio.run(release())
    assert sorted(counts) == [0, 0, 0, 1]
    digests = [m for phone in phones for m in phone.sent]
    assert len(digests) == 1 and "a proposal waits for review" in digests[0].text
    assert held(first) == [("quiet", "normal", True), ("quiet", "low", True)]


async def anas_late_reminder_held(deps: PipelineDeps, now: list[datetime]) -> tuple[Gateway, Phone]:
    """Ana's quiet hours set (21:30-07:00), and her 18:00 reminder fired four hours late at
    22:00 (not one she set for that hour): held for her digest. `now` is moved to 22:00; the
    phone has recorded nothing yet."""
    gate, phone = gateway(deps, now)
    await (await gate.submit(IncomingMessage("telegram", ANA, "/quiet 21:30-07:00")))
    await add_task(deps, ANA, "water the plants", at(7, 18, 0))
    now[0] = at(7, 22, 0)
    assert await Scheduler(deps, gate, respond).run_due(now[0]) == 1
    phone.sent.clear()
    phone.attempts = 0
    return gate, phone


def with_ana(make_deps: MakeDeps) -> PipelineDeps:
    """Deps where Ana may talk to Omega on Telegram beside the owner."""
    env = {**ENV, "OMEGA_CHANNEL__TELEGRAM__ALLOWED_USERS": f"[{OWNER_ID}, {ANA}]"}
    return make_deps(ScriptedProvider(plan=DIRECT), **env)


def released_over(
    make_deps: MakeDeps, moves: list[tuple[datetime, bool]]
) -> tuple[list[int], Phone, PipelineDeps]:
    """Ana's late reminder held, then the digest job run at each (time, her phone down):
    the digests each run sent, her phone, the deps."""
    deps = with_ana(make_deps)
    now = [at(7, 21, 0)]

    async def run() -> tuple[list[int], Phone]:
        gate, phone = await anas_late_reminder_held(deps, now)
        counts = []
        for moment, down in moves:
            now[0], phone.down = moment, down
            counts.append(await gate.notify.release_due())
        return counts, phone

    counts, phone = asyncio.run(run())
    return counts, phone, deps


def test_a_persons_digest_that_could_not_be_sent_goes_out_once_its_lease_runs_out(
    make_deps: MakeDeps,
) -> None:
    counts, phone, _ = released_over(
        make_deps,
        [
            (at(8, 7, 0), True),  # taken, not sent
            (at(8, 7, 1), False),  # still the first taker's
            (at(8, 7, 3), False),  # its lease ran out
        ],
    )
    assert counts == [0, 0, 1]
    [digest] = phone.sent
    assert digest.target == ANA and "held for you during your quiet hours (21:30-07:00)" in (
        digest.text
    )
    assert "[18:00] Reminder: water the plants" not in digest.text  # held at 22:00
    assert "[22:00] Reminder: water the plants" in digest.text


def test_a_digest_its_channel_refuses_for_a_week_is_kept_in_the_audit_and_no_longer_tried(
    make_deps: MakeDeps,
) -> None:
    counts, phone, deps = released_over(
        make_deps,
        [
            *((at(day, 7, 0), True) for day in (8, 10, 14)),  # refused, tried again each lease
            (at(14, 22, 1), True),  # a week after it was held: given up
            (at(15, 7, 0), True),  # and never tried again
        ],
    )
    assert counts == [0, 0, 0, 0, 0] and phone.sent == []
    assert phone.attempts == 4  # three days' tries and the last, not one more
    [(status, target, text)] = deps.store.query(
        "SELECT status, sender_id, output_text FROM audit_log WHERE event = 'digest:undeliverable'"
    )
    assert (status, target) == ("error", ANA) and "Reminder: water the plants" in text
    assert held(deps) == [("quiet", "normal", True)]


@pytest.mark.no_store
def test_answers_never_pass_the_gate() -> None:
    assert not unasked(OutgoingMessage("telegram", "42", "hello", kind="reply"))
    assert not unasked(OutgoingMessage("telegram", "42", "step 1 of 3", kind="status"))
    assert unasked(OutgoingMessage("telegram", "42", "Reminder: x", kind="reminder"))
    assert unasked(owner_alert("heartbeat interval set", kind="status"))


def _chat(stamp: str, env: dict[str, str], *lines: dict[str, object]) -> list[dict[str, object]]:
    """`omega chat --jsonl` at a faked wall-clock time (UTC); the objects it wrote."""
    done = subprocess.run(
        ["faketime", stamp, OMEGA_BIN, "chat", "--jsonl"],
        input=jsonl(*lines),
        capture_output=True,
        text=True,
        env=dict(os.environ, **env),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _until(
    stamp: str, env: dict[str, str], done: Callable[[list[dict[str, object]]], bool]
) -> list[dict[str, object]]:
    """`omega chat --jsonl` at `stamp` with nothing typed, its input kept open until `done`
    holds for what it wrote or for the store (checked as each line comes and every 0.2 s)."""
    proc = subprocess.Popen(
        ["faketime", stamp, OMEGA_BIN, "chat", "--jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **env),
    )
    assert proc.stdin is not None and proc.stdout is not None
    events: list[dict[str, object]] = []
    finished = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            events.append(json.loads(line))
            if done(events):
                break
        finished.set()

    threading.Thread(target=read, daemon=True).start()
    try:  # `done` never holds: the test fails after a minute, never hangs
        assert any(finished.wait(0.2) or done(events) for _ in range(300)), events
    finally:
        proc.stdin.close()
        proc.stdin = None  # closed: communicate only reads
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return events + [json.loads(line) for line in rest.splitlines() if line.strip()]


@pytest.fixture
def teleport(fake_openai: FakeOpenAI) -> Iterator[dict[str, str]]:
    """The scripted provider: "teleport me" finds a gap, so an owner alert; "remind me" sets a
    reminder for 21:30."""
    fake_openai.script = [
        Step(
            match="teleport me",
            text="I can't do that.\nLIMITATION: No teleport | I cannot move people | build one",
        ),
        Step(match="remind me", text="Sure.\nSCHEDULE: stretch | 2030-01-07T21:30 | once"),
    ]
    yield openai_env(fake_openai, OMEGA_OMEGA__TIMEZONE="UTC", TZ="UTC")


def test_quiet_hours_through_omega_chat_across_restarts(
    teleport: dict[str, str], isolated_env: Path
) -> None:
    def waiting() -> int:
        with closing(connect_db(isolated_env / "memory.db")) as conn:
            rows = conn.execute("SELECT COUNT(*) FROM held_messages WHERE sent_at IS NULL")
            return int(rows.fetchone()[0])

    evening = _chat(
        "2030-01-07 21:00:00",
        teleport,
        {"text": "/quiet 22:00-07:30"},
        {"text": "remind me at 21:30 to stretch"},
    )
    [quiet] = [e for e in evening if "Quiet hours set" in str(e["text"])]
    assert "Quiet hours set: 22:00-07:30 (UTC)" in str(quiet["text"])
    # Omega was down at 21:30. At 23:00 the reminder fires late, in quiet hours, and nobody has
    # written for two hours: it is held, not sent.
    night = _until("2030-01-07 23:00:00", teleport, lambda _: waiting() == 1)
    assert not [e for e in night if "stretch" in str(e["text"])]
    # At 23:05 the owner writes: awake, so the alert their request raises reaches them now.
    awake = _chat("2030-01-07 23:05:00", teleport, {"text": "teleport me to Lisbon"})
    assert [e for e in awake if "No teleport" in str(e["text"]) and e["kind"] == "alert"]
    assert waiting() == 1

    # The next morning, a new process: the digest comes at once, and once.
    morning = _until(
        "2030-01-08 07:31:00", teleport, lambda e: "held for you" in str(e[-1:] and e[-1]["text"])
    )
    digests = [e for e in morning if "held for you" in str(e["text"])]
    assert len(digests) == 1 and "Reminder: stretch" in str(digests[0]["text"])
    assert digests[0]["kind"] == "status" and str(digests[0]["id"]).startswith("held:")
    later = _chat("2030-01-08 07:40:00", teleport, {"text": "/quiet"})
    assert "Quiet hours: 22:00-07:30 (UTC)." in str(later[-1]["text"])
    assert not [e for e in later if "held for you" in str(e["text"])]
    assert waiting() == 0

    # `omega people quiet`: the same setting from the command line.
    user = str(quiet["to"])
    shown = run_omega("people", "quiet", f"terminal:{user}", env=teleport)
    assert f"{user}: Quiet hours: 22:00-07:30" in shown.stdout, shown.stderr
    assert run_omega("people", "quiet", user, "25:00-07:00", env=teleport).returncode == 2
    off = run_omega("people", "quiet", user, "off", env=teleport)
    assert "Quiet hours off." in off.stdout, off.stderr
    assert "No quiet hours set." in run_omega("people", "quiet", user, env=teleport).stdout


def test_the_web_page_sets_a_persons_quiet_hours(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    running = RunningWeb(isolated_env, openai_env(fake_openai))
    try:
        client, csrf = login(running)
        own = {"Origin": running.base}
        with closing(client):
            page = client.get("/person?id=ana")
            assert page.status_code == 200 and 'placeholder="22:00-07:30"' in page.text
            form = {"csrf_token": csrf, "person": "ana", "hours": "22:30-06:45"}
            response = client.post("/person/quiet", headers=own, data=form)
            assert response.status_code == 303
            assert "Quiet hours set: 22:30-06:45" in unquote(response.headers["location"])
            assert 'value="22:30-06:45"' in client.get("/person?id=ana").text
            form["hours"] = "off"
            client.post("/person/quiet", headers=own, data=form)
        with closing(connect_db(isolated_env / "memory.db")) as conn:
            facts = conn.execute("SELECT key FROM facts WHERE sender_id = 'ana'").fetchall()
            events = conn.execute("SELECT event FROM audit_log WHERE event = 'person:quiet'")
            assert facts == [] and len(events.fetchall()) == 2
    finally:
        code, err = running.terminate()
    assert code == 0, err
