"""Replicas and leases: which `omega start` processes share this database, and which of them
runs each job or channel that must run once across them.

A lease is a row `name -> holder` valid until `expires_at`. Taking it is one upsert that only
updates the row when it expired or is already the taker's, so two replicas racing for it
cannot both win, on SQLite (one writer at a time) as on PostgreSQL (the row lock the upsert
takes); the taker then reads back who holds it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from omega.memory.db import Database, from_db_time, to_db_time

DEAD_REPLICAS_KEPT = timedelta(days=1)  # stopped or silent replicas older than this are dropped


@dataclass(frozen=True)
class Replica:
    """One `omega start` process as the database saw it."""

    id: str
    host: str
    pid: int
    version: str
    started_at: datetime
    seen_at: datetime
    holds: tuple[str, ...]
    stopped_at: datetime | None
    alive: bool  # not stopped, and beat within the TTL it was read with


@dataclass(frozen=True)
class Lease:
    """Who holds a named lease, since when and until when."""

    name: str
    holder: str
    acquired_at: datetime
    expires_at: datetime
    renewed_at: datetime
    live: bool  # not expired at the time it was read


def _now(now: datetime | None) -> datetime:
    return now if now is not None else datetime.now(UTC)


def _replica(row: sqlite3.Row, alive_after: datetime) -> Replica:
    stopped = row["stopped_at"]
    seen = from_db_time(row["seen_at"])
    return Replica(
        id=row["id"],
        host=row["host"],
        pid=int(row["pid"]),
        version=row["version"],
        started_at=from_db_time(row["started_at"]),
        seen_at=seen,
        holds=tuple(name for name in row["holds"].split(",") if name),
        stopped_at=from_db_time(stopped) if stopped else None,
        alive=stopped is None and seen >= alive_after,
    )


class Leases(Database):
    """The replicas table and the leases they hold."""

    def replica_register(
        self, replica_id: str, host: str, pid: int, version: str, now: datetime | None = None
    ) -> None:
        """Record a starting replica (and forget replicas stopped or silent for a day)."""
        moment = to_db_time(_now(now))
        forget = to_db_time(_now(now) - DEAD_REPLICAS_KEPT)
        with self._tx() as conn:
            conn.execute("DELETE FROM replicas WHERE seen_at < ?", (forget,))
            conn.execute(
                "INSERT INTO replicas (id, host, pid, version, started_at, seen_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "seen_at = excluded.seen_at, stopped_at = NULL",
                (replica_id, host, pid, version, moment, moment),
            )

    def replica_beat(self, replica_id: str, now: datetime | None = None) -> None:
        """The replica is alive: its seen time, and the live leases it holds now."""
        moment = to_db_time(_now(now))
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT name FROM leases WHERE holder = ? AND expires_at >= ? ORDER BY name",
                (replica_id, moment),
            ).fetchall()
            conn.execute(
                "UPDATE replicas SET seen_at = ?, holds = ? WHERE id = ?",
                (moment, ",".join(row[0] for row in rows), replica_id),
            )

    def replica_stop(self, replica_id: str, now: datetime | None = None) -> None:
        """A clean stop: every lease it holds is released and its row says when it stopped."""
        moment = to_db_time(_now(now))
        with self._tx() as conn:
            conn.execute("DELETE FROM leases WHERE holder = ?", (replica_id,))
            conn.execute(
                "UPDATE replicas SET stopped_at = ?, seen_at = ?, holds = '' WHERE id = ?",
                (moment, moment, replica_id),
            )

    def replica_forget_dead(
        self, host: str, is_alive: Callable[[int], bool], keep: str
    ) -> list[str]:
        """Release the leases of replicas on `host` whose process is gone (`is_alive(pid)`
        false, asked of the rows read in this transaction: a replica registering meanwhile is
        never taken for dead), so a restart on the same machine need not wait for expiry."""
        moment = to_db_time(datetime.now(UTC))
        dead = []
        with self._tx() as conn:
            for replica_id, pid in conn.execute(
                "SELECT id, pid FROM replicas WHERE host = ? AND stopped_at IS NULL AND id <> ?",
                (host, keep),
            ).fetchall():
                if is_alive(int(pid)):
                    continue
                dead.append(str(replica_id))
                conn.execute("DELETE FROM leases WHERE holder = ?", (replica_id,))
                conn.execute(
                    "UPDATE replicas SET stopped_at = ?, holds = '' WHERE id = ?",
                    (moment, replica_id),
                )
        return dead

    def replicas(self, ttl_s: float, now: datetime | None = None) -> list[Replica]:
        """Every known replica, newest first; alive when not stopped and seen within `ttl_s`."""
        after = _now(now) - timedelta(seconds=ttl_s)
        rows = self._query("SELECT * FROM replicas ORDER BY started_at DESC, id")
        return [_replica(row, after) for row in rows]

    def lease_acquire(
        self, name: str, holder: str, ttl_s: float, now: datetime | None = None
    ) -> bool:
        """Take `name` for `ttl_s` seconds when it is free, expired or already `holder`'s
        (then it is renewed); True when `holder` holds it afterwards."""
        moment = _now(now)
        at, until = to_db_time(moment), to_db_time(moment + timedelta(seconds=ttl_s))
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO leases (name, holder, acquired_at, expires_at, renewed_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                "holder = excluded.holder, expires_at = excluded.expires_at, "
                "renewed_at = excluded.renewed_at, acquired_at = CASE "
                "WHEN leases.holder = excluded.holder THEN leases.acquired_at "
                "ELSE excluded.acquired_at END "
                "WHERE leases.expires_at < ? OR leases.holder = ?",
                (name, holder, at, until, at, at, holder),
            )
            row = conn.execute("SELECT holder FROM leases WHERE name = ?", (name,)).fetchone()
        return row is not None and row[0] == holder

    def lease_renew(
        self, name: str, holder: str, ttl_s: float, now: datetime | None = None
    ) -> bool:
        """Extend `holder`'s lease by `ttl_s` from now; False when it is no longer theirs."""
        moment = _now(now)
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE leases SET expires_at = ?, renewed_at = ? WHERE name = ? AND holder = ?",
                (
                    to_db_time(moment + timedelta(seconds=ttl_s)),
                    to_db_time(moment),
                    name,
                    holder,
                ),
            )
            return cursor.rowcount == 1

    def lease_release(self, name: str, holder: str) -> bool:
        """Give `name` up (only when `holder` still holds it); True when it was released."""
        with self._tx() as conn:
            cursor = conn.execute(
                "DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder)
            )
            return cursor.rowcount == 1

    def leases(self, now: datetime | None = None) -> list[Lease]:
        """Every lease row, by name; `live` when it has not expired."""
        moment = _now(now)
        rows = self._query("SELECT * FROM leases ORDER BY name")
        result = []
        for row in rows:
            expires = from_db_time(row["expires_at"])
            result.append(
                Lease(
                    name=row["name"],
                    holder=row["holder"],
                    acquired_at=from_db_time(row["acquired_at"]),
                    expires_at=expires,
                    renewed_at=from_db_time(row["renewed_at"]),
                    live=expires >= moment,
                )
            )
        return result
