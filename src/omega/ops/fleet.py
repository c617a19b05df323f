"""The fleet as `omega status` and the web page's Health page show it: each replica sharing
this database (alive or not, seen how long ago, the leases it holds) and each lease (who
holds it, until when)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omega.memory import Store


@dataclass(frozen=True)
class FleetRow:
    """One line: a replica or a lease, and what to say about it."""

    kind: str  # "replica" or "lease"
    name: str
    state: str
    good: bool


def _ago(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def fleet_rows(store: Store, lease_seconds: float, now: datetime | None = None) -> list[FleetRow]:
    """The replicas (alive when seen within one lease time) and the leases, for display."""
    moment = now or datetime.now(UTC)
    rows = []
    for replica in store.replicas(lease_seconds, moment):
        seen = _ago((moment - replica.seen_at).total_seconds())
        if replica.alive:
            state = f"alive, seen {seen} ago"
        elif replica.stopped_at is not None:
            state = f"stopped {_ago((moment - replica.stopped_at).total_seconds())} ago"
        else:
            state = f"dead (not seen for {seen})"
        holds = ", ".join(replica.holds)
        detail = f"{state}; v{replica.version}" + (f"; holds {holds}" if holds else "")
        rows.append(FleetRow("replica", replica.id, detail, replica.alive))
    for lease in store.leases(moment):
        left = (lease.expires_at - moment).total_seconds()
        until = lease.expires_at.strftime("%H:%M:%S")
        when = f"until {until} UTC (in {_ago(left)})" if lease.live else f"expired at {until} UTC"
        rows.append(FleetRow("lease", lease.name, f"{lease.holder}, {when}", lease.live))
    return rows
