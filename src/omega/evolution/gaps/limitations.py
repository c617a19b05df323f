"""Limitations: what Omega knows it cannot do yet, recorded once whoever saw it (deduplicated
by meaning), with a sighting per person and source, tracked until resolved (and kept afterwards
for the audit). The owner's own gaps alert at once; another person's wait for the daily digest."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from omega.checklist import add_item, remove_line_of
from omega.evolution.gaps.alike import merge_hint, possibly_same
from omega.evolution.gaps.gap import (
    MAX_TITLE,
    OWNER_REPORTED,
    PERSON,
    Caps,
    Gap,
    Source,
    clean_title,
    gap_of,
    same_gap,
)
from omega.memory.audit import AuditEntry
from omega.memory.db import to_db_time, utc_now
from omega.memory.store import Store
from omega.text import neutralized, quote_untrusted, row_id
from omega.turn import MarkerContext, audit_change, owner_message

log = logging.getLogger(__name__)
MAX_TEXT = 1000
QUOTED_CHARS = 300  # what HEARTBEAT.md and an owner alert quote of anyone else's words


@dataclass(frozen=True)
class Limitation:
    """One recorded limitation."""

    id: int
    title: str
    description: str
    proposed_plan: str
    source: str
    status: str
    created_at: str
    resolved_at: str | None = None
    resolution: str = ""
    resolved_by: str = ""
    reported_by: str = ""  # owner, person:<key>, tool critic, heartbeat, integrity check

    @property
    def from_person(self) -> bool:
        """Whether its words are another person's (not the owner's, not Omega's own checks):
        rate-limited per person, and told to the owner in the daily digest, not at once."""
        return self.reported_by.startswith(PERSON)

    @property
    def trusted(self) -> bool:
        """Whether its words are the owner's (a turn answering the owner) and may be a
        checklist line as they are."""
        return self.reported_by == OWNER_REPORTED

    @property
    def text(self) -> str:
        """Title and description, as recorded."""
        return f"{self.title} — {self.description}" if self.description else self.title

    @property
    def label(self) -> str:
        """`limitation #12, reported by tool critic`: what it is and whose words it quotes."""
        source = self.reported_by or f"{self.source} (before sources were kept)"
        return f"limitation #{self.id}, reported by {neutralized(source.replace(':', ' '), 60)}"

    @property
    def quoted(self) -> str:
        """Its text as data for HEARTBEAT.md, a prompt or an alert: the owner's as it is, anyone
        else's quoted, truncated, marker-free and marked with its source."""
        if self.trusted:
            return self.text
        return quote_untrusted(self.text, self.label, QUOTED_CHARS)

    @property
    def tag(self) -> str:
        """`limitation #12`: what its HEARTBEAT.md line carries so that only that line goes."""
        return f"limitation #{self.id}"

    @property
    def checklist_line(self) -> str:
        """How it appears in HEARTBEAT.md while open (with its tag; a quoted one has it in
        its label)."""
        if self.trusted:
            return f"- [ ] {self.quoted} ({self.tag})"
        return f"- [ ] {self.quoted}"

    def remove_from(self, heartbeat: Path) -> str:
        """Take its own line off HEARTBEAT.md, nothing else (the diff, "" if none): the line
        with its tag, or one written before tags as exactly its title (and description)."""
        legacy = (self.text, self.title)
        return remove_line_of(heartbeat, self.tag, legacy)


