"""Merging two limitations the owner says are one gap (`/merge`, `omega limitations merge`):
the repeat's sightings count for the one kept, the repeat is resolved as merged and leaves
HEARTBEAT.md, and the change is audited. gaps/alike.py names the candidates."""

from __future__ import annotations

from pathlib import Path

from omega.evolution.gaps.limitations import Limitation, LimitationStore
from omega.memory.audit import AuditEntry
from omega.memory.db import utc_now
from omega.memory.store import Store


def merge_limitations(
    store: Store,
    heartbeat: Path,
    merged_id: int,
    into_id: int,
    *,
    channel: str,
    sender_id: str,
    request: str,
) -> Limitation:
    """Fold limitation `merged_id` into `into_id` (both open): its sightings count for the
    other, it is resolved as merged and leaves HEARTBEAT.md, and the change is audited.
    ValueError naming what is wrong otherwise."""
    repo = LimitationStore(store)
    merged, into = repo.get(merged_id), repo.get(into_id)
    if merged_id == into_id:
        raise ValueError("a limitation cannot be merged into itself")
    for key, found in ((merged_id, merged), (into_id, into)):
        if found is None or found.status != "open":
            raise ValueError(f"no open limitation {key}")
    assert merged is not None and into is not None
    with store.transaction() as conn:
        moved = conn.execute(
            "SELECT id, seen_with, source, first_seen, last_seen, count "
            "FROM limitation_sightings WHERE limitation_id = ?",
            (merged_id,),
        ).fetchall()
        for sighting, seen_with, source, first_seen, last_seen, count in moved:
            # Seen with the same person by the same source on both: one sighting, counted twice.
            updated = conn.execute(
                "UPDATE limitation_sightings SET count = count + ?, "
                "first_seen = CASE WHEN first_seen < ? THEN first_seen ELSE ? END, "
                "last_seen = CASE WHEN last_seen > ? THEN last_seen ELSE ? END "
                "WHERE limitation_id = ? AND seen_with = ? AND source = ?",
                (count, first_seen, first_seen, last_seen, last_seen, into_id, seen_with, source),
            ).rowcount
            if updated:
                conn.execute("DELETE FROM limitation_sightings WHERE id = ?", (sighting,))
            else:
                conn.execute(
                    "UPDATE limitation_sightings SET limitation_id = ? WHERE id = ?",
                    (into_id, sighting),
                )
        conn.execute(
            "UPDATE limitations SET status = 'resolved', resolved_at = ?, resolution = ?, "
            "resolved_by = ? WHERE id = ? AND status = 'open'",
            (utc_now(), f"merged into [{into_id}]", f"owner ({channel}:{sender_id})", merged_id),
        )
    diff = merged.remove_from(heartbeat)
    store.audit(
        AuditEntry(
            channel=channel,
            sender_id=sender_id,
            status="ok",
            event="limitation:merged",
            input_text=request[:2000],
            detail=f"[{merged_id}] into [{into_id}]\n{diff or '(not on HEARTBEAT.md)'}",
        )
    )
    return into
