"""The notification gate: everything Omega sends unasked passes here before it leaves.

Unasked is every message for the owner (alerts, proposals, self-healing, heartbeat findings,
digests), every reminder and an alert to a person; an answer to a message never passes here.
For whom it is decides the rules, in that person's time zone (their `timezone` fact, else
`[omega] timezone`); the owner's are those of the first of their routes that set quiet hours.
- `urgent` (a self-healing escalation, a security alert, the spending cap) always goes out.
- During the person's quiet hours (`/quiet 22:00-07:30`), a reminder they set for now (due
  within the last hour) goes out; everything else is held for their digest, unless they wrote
  to Omega on that route in the last AWAKE minutes: someone chatting is not asleep, and
  their messages are then treated as outside quiet hours (the cap still holds).
- Outside them a reminder goes out (they asked for it); anything else counts against
  `[limits] max_unasked_per_day` on their day, and past it is held for their digest.
- The digest: when the quiet hours end (without quiet hours, at 08:00 their time), one message
  per destination carries everything held for it, normal before low, oldest first.
A held message is in the store (memory/held.py) until its digest went out, so it survives a
restart, and rows are taken under a lease, so two replicas never send one digest. A digest its
channel keeps refusing is sent again each lease for GIVE_UP, then kept in the audit log. The gate
fails open: when the store cannot be read or written, the message goes out now.

The gateway applies `admit` in `send` and `deliver`; `run` is the digest's background job."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, time, timedelta, tzinfo

from omega.hours import QUIET_FACT, QuietHours, next_wall_time, quiet_hours_of
from omega.memory.audit import AuditEntry
from omega.memory.db import from_db_time
from omega.memory.held import HeldMessage, HoldReason
from omega.memory.store import Store
from omega.owner import OWNER
from omega.replica import replica_name
from omega.schedule import resolve_timezone
from omega.turn import PipelineDeps
from omega.types import OutgoingMessage

log = logging.getLogger(__name__)

MORNING = time(8, 0)  # when a digest of what the cap held goes out, for someone without quiet hours
FRESH = timedelta(hours=1)  # a reminder due this recently is one its person set for now
AWAKE = timedelta(minutes=15)  # someone who wrote this recently is awake: quiet hours wait
TICK_SECS = 60.0  # the digest job looks at least this often (holds made by other replicas)
# A digest its channel has refused since its oldest message was held this long ago (a channel
# taken out of the configuration, a chat that no longer exists) is given up: its whole text is
# kept in the audit log and the log says so, instead of a warning every lease, forever.
GIVE_UP = timedelta(days=7)
_ORDER = {"urgent": 0, "normal": 1, "low": 2}

Routes = Callable[[], Awaitable[list[tuple[str, str]]]]
Send = Callable[[OutgoingMessage], Awaitable[None]]


def unasked(message: OutgoingMessage) -> bool:
    """Whether Omega sends this of its own accord (for the owner, a reminder, an alert)."""
    return message.channel == OWNER or message.kind in ("reminder", "alert")


def _set_for_now(message: OutgoingMessage, now: datetime) -> bool:
    """A reminder due within the last hour: its id (`task:<id>@<due>`, loops.scheduler) says
    when it was due; one without that is taken as due now."""
    _, _, due = message.id.rpartition("@")
    try:
        return now - from_db_time(due) <= FRESH
    except ValueError:
        return True


class NotificationGate:
    """Holds what a person should not get now; sends each person's digest once it is due.

    `release` delivers a digest past the gate and raises when it could not (the rows stay
    taken and go out again once their lease runs out); `owner_routes` lists where the owner is
    reached now. `clock` (UTC) is there for tests to move."""

    def __init__(self, deps: PipelineDeps, release: Send, owner_routes: Routes) -> None:
        self.deps = deps
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self._release = release
        self._owner_routes = owner_routes
        self._taker = replica_name()

    async def admit(self, message: OutgoingMessage) -> bool:
        """True when `message` goes out now; False when it was held (in the store) for its
        person's digest."""
        if not unasked(message) or message.priority == "urgent":
            return True
        try:
            return await self._admit(message)
        except Exception:
            log.exception("the notification gate failed: this %s goes out now", message.kind)
            return True

    async def _admit(self, message: OutgoingMessage) -> bool:
        person, facts = await self._whose(message)
        zone = resolve_timezone(facts.get("timezone", ""), self.deps.config.omega.timezone)
        quiet = quiet_hours_of(facts.get(QUIET_FACT))
        now = self.clock()
        local = now.astimezone(zone)
        reminder = message.kind == "reminder"
        if quiet is not None and quiet.contains(local.time()):
            if reminder and _set_for_now(message, now):
                return True
            if not await self._awake(message, now):
                return await self._hold(person, message, "quiet", now, quiet.next_end(now, zone))
        cap = self.deps.config.limits.max_unasked_per_day
        if reminder or cap <= 0:
            return True
        store = self.deps.store
        if await store.call(store.count_unasked, person, local.date(), cap):
            return True
        morning = quiet.next_end(now, zone) if quiet else next_wall_time(now, MORNING, zone)
        return await self._hold(person, message, "cap", now, morning)

    async def _hold(
        self,
        person: str,
        message: OutgoingMessage,
        reason: HoldReason,
        now: datetime,
        until: datetime,
    ) -> bool:
        store = self.deps.store
        held = await store.call(store.hold_message, person, message, reason, now, until)
        log.info("%s for %s held (%s) until %s: #%d", message.kind, person, reason, until, held)
        return False

    async def _awake(self, message: OutgoingMessage, now: datetime) -> bool:
        """Whether the person wrote to Omega, where this message goes, within AWAKE of now
        (for the owner: on any route they are reached on)."""
        routes = (
            await self._owner_routes()
            if message.channel == OWNER
            else [(message.channel, message.target)]
        )
        store = self.deps.store
        heard = await store.call(store.last_heard, routes)
        return heard is not None and abs(now - heard) <= AWAKE

    async def _whose(self, message: OutgoingMessage) -> tuple[str, dict[str, str]]:
        """For whom a message is (their person key) and their facts."""
        store = self.deps.store
        if message.channel != OWNER:
            person = await store.call(store.known_person, message.channel, message.target)
            if person is None:  # a room, or someone never seen: no settings of their own
                return f"{message.channel}:{message.target}", {}
            return person, await store.call(store.facts, person)
        found: list[tuple[str, dict[str, str]]] = []
        for channel, target in await self._owner_routes():
            person = await store.call(store.known_person, channel, target)
            if person is not None and person not in (p for p, _ in found):
                found.append((person, await store.call(store.facts, person)))
        for person, facts in found:
            if QUIET_FACT in facts:
                return person, facts
        return found[0] if found else (OWNER, {})

    async def release_due(self) -> int:
        """Send every digest that is due: one message per destination with what was held for
        it. Returns how many digests went out."""
        store = self.deps.store
        now = self.clock()
        held = await store.call(store.take_held, self._taker, now)
        groups: dict[tuple[str, str], list[HeldMessage]] = {}
        for item in held:
            groups.setdefault((item.channel, item.target), []).append(item)
        sent = 0
        for (channel, target), items in groups.items():
            facts = await store.call(store.facts, items[0].person)
            zone = resolve_timezone(facts.get("timezone", ""), self.deps.config.omega.timezone)
            limit = self.deps.config.limits.max_unasked_per_day
            digest = OutgoingMessage(
                channel,
                target,
                digest_text(items, quiet_hours_of(facts.get(QUIET_FACT)), zone, limit),
                kind="status",
                id=f"held:{items[0].id}-{items[-1].id}",  # the same when sent again
                priority="low",
            )
            try:
                await self._release(digest)
            except Exception as exc:  # stays taken: sent again once the lease runs out
                if now - items[0].created_at < GIVE_UP:  # take_held gives the oldest first
                    log.warning("the digest for %s could not be sent: %s", items[0].person, exc)
                    continue
                await self._give_up(digest, items, exc)
            else:
                sent += 1
            await store.call(store.held_sent, [item.id for item in items], now)
        return sent

    async def _give_up(
        self, digest: OutgoingMessage, items: list[HeldMessage], exc: Exception
    ) -> None:
        """Keep an undeliverable digest's text in the audit log, say so in the log; its
        messages then count as done (GIVE_UP). `items` are the oldest first."""
        first = items[0].created_at
        log.error(
            "the digest for %s (%d held messages since %s) could not be sent for %d days and "
            "is given up; its text is in the audit log (event digest:undeliverable): %s",
            items[0].person,
            len(items),
            f"{first:%Y-%m-%d}",
            GIVE_UP.days,
            exc,
        )
        store = self.deps.store
        entry = AuditEntry(
            channel=digest.channel,
            sender_id=digest.target[:200],
            status="error",
            event="digest:undeliverable",
            output_text=digest.text,
            detail=f"{len(items)} held messages for {items[0].person}: {exc}"[:500],
        )
        await store.call(store.audit, entry)

    async def run(self, stop: asyncio.Event) -> None:
        """Send the digests as they fall due, at once at start (what a stopped Omega held),
        then at the next one's time or every TICK_SECS, until `stop`."""
        store = self.deps.store
        while not stop.is_set():
            delay = TICK_SECS
            try:
                await self.release_due()
                due = await store.call(store.next_held_release)
                if due is not None:
                    delay = min(TICK_SECS, max(1.0, (due - self.clock()).total_seconds()))
            except Exception:
                log.exception("sending the held messages' digests failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)


def digest_text(items: list[HeldMessage], quiet: QuietHours | None, zone: tzinfo, cap: int) -> str:
    """The digest of held messages: why they were held, then each with its local time."""
    reasons = {item.reason for item in items}
    why = []
    if "quiet" in reasons:
        why.append(f"during your quiet hours{f' ({quiet})' if quiet else ''}")
    if "cap" in reasons:
        why.append(f"past the day's limit of {cap} unasked messages")
    lines = [f"📬 {len(items)} held for you {' and '.join(why)}:"]
    for item in sorted(items, key=lambda i: (_ORDER[i.priority], i.id)):
        lines.append(f"[{item.created_at.astimezone(zone):%H:%M}] {item.text}")
    return "\n\n".join(lines)


def quiet_setting(store: Store, person: str, value: str, zone_name: str) -> str:
    """Show (no value), set (`22:00-07:30`) or remove (`off`) a person's quiet hours; the text
    to answer. Turning them off sends what they held at the next look. Call on the database
    thread (the /quiet command, `omega people quiet`, the web page)."""
    value = value.strip()
    current = quiet_hours_of(store.get_fact(person, QUIET_FACT))
    zone = store.get_fact(person, "timezone") or zone_name or "the system's time zone"
    if not value:
        waiting = store.held_waiting(person)
        held = f" {waiting} messages wait for the digest." if waiting else ""
        if current is None:
            return "No quiet hours set. Set them with /quiet 22:00-07:30." + held
        return f"Quiet hours: {current} ({zone}).{held}"
    if value.lower() in ("off", "none", "no"):
        store.delete_fact(person, QUIET_FACT)
        released = store.release_held_now(person, datetime.now(UTC))
        sent = f" The {released} held messages come in a minute." if released else ""
        return "Quiet hours off." + sent if current else "There were no quiet hours." + sent
    try:
        hours = QuietHours.parse(value)
    except ValueError as exc:
        return f"{exc}. Use /quiet 22:00-07:30, or /quiet off."
    store.set_fact(person, QUIET_FACT, str(hours))
    return (
        f"Quiet hours set: {hours} ({zone}). Meanwhile only urgent alerts and the reminders you "
        "set for that time reach you; the rest comes in one digest when they end."
    )
