"""The owner's daily digest of gaps seen with other people: a person's limitation (a LIMITATION
in their conversation, a planner gap) does not alert the owner at once; once a day the owner
gets one alert listing the new ones, each quoted as data with whom it was seen."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from omega.evolution.gaps.gap import PERSON
from omega.evolution.gaps.limitations import Limitation
from omega.memory.db import from_db_time, to_db_time
from omega.memory.store import Store
from omega.owner import owner_alert
from omega.text import neutralized
from omega.turn import Outbox

log = logging.getLogger(__name__)
DIGEST_EVERY = timedelta(days=1)
TICK_SECONDS = 3600.0  # how often the job looks whether a digest is due
MAX_ITEMS = 30  # lines in one digest; the rest wait for the next one
HEADER = "📋 Gaps seen with other people since the last digest (quoted, never instructions):"
FIELDS = (
    "id",
    "title",
    "description",
    "proposed_plan",
    "source",
    "status",
    "created_at",
    "resolved_at",
    "resolution",
    "resolved_by",
    "reported_by",
)


def _due(conn: sqlite3.Connection, now: datetime) -> bool:
    (last,) = conn.execute(
        "SELECT MAX(digested_at) FROM limitation_sightings WHERE seen_with LIKE ?",
        (f"{PERSON}%",),
    ).fetchone()
    return last is None or from_db_time(last) <= now - DIGEST_EVERY


def take_digest(store: Store, now: datetime) -> str | None:
    """The digest text when one is due (none in the last day) and there is something new,
    marking what it lists as told; else None. Call on the database thread."""
    with store.transaction() as conn:
        if not _due(conn, now):
            return None
        cursor = conn.execute(
            "SELECT s.id AS sighting, s.seen_with, s.source AS seen_by, s.count, "
            + ", ".join(f"l.{name}" for name in FIELDS)
            + " FROM limitation_sightings s JOIN limitations l ON l.id = s.limitation_id "
            "WHERE s.digested_at IS NULL AND s.seen_with LIKE ? ORDER BY s.id LIMIT ?",
            (f"{PERSON}%", MAX_ITEMS),
        )
        cursor.row_factory = sqlite3.Row
        rows = cursor.fetchall()
        if not rows:
            return None
        conn.executemany(
            "UPDATE limitation_sightings SET digested_at = ? WHERE id = ?",
            [(to_db_time(now), row["sighting"]) for row in rows],
        )
    lines = [HEADER]
    for row in rows:
        limitation = Limitation(**{name: row[name] for name in FIELDS})
        who = neutralized(str(row["seen_with"]).replace(":", " "), 60)
        times = f", {row['count']} times" if row["count"] > 1 else ""
        lines.append(f"- {limitation.quoted} — seen with {who} ({row['seen_by']}{times})")
    waiting = store.query(
        "SELECT id, kind, name FROM proposals WHERE status = 'pending' AND scope LIKE ? "
        "ORDER BY id",
        (f"{PERSON}%",),
    )
    if waiting:
        names = ", ".join(f"#{r['id']} {r['kind']} {neutralized(r['name'], 60)}" for r in waiting)
        lines.append(f"Proposals from other people's gaps wait for review: {names}.")
    lines.append("Review with /limitations and /proposals.")
    return "\n".join(lines)


async def send_digest(store: Store, out: Outbox, now: datetime) -> str | None:
    """Send the digest to the owner when one is due; returns what was sent."""
    text = await store.call(take_digest, store, now)
    if text is not None:
        await out.send(owner_alert(text, kind="alert", priority="low"))
    return text


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def digest_loop(
    store: Store,
    out: Outbox,
    stop: asyncio.Event,
    tick_seconds: float = TICK_SECONDS,
    clock: Callable[[], datetime] = _utc_now,
) -> None:
    """After each tick (never at start: a short `omega chat` sends none), send the digest when
    it is due; failures are logged and the loop goes on."""
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=tick_seconds)
        if stop.is_set():
            return
        try:
            await send_digest(store, out, clock())
        except Exception:
            log.exception("the gap digest failed")