class LimitationStore:
    """The limitations table; call its methods on the store's database thread."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(
        self,
        title: str,
        description: str = "",
        plan: str = "",
        source: Source = "marker",
        reported_by: str = "",
    ) -> tuple[Limitation, bool]:
        """Record a limitation; (existing one, False) when the title is known (any case).
        `reported_by` says whose words it is (only OWNER_REPORTED is trusted)."""
        title = " ".join(title.split())[:MAX_TITLE]
        if not title:
            raise ValueError("a limitation needs a title")
        with self.store.transaction() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO limitations (title, description, proposed_plan, source, "
                "created_at, reported_by) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    title,
                    description.strip()[:MAX_TEXT],
                    plan.strip()[:MAX_TEXT],
                    source,
                    utc_now(),
                    reported_by,
                ),
            )
            created = cursor.rowcount == 1
        found = self.by_title(title)
        assert found is not None
        return found, created

    def record(self, gap: Gap, caps: Caps, now: datetime | None = None) -> tuple[Limitation, bool]:
        """Record a sighting of `gap`: (the known limitation, False) when it is one already
        (by title or meaning), else (the new one, True). PermissionError when the person's
        daily cap or the hourly cap is reached (a repeat of their own sighting is only
        counted, never refused)."""
        title = clean_title(gap.title)
        if not title:
            raise ValueError("a limitation needs a title")
        moment = now or datetime.now(UTC)
        stamp = to_db_time(moment)
        with self.store.transaction() as conn:
            cursor = conn.execute("SELECT * FROM limitations ORDER BY id")
            cursor.row_factory = sqlite3.Row
            rows = cursor.fetchall()
            known = next(
                (
                    item
                    for item in map(_limitation, rows)
                    if same_gap(gap, item.title, item.source, item.status == "open")
                ),
                None,
            )
            if known is not None:
                sighting = conn.execute(
                    "SELECT id FROM limitation_sightings WHERE limitation_id = ? AND "
                    "seen_with = ? AND source = ?",
                    (known.id, gap.seen_with, gap.source),
                ).fetchone()
                if sighting is not None:  # seen before with them: only counted
                    conn.execute(
                        "UPDATE limitation_sightings SET count = count + 1, last_seen = ? "
                        "WHERE id = ?",
                        (stamp, sighting[0]),
                    )
                    return known, False
            if gap.seen_with.startswith(PERSON):
                day_ago = to_db_time(moment - timedelta(days=1))
                (seen,) = conn.execute(
                    "SELECT COUNT(*) FROM limitation_sightings WHERE seen_with = ? "
                    "AND first_seen >= ?",
                    (gap.seen_with, day_ago),
                ).fetchone()
                if seen >= caps.per_person_day:
                    raise PermissionError(
                        f"more than {caps.per_person_day} limitations a day from one person; "
                        "this one is dropped"
                    )
            created = known is None
            if known is None:
                hour_ago = to_db_time(moment - timedelta(hours=1))
                (recent,) = conn.execute(
                    "SELECT COUNT(*) FROM limitations WHERE created_at >= ?", (hour_ago,)
                ).fetchone()
                if recent >= caps.per_hour:
                    raise PermissionError(
                        f"more than {caps.per_hour} new limitations in an hour; this one is dropped"
                    )
                cursor = conn.execute(
                    "INSERT INTO limitations (title, description, proposed_plan, source, "
                    "created_at, reported_by) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        title,
                        gap.description.strip()[:MAX_TEXT],
                        gap.plan.strip()[:MAX_TEXT],
                        gap.source,
                        stamp,
                        gap.reported_by,
                    ),
                )
                limitation_id = int(cursor.lastrowid or 0)
            else:
                limitation_id = known.id
            conn.execute(
                "INSERT INTO limitation_sightings (limitation_id, seen_with, source, "
                "first_seen, last_seen) VALUES (?, ?, ?, ?, ?)",
                (limitation_id, gap.seen_with, gap.source, stamp, stamp),
            )
        found = self.get(limitation_id)
        assert found is not None
        return found, created

    def sightings(self, limitation_id: int) -> list[dict[str, object]]:
        """Who saw a limitation, by which source, when and how often (oldest first)."""
        rows = self.store.query(
            "SELECT seen_with, source, first_seen, last_seen, count FROM limitation_sightings "
            "WHERE limitation_id = ? ORDER BY id",
            (limitation_id,),
        )
        return [dict(row) for row in rows]

    def people_seen(self) -> dict[int, int]:
        """How many people other than the owner each limitation was seen with, by id."""
        rows = self.store.query(
            "SELECT limitation_id, COUNT(DISTINCT seen_with) AS n FROM limitation_sightings "
            "WHERE seen_with LIKE ? GROUP BY limitation_id",
            (f"{PERSON}%",),
        )
        return {int(row["limitation_id"]): int(row["n"]) for row in rows}

    def created_since(self, since: str) -> int:
        """How many limitations were recorded at or after `since` (an ISO UTC time)."""
        rows = self.store.query(
            "SELECT COUNT(*) AS n FROM limitations WHERE created_at >= ?", (since,)
        )
        return int(rows[0]["n"])

    def by_title(self, title: str) -> Limitation | None:
        """The limitation with this title, compared case-insensitively."""
        rows = self.store.query(
            "SELECT * FROM limitations WHERE lower(title) = lower(?)", (title.strip(),)
        )
        return _limitation(rows[0]) if rows else None

    def get(self, limitation_id: int) -> Limitation | None:
        """One limitation by id."""
        rows = self.store.query("SELECT * FROM limitations WHERE id = ?", (limitation_id,))
        return _limitation(rows[0]) if rows else None

    def list(self, status: Literal["open", "resolved"] | None = None) -> list[Limitation]:
        """Limitations, oldest first, optionally only open or resolved ones."""
        if status is None:
            rows = self.store.query("SELECT * FROM limitations ORDER BY id")
        else:
            rows = self.store.query(
                "SELECT * FROM limitations WHERE status = ? ORDER BY id", (status,)
            )
        return [_limitation(row) for row in rows]

    def resolve(self, key: str, resolution: str = "", by: str = "owner") -> Limitation | None:
        """Mark an open limitation (by id or title) resolved; None if there is no such one."""
        number = row_id(key)
        if key.strip().isdecimal():  # an id (one past any row's: none), never a title
            found = self.get(number) if number is not None else None
        else:
            found = self.by_title(key)
        if found is None or found.status != "open":
            return None
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE limitations SET status = 'resolved', resolved_at = ?, resolution = ?, "
                "resolved_by = ? WHERE id = ?",
                (utc_now(), resolution.strip()[:MAX_TEXT], by, found.id),
            )
        return self.get(found.id)


def _limitation(row: object) -> Limitation:
    return Limitation(**dict(row))  # type: ignore[call-overload]


def alert_text(limitation: Limitation) -> str:
    """The owner's alert for a new limitation; anyone else's words only quoted."""
    if limitation.trusted:
        text = f"New limitation detected: {limitation.text}"
        if limitation.proposed_plan:
            text += f"\nProposed plan: {limitation.proposed_plan}"
        return text
    text = f"New limitation detected (quoted, not an instruction): {limitation.quoted}"
    if limitation.proposed_plan:
        plan = quote_untrusted(limitation.proposed_plan, "proposed plan", QUOTED_CHARS)
        text += f"\n{plan}"
    return text


async def raise_limitation(
    ctx: MarkerContext, title: str, description: str, plan: str, source: Source
) -> tuple[Limitation, bool]:
    """Record a sighting of a gap (the one way every source records one); when it is new and
    the owner's or a check's, alert the owner at once and add it to HEARTBEAT.md (a checklist
    line when the owner's own, else quoted with its source). Another person's new gap is only
    recorded: the owner hears of it in the daily digest (evolution.digest). PermissionError when
    a cap is reached."""
    gap = gap_of(ctx, title, description, plan, source)
    limits = ctx.config.limits
    caps = Caps(limits.max_limitations_per_hour, limits.max_limitations_per_person_per_day)
    limitation, created = await ctx.store.call(LimitationStore(ctx.store).record, gap, caps)
    if not created:
        return limitation, False
    diff = ""
    if not limitation.from_person:  # a person's words never reach the owner's checklist
        try:
            diff = await ctx.store.call(
                add_item, ctx.paths.heartbeat, limitation.checklist_line[2:]
            )
        except ValueError as exc:  # the checklist is full: the limitation is still recorded
            log.warning("limitation %s not added to HEARTBEAT.md: %s", limitation.id, exc)
    await audit_change(
        ctx,
        f"limitation:{gap.source}",
        f"{title} | {description} | {plan}",
        diff or ("(for the digest)" if limitation.from_person else "(already on HEARTBEAT.md)"),
    )
    if not limitation.from_person:
        open_ones = await ctx.store.call(LimitationStore(ctx.store).list, "open")
        alike = possibly_same(limitation, open_ones)
        hint = merge_hint(limitation, alike) if alike else ""  # the owner decides: one gap?
        await ctx.notify(owner_message(ctx, alert_text(limitation) + hint, kind="alert"))
    return limitation, True


async def resolve_limitation(
    ctx: MarkerContext, key: str, resolution: str, by: str
) -> Limitation | None:
    """Resolve an open limitation and take it off HEARTBEAT.md; the record stays."""
    repo = LimitationStore(ctx.store)
    resolved = await ctx.store.call(repo.resolve, key, resolution, by)
    if resolved is None:
        return None
    diff = await ctx.store.call(resolved.remove_from, ctx.paths.heartbeat)
    await audit_change(
        ctx,
        "limitation:resolved",
        f"{resolved.title} | {resolution}",
        diff or "(not on HEARTBEAT.md)",
    )
    return resolved


def resolve_by_owner(
    store: Store,
    heartbeat: Path,
    key: str,
    note: str,
    *,
    by: str,
    channel: str,
    sender_id: str,
    request: str,
) -> Limitation | None:
    """The owner resolves a limitation (CLI, chat command, web page): it is marked resolved,
    taken off HEARTBEAT.md and the change is audited with its diff. None if no open one."""
    resolved = LimitationStore(store).resolve(key, note, by=by)
    if resolved is None:
        return None
    diff = resolved.remove_from(heartbeat)
    store.audit(
        AuditEntry(
            channel=channel,
            sender_id=sender_id,
            status="ok",
            event="limitation:resolved",
            input_text=request[:2000],
            detail=f"cause: {by}\n{diff or '(not on HEARTBEAT.md)'}",
        )
    )
    return resolved
