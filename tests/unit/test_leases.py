"""Replicas and leases in the store (migration 018): two Store objects on one file stand for
two `omega start` processes sharing memory.db."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.memory import Store

T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    a, b = Store(tmp_path / "memory.db"), Store(tmp_path / "memory.db")
    yield a, b
    a.close()
    b.close()


def test_one_holder_at_a_time_and_a_lease_not_renewed_is_taken_over(
    two: tuple[Store, Store],
) -> None:
    a, b = two
    assert a.lease_acquire("job:scheduler", "A", 15, now=T0)
    assert not b.lease_acquire("job:scheduler", "B", 15, now=T0 + timedelta(seconds=1))
    assert a.lease_renew("job:scheduler", "A", 15, now=T0 + timedelta(seconds=10))
    # Renewed at +10 s: still A's at +20 s, B's once it expired at +25 s.
    assert not b.lease_acquire("job:scheduler", "B", 15, now=T0 + timedelta(seconds=20))
    assert b.lease_acquire("job:scheduler", "B", 15, now=T0 + timedelta(seconds=26))
    assert not a.lease_renew("job:scheduler", "A", 15, now=T0 + timedelta(seconds=27))
    assert not a.lease_release("job:scheduler", "A")  # only the holder releases
    (lease,) = a.leases(now=T0 + timedelta(seconds=27))
    assert (lease.holder, lease.live) == ("B", True)
    assert lease.acquired_at == T0 + timedelta(seconds=26)
    assert b.lease_release("job:scheduler", "B")
    assert a.lease_acquire("job:scheduler", "A", 15, now=T0 + timedelta(seconds=28))


def test_acquiring_again_keeps_the_first_acquisition_time(two: tuple[Store, Store]) -> None:
    a, _ = two
    assert a.lease_acquire("channel:telegram", "A", 15, now=T0)
    assert a.lease_acquire("channel:telegram", "A", 15, now=T0 + timedelta(seconds=5))
    (lease,) = a.leases(now=T0)
    assert lease.acquired_at == T0 and lease.expires_at == T0 + timedelta(seconds=20)


def test_racing_threads_on_separate_connections_elect_one(tmp_path: Path) -> None:
    stores = [Store(tmp_path / "memory.db") for _ in range(4)]
    won: list[str] = []
    barrier = threading.Barrier(len(stores))

    def race(store: Store, holder: str) -> None:
        barrier.wait()
        if store.lease_acquire("job:heartbeat", holder, 15):
            won.append(holder)

    threads = [threading.Thread(target=race, args=(s, f"R{i}")) for i, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    assert len(won) == 1


_steps = st.lists(
    st.tuples(
        st.integers(0, 2),  # which replica
        st.sampled_from(["acquire", "renew", "release"]),
        st.integers(0, 12),  # seconds the clock moves first
    ),
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(steps=_steps)
def test_no_interleaving_gives_two_replicas_the_lease_at_once(
    steps: list[tuple[int, str, int]],
) -> None:
    ttl = 10
    with tempfile.TemporaryDirectory() as folder:
        stores = [Store(Path(folder) / "memory.db") for _ in range(3)]
        valid_until: dict[str, datetime] = {}  # what each replica believes it holds
        now = T0
        try:
            for who, op, dt in steps:
                now += timedelta(seconds=dt)
                holder = f"R{who}"
                store = stores[who]
                if op == "release":
                    if store.lease_release("job:x", holder):
                        valid_until.pop(holder, None)
                    continue
                call = store.lease_acquire if op == "acquire" else store.lease_renew
                if call("job:x", holder, ttl, now=now):
                    others = [h for h, until in valid_until.items() if h != holder and until > now]
                    assert not others, f"{holder} got the lease while {others} held it"
                    valid_until[holder] = now + timedelta(seconds=ttl)
                else:
                    valid_until.pop(holder, None)
        finally:
            for store in stores:
                store.close()


def test_replicas_are_alive_while_they_beat_and_say_when_they_stopped(
    two: tuple[Store, Store],
) -> None:
    a, b = two
    a.replica_register("host:1:aa", "host", 1, "0.1.0", now=T0)
    b.replica_register("host:2:bb", "host", 2, "0.1.0", now=T0)
    assert b.lease_acquire("job:scheduler", "host:2:bb", 15, now=T0)
    a.replica_beat("host:1:aa", now=T0 + timedelta(seconds=30))
    b.replica_beat("host:2:bb", now=T0 + timedelta(seconds=5))
    seen = {r.id: r for r in a.replicas(15, now=T0 + timedelta(seconds=31))}
    assert seen["host:1:aa"].alive and not seen["host:2:bb"].alive  # silent for 26 s
    assert seen["host:2:bb"].holds == ("job:scheduler",)
    b.replica_stop("host:2:bb", now=T0 + timedelta(seconds=32))
    stopped = {r.id: r for r in a.replicas(15, now=T0 + timedelta(seconds=32))}["host:2:bb"]
    assert stopped.stopped_at is not None and not stopped.alive and stopped.holds == ()
    assert a.leases() == []  # a clean stop releases what it held


def test_the_leases_of_a_dead_process_on_this_host_are_released(two: tuple[Store, Store]) -> None:
    a, b = two
    a.replica_register("host:1:aa", "host", 1, "0.1.0")
    a.replica_register("other:1:cc", "other", 1, "0.1.0")
    assert a.lease_acquire("job:scheduler", "host:1:aa", 15)
    assert a.lease_acquire("job:critic", "other:1:cc", 15)
    b.replica_register("host:2:bb", "host", 2, "0.1.0")
    assert b.replica_forget_dead("host", lambda pid: pid == 2, keep="host:2:bb") == ["host:1:aa"]
    # Only that host's dead process: another machine's replica keeps its lease.
    assert [lease.name for lease in b.leases()] == ["job:critic"]


def test_a_web_login_made_through_one_store_holds_on_another(two: tuple[Store, Store]) -> None:
    a, b = two
    a.web_token_replace("tok")
    assert not b.web_login("wrong", "sid", "csrf")
    assert b.web_login("tok", "sid", "csrf")
    assert not a.web_login("tok", "sid2", "csrf2")  # the token works once
    assert a.web_session("sid", 3600) == "csrf"
    a.web_logout("sid")
    assert b.web_session("sid", 3600) is None
