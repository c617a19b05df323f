"""Claims on the shared inbox (issue 30): two Store objects on one memory.db stand for two
replicas. Only the oldest pending message of a sender is claimed, never beside a live claim;
an expired lease is taken over; a replica claims only on the channels it can answer on."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from omega.memory import Store
from omega.types import IncomingMessage

LIVE = 60.0
SHARED = ["telegram"]


@contextmanager
def two_replicas(path: Path) -> Iterator[tuple[Store, Store]]:
    a, b = Store(path), Store(path)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def put(store: Store, mid: str, sender: str, channel: str = "telegram", by: str = "") -> None:
    assert store.inbox_put(IncomingMessage(channel, sender, f"text {mid}", id=mid), by)


def claimed(store: Store, replica: str, lease: float = LIVE, **kw: object) -> list[str]:
    channels = kw.pop("channels", SHARED)
    return [
        c.message.id
        for c in store.inbox_claim(replica, lease, channels, 100, **kw)  # type: ignore[arg-type]
    ]


def expire(store: Store, mid: str) -> None:
    with store.transaction() as conn:
        conn.execute(
            "UPDATE inbox SET lease_until = '2000-01-01T00:00:00.000000Z' WHERE id = ?", (mid,)
        )


def test_only_the_oldest_message_of_each_sender_is_claimed_and_the_next_after_it(
    tmp_path: Path,
) -> None:
    with two_replicas(tmp_path / "memory.db") as (a, b):
        for mid, sender in [("a1", "ana"), ("b1", "bob"), ("a2", "ana"), ("a3", "ana")]:
            put(a, mid, sender)
        assert claimed(a, "A") == ["a1", "b1"]
        # Ana's next waits for her first, on every replica, however many times it is asked.
        assert claimed(b, "B") == []
        assert claimed(a, "A") == []
        a.inbox_finish("a1")
        assert claimed(b, "B") == ["a2"]
        assert claimed(a, "A") == []
        b.inbox_finish("a2")
        a.inbox_finish("b1")
        assert claimed(a, "A") == ["a3"]
        [(status, holder, lease)] = a.query(
            "SELECT status, claimed_by, lease_until FROM inbox WHERE id = 'a2'"
        )
        assert (status, holder, lease) == ("done", None, None)  # finishing clears the claim


def test_a_live_lease_is_respected_and_an_expired_one_taken_over_with_its_attempts(
    tmp_path: Path,
) -> None:
    with two_replicas(tmp_path / "memory.db") as (a, b):
        put(a, "m1", "ana")
        assert claimed(a, "A") == ["m1"]
        assert a.inbox_start("A", "m1", LIVE) == 1  # A began the turn, then died
        assert claimed(b, "B") == []
        assert b.inbox_renew("B", ["m1"], LIVE) == []  # renewing is for the holder only
        expire(a, "m1")
        [claim] = b.inbox_claim("B", LIVE, SHARED, 10)
        assert (claim.message.id, claim.message.text, claim.attempts) == ("m1", "text m1", 1)
        # The old holder has lost it: it may neither start nor renew it any more.
        assert a.inbox_start("A", "m1", LIVE) is None
        assert a.inbox_renew("A", ["m1"], LIVE) == []
        assert b.inbox_renew("B", ["m1"], LIVE) == ["m1"]
        assert b.inbox_start("B", "m1", LIVE) == 2


def test_claims_follow_the_channels_a_replica_can_answer_on(tmp_path: Path) -> None:
    with two_replicas(tmp_path / "memory.db") as (a, b):
        put(a, "t1", "ana", "telegram", by="A")
        put(a, "w1", "ana", "whatsapp", by="A")
        put(a, "j1", "me", "terminal", by="A")
        put(b, "j2", "you", "terminal", by="B")
        # B has no WhatsApp; a terminal message is answered where it was typed.
        assert claimed(b, "B", channels=["telegram"], local_channels=["terminal"]) == ["t1", "j2"]
        assert claimed(a, "A", channels=["whatsapp"], local_channels=["terminal"]) == ["w1", "j1"]
        assert claimed(a, "A", channels=[], local_channels=[]) == []


def test_one_sender_only_and_release_and_adoption_of_a_dead_replica(tmp_path: Path) -> None:
    with two_replicas(tmp_path / "memory.db") as (a, b):
        put(a, "a1", "ana", by="A")
        put(a, "b1", "bob", by="A")
        put(a, "j1", "me", "terminal", by="A")
        assert claimed(a, "A", sender=("telegram", "bob")) == ["b1"]
        assert claimed(a, "A", local_channels=["terminal"]) == ["a1", "j1"]
        assert a.inbox_unclaim("A", keep=["a1"]) == 2
        assert sorted(b.inbox_replicas()) == ["A"]
        # A is dead: B takes its claims at once and answers what A's terminal received.
        assert b.inbox_adopt("B", ["A"]) >= 2
        assert claimed(b, "B", local_channels=["terminal"]) == ["a1", "b1", "j1"]
        a.inbox_finish("b1")
        assert b.inbox_settled(["a1", "b1", "nope"]) == {"b1", "nope"}


def test_a_stopped_attempt_gives_back_its_claim_and_its_count(tmp_path: Path) -> None:
    with two_replicas(tmp_path / "memory.db") as (a, b):
        put(a, "m1", "ana")
        assert claimed(a, "A") == ["m1"]
        assert a.inbox_start("A", "m1", LIVE) == 1
        a.inbox_release("m1")
        [claim] = b.inbox_claim("B", LIVE, SHARED, 10)
        assert claim.attempts == 0


OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "claim", "finish", "expire", "release"]),
        st.integers(0, 1),  # which replica
        st.integers(0, 2),  # which sender / which held message
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_any_interleaving_keeps_each_senders_messages_in_order(
    ops: list[tuple[str, int, int]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp, two_replicas(Path(tmp) / "memory.db") as stores:
        # Each example starts empty (on the PostgreSQL run every example shares one database).
        with stores[0].transaction() as conn:
            conn.execute("DELETE FROM inbox")
        names = ["A", "B"]
        sent: dict[str, list[str]] = {}  # per sender, in arrival order
        done: dict[str, list[str]] = {}
        for number, (op, who, which) in enumerate(ops):
            store, replica = stores[who], names[who]
            if op == "put":
                sender = f"s{which}"
                put(store, f"m{number}", sender)
                sent.setdefault(sender, []).append(f"m{number}")
            elif op == "claim":
                claimed(store, replica)
            else:
                held = [
                    (row[0], row[1])
                    for row in store.query(
                        "SELECT id, sender_id FROM inbox WHERE status = 'pending' "
                        "AND claimed_by = ? ORDER BY seq",
                        (replica,),
                    )
                ]
                if not held:
                    continue
                mid, sender = held[which % len(held)]
                if op == "finish" and store.inbox_start(replica, mid, LIVE) is not None:
                    store.inbox_finish(mid)
                    done.setdefault(sender, []).append(mid)
                elif op == "expire":
                    expire(store, mid)
                elif op == "release":
                    store.inbox_release(mid)
            # At most one live claim per sender, always on the sender's oldest pending message.
            for sender, ids in sent.items():
                pending = [i for i in ids if i not in done.get(sender, [])]
                live = stores[0].query(
                    "SELECT id FROM inbox WHERE sender_id = ? AND status = 'pending' "
                    "AND claimed_by IS NOT NULL AND lease_until > '2001'",
                    (sender,),
                )
                assert [row[0] for row in live] in ([], pending[:1])
        for sender, finished in done.items():
            assert finished == sent[sender][: len(finished)]  # answered in the order sent
