"""The Matrix channel's exactly-once rules through `omega start` against a real Synapse: a crash
(kill -9) between receipt and reply is answered once after the restart, a message sent while
Omega is down is answered when it is back, a lost sync-token save repeats nothing, and a new
account's history is never answered."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.synapse import Synapse, wait_until
from tests.integration.test_matrix_channel import (
    cast,
    configure,
    next_batch,
    room_with_omega,
    said,
    start,
)

# Each runs `omega start` against Synapse (and the first starts Synapse): several seconds.
pytestmark = pytest.mark.slow


def test_a_crash_before_the_reply_is_answered_once_and_restarts_repeat_nothing(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people)
    # History from before Omega's first start: a room its account was already in.
    early = people.ana.create_room([people.omega.user_id])
    people.omega.join(early)
    people.ana.say(early, "an old message from before Omega")
    env = openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600")
    fake_openai.script = [
        Step(text="Hi Ana.", match="hello"),
        Step(text="never sent", hang_secs=60, match="are you there"),
    ]
    omega = start(env, isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega)
        people.ana.say(room, "hello")
        said(people.ana, room, people.omega, "Hi Ana.")
        before = next_batch(isolated_env)
        people.ana.say(room, "are you there?")
        wait_until(
            lambda: any("are you there" in r.last_user_text for r in fake_openai.requests),
            what="the question to reach the model",
        )
        # Durable in the inbox, and the sync that carried it saved: the reply is all that is
        # missing when Omega dies.
        wait_until(lambda: next_batch(isolated_env) != before, what="the sync token saved")
    finally:
        omega.proc.kill()  # a crash: no reply was sent
        omega.proc.wait(timeout=30)
    assert "never sent" not in people.ana.texts(room, people.omega.user_id)

    fake_openai.script = [
        Step(text="Yes, here.", match="are you there"),
        Step(text="Welcome back to you too.", match="while you were away"),
    ]
    people.ana.say(room, "while you were away")  # sent while Omega is down
    omega = start(env, isolated_env)
    try:
        said(people.ana, room, people.omega, "Yes, here.")
        said(people.ana, room, people.omega, "Welcome back to you too.")
    finally:
        code, err = omega.terminate()
    assert code == 0, err

    # A crash after the events were handed over but before the sync token was saved: the
    # homeserver sends them again, under the same ids, and the inbox answers none twice.
    state_file = isolated_env / "matrix.state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state_file.write_text(json.dumps(state | {"next_batch": before}), encoding="utf-8")
    asked = len(fake_openai.requests)
    fake_openai.script = [Step(text="Noted.", match="one more thing")]
    omega = start(env, isolated_env)
    try:
        people.ana.say(room, "one more thing")
        said(people.ana, room, people.omega, "Noted.")
        time.sleep(1.0)  # room for a repeat, which must not come
    finally:
        code, err = omega.terminate()
    assert code == 0, err

    texts = people.ana.texts(room, people.omega.user_id)
    for answer in ("Hi Ana.", "Yes, here.", "Welcome back to you too.", "Noted."):
        assert texts.count(answer) == 1, texts
    later = [r.last_user_text for r in fake_openai.requests[asked:]]
    assert not any("are you there" in t or "while you were away" in t for t in later)
    everything = json.dumps([r.body for r in fake_openai.requests])
    assert "an old message from before Omega" not in everything
    with connect_db(isolated_env / "memory.db") as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM inbox")]
    assert ids and all(ident.startswith("matrix:$") for ident in ids)
    assert len(ids) == len(set(ids)) == 4


def test_more_events_than_one_sync_carries_while_omega_is_down_lose_nothing(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    bob = synapse.register("bob")
    configure(isolated_env, synapse, people)
    env = openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600")
    omega = start(env, isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega, bob, name="Busy")
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    # While Omega is down: a mention, then more chatter than a sync's timeline holds (50).
    people.ana.say(room, "omega, are you there after all this?")
    for number in range(60):
        bob.say(room, f"chatter {number}")
    fake_openai.script = [Step(text="Still here.", match="after all this")]
    omega = start(env, isolated_env)
    try:
        said(people.ana, room, people.omega, "Still here.")
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    assert not any("chatter" in r.last_user_text for r in fake_openai.requests)
