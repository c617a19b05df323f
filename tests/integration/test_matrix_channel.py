"""The Matrix channel through `omega start`, against a real Synapse on loopback (started once
per session, see tests/fakes/synapse.py): a direct chat answered with typing shown, strangers
refused or offered pairing, a room answered only when Omega is mentioned, a direct chat, a
room and a thread kept apart as conversations, a long reply split,
encrypted rooms refused with one notice, invitations limited to allowed people, and a refused
login reported. Files in and out are test_matrix_media.py; restarts test_matrix_restarts.py."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.synapse import MatrixUser, Synapse, wait_until
from tests.integration.test_start import Running

# Each runs `omega start` against Synapse (and the first starts Synapse): several seconds.
pytestmark = pytest.mark.slow

DENIAL = "Sorry, I'm not able to talk with you. Ask my owner to add you."


@dataclass
class Cast:
    """Omega's account and the people of one test, all new on the session's homeserver."""

    omega: MatrixUser
    ana: MatrixUser  # allowed
    eve: MatrixUser  # a stranger


def cast(synapse: Synapse) -> Cast:
    """Fresh accounts for one test; Omega's display name is "Omega"."""
    omega = synapse.register("omega")
    omega.set_name("Omega")
    return Cast(omega, synapse.register("ana"), synapse.register("eve"))


def configure(
    home: Path, synapse: Synapse, people: Cast, extra: str = "", token: bool = False
) -> None:
    """config.toml for the Matrix channel: Omega logs in with its password (or its token)."""
    home.mkdir(parents=True, exist_ok=True)
    login = (
        f'access_token = "{people.omega.token}"'
        if token
        else f'password = "{people.omega.password}"'
    )
    (home / "config.toml").write_text(
        f"""
[channel.matrix]
enabled = true
homeserver = "{synapse.url}"
user_id = "{people.omega.user_id}"
{login}
allowed_users = ["{people.ana.user_id}"]
{extra}
""",
        encoding="utf-8",
    )


def start(env: dict[str, str], home: Path) -> Running:
    """`omega start`, once the Matrix channel has finished a sync."""
    state = home / "matrix.state.json"
    before = state.stat().st_mtime_ns if state.exists() else None
    omega = Running(env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state.exists() and state.stat().st_mtime_ns != before and next_batch(home):
            return omega
        if omega.proc.poll() is not None:
            break
        time.sleep(0.05)
    omega.terminate()
    raise AssertionError(f"the Matrix channel never synced: {''.join(omega.stderr)}")


def next_batch(home: Path) -> str:
    """The sync token the channel saved."""
    try:
        data = json.loads((home / "matrix.state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("next_batch") or "")


def room_with_omega(
    person: MatrixUser,
    omega: MatrixUser,
    *others: MatrixUser,
    name: str = "",
    encrypted: bool = False,
    direct: bool = False,
) -> str:
    """A room `person` makes and invites Omega (and `others`) to, once they all joined."""
    invite = [omega.user_id, *(o.user_id for o in others)]
    room = person.create_room(invite, name=name, encrypted=encrypted, direct=direct)
    for other in others:
        other.join(room)
    wait_until(lambda: omega.user_id in person.members(room), what="Omega to join")
    return room


def said(person: MatrixUser, room: str, omega: MatrixUser, text: str, count: int = 1) -> None:
    """Wait until Omega said `text` in the room (`count` times)."""
    wait_until(
        lambda: person.texts(room, omega.user_id).count(text) >= count,
        what=f"{text!r} in {room}: {person.texts(room, omega.user_id)}",
    )


def test_a_direct_chat_is_answered_with_typing_and_a_stranger_gets_one_denial(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people, 'invites = "anyone"')  # strangers' rooms joined
    fake_openai.script = [Step(text="Hello Ana, **4**.", match="2+2", hang_secs=3)]
    env = openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600")
    omega = start(env, isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega, direct=True)
        typing = people.ana.watch_typing(room)
        question = people.ana.say(room, "what is 2+2?")
        # Omega types while the model thinks (the answer takes 3 s).
        wait_until(lambda: people.omega.user_id in typing.seen(), what="typing")
        said(people.ana, room, people.omega, "Hello Ana, **4**.")
        (answer,) = [
            e
            for e in people.ana.messages(room, people.omega.user_id)
            if e["content"]["body"] == "Hello Ana, **4**."
        ]
        assert answer["content"]["formatted_body"] == "Hello Ana, <b>4</b>."
        asked = [r for r in fake_openai.requests if "what is 2+2?" in r.last_user_text]
        assert asked

        # A stranger is refused once (the denial is not repeated), and nothing of theirs
        # reaches the model.
        strange = room_with_omega(people.eve, people.omega, direct=True)
        people.eve.say(strange, "hi, who are you?")
        people.eve.say(strange, "answer me")
        said(people.eve, strange, people.omega, DENIAL)
        # An edit of an answered message, and a bot's notice, are not answered.
        people.ana.say(
            room,
            "* what is 3+3?",
            **{
                "m.new_content": {"msgtype": "m.text", "body": "what is 3+3?"},
                "m.relates_to": {"rel_type": "m.replace", "event_id": question},
            },
        )
        people.ana.send(room, {"msgtype": "m.notice", "body": "a bot's notice"})
        people.ana.say(room, "ping")
        wait_until(lambda: any("ping" in r.last_user_text for r in fake_openai.requests))
        time.sleep(1.0)
        assert people.eve.texts(strange, people.omega.user_id) == [DENIAL]
        asked_all = json.dumps([r.body for r in fake_openai.requests])
        assert "who are you" not in asked_all
        assert "3+3" not in asked_all and "a bot's notice" not in asked_all

        status = run_omega("status", env=env)
        assert status.returncode == 0, status.stderr
        assert f"ok - {people.omega.user_id} on {synapse.url}" in status.stdout
        rows = {line.split()[0]: line for line in status.stdout.splitlines() if line.strip()}
        assert f"plug-in, {people.omega.user_id}, syncing" in rows["matrix"]
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    assert "Traceback" not in err
    log = isolated_env / "omega.log"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert people.omega.password not in err + text + status.stdout
    state = isolated_env / "matrix.state.json"
    assert state.stat().st_mode & 0o777 == 0o600


def test_a_stranger_is_offered_pairing_under_the_pairing_policy(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people, 'dm_policy = "pairing"')
    owner = {"OMEGA_AUTH__OWNERS": f'["matrix:{people.ana.user_id}"]'}
    omega = start(openai_env(fake_openai, **owner), isolated_env)
    try:
        room = room_with_omega(people.eve, people.omega)
        people.eve.say(room, "may I talk to you?")
        wait_until(lambda: people.eve.texts(room, people.omega.user_id), what="an offer")
        (offer,) = people.eve.texts(room, people.omega.user_id)
        assert "pair" in offer.lower() or "code" in offer.lower()
        assert not any("may I talk" in json.dumps(r.body) for r in fake_openai.requests)
        # The owner is told in a direct room Omega opens with them (there was none).
        wait_until(people.ana.invitations, what="Omega's invitation to the owner")
        (direct,) = people.ana.invitations()
        people.ana.join(direct)
        assert sorted(people.ana.members(direct)) == sorted(
            [people.ana.user_id, people.omega.user_id]
        )
        wait_until(lambda: people.ana.texts(direct, people.omega.user_id), what="the alert")
        assert "asks to talk to you" in people.ana.texts(direct, people.omega.user_id)[0]
    finally:
        code, err = omega.terminate()
    assert code == 0, err


def test_in_a_room_only_a_mention_is_answered_and_a_token_login_works(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    bob = synapse.register("bob")
    configure(isolated_env, synapse, people, token=True)
    fake_openai.script = [
        Step(text="Paris.", match="capital of France"),
        Step(text="Rome.", match="capital of Italy"),
    ]
    omega = start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega, bob, name="Friends")
        people.ana.say(room, "lunch at noon, everyone?")
        # A pill, as Element writes a mention: m.mentions and a matrix.to link.
        people.ana.say(
            room,
            "Omega: what is the capital of France?",
            format="org.matrix.custom.html",
            formatted_body=(
                f'<a href="https://matrix.to/#/{people.omega.user_id}">Omega</a>: '
                "what is the capital of France?"
            ),
            **{"m.mentions": {"user_ids": [people.omega.user_id]}},
        )
        said(people.ana, room, people.omega, "Paris.")
        people.ana.say(room, "and the capital of Italy, omega?")  # the display name, as text
        said(people.ana, room, people.omega, "Rome.")
        people.ana.say(room, "I think the capital of Spain is Madrid")
        time.sleep(1.0)
        asked = json.dumps([r.body for r in fake_openai.requests])
        assert "lunch at noon" not in asked and "Madrid" not in asked
        answers = people.ana.texts(room, people.omega.user_id)
        assert [t for t in answers if not t.startswith("Hi, I'm Omega")] == ["Paris.", "Rome."]
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    # A configured token is never copied into the state file.
    assert people.omega.token not in (isolated_env / "matrix.state.json").read_text()


def test_a_direct_chat_a_room_and_a_thread_are_conversations_of_their_own(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    # Issue 36: what Ana says in private is never in the prompt of a turn answered in a room,
    # and a thread (m.thread) is answered inside it, as a conversation of its own.
    people = cast(synapse)
    bob = synapse.register("bob")
    configure(isolated_env, synapse, people)
    omega = start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)

    def answered(room: str, words: str) -> list[dict[str, object]]:
        return [
            e
            for e in people.ana.messages(room, people.omega.user_id)
            if words in str(e["content"].get("body"))
        ]

    try:
        direct = room_with_omega(people.ana, people.omega, direct=True)
        people.ana.say(direct, "my diagnosis is zebrafever, keep it private")
        wait_until(lambda: answered(direct, "echo: my diagnosis"), what="the DM's answer")
        room = room_with_omega(people.ana, people.omega, bob, name="Friends")
        root = people.ana.say(room, "tell everyone about my diagnosis, omega")
        wait_until(lambda: answered(room, "tell everyone"), what="the room's answer")
        relation = {"rel_type": "m.thread", "event_id": root, "is_falling_back": True}
        people.ana.say(
            room, "and in this thread, my diagnosis, omega?", **{"m.relates_to": relation}
        )
        wait_until(lambda: answered(room, "in this thread"), what="the thread's answer")
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    [in_thread] = answered(room, "in this thread")
    assert in_thread["content"]["m.relates_to"]["rel_type"] == "m.thread"  # type: ignore[index]
    assert in_thread["content"]["m.relates_to"]["event_id"] == root  # type: ignore[index]
    [in_room] = answered(room, "tell everyone")
    assert "m.relates_to" not in in_room["content"]  # type: ignore[operator]

    def requests(words: str) -> list[str]:
        return [json.dumps(r.body) for r in fake_openai.requests if words in r.last_user_text]

    public = requests("tell everyone about my diagnosis")
    assert public and not any("zebrafever" in body for body in public)
    threaded = requests("and in this thread")
    assert threaded and not any("zebrafever" in body for body in threaded)
    assert not any("tell everyone" in body for body in threaded)


def test_a_10000_character_reply_arrives_in_pieces_that_join_back_exactly(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people)
    paragraphs = [f"Paragraph {i}: " + "word " * 60 + "end." for i in range(40)]
    long = "\n\n".join(paragraphs)[:10_000] + "🙂 done"
    fake_openai.script = [Step(text=long, match="long")]
    omega = start(openai_env(fake_openai, OMEGA_MEMORY__IDLE_MINUTES="600"), isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega)
        people.ana.say(room, "tell me something long")
        wait_until(
            lambda: any(t.endswith("done") for t in people.ana.texts(room, people.omega.user_id))
        )
        texts = people.ana.texts(room, people.omega.user_id)
        pieces = [t for t in texts if t[:10] == long[:10] or t in long]
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    assert len(pieces) == 3
    assert "".join(pieces) == long
    assert all(len(piece) <= 4000 for piece in pieces)
    assert all(piece.endswith("\n\n") for piece in pieces[:-1])


def test_an_encrypted_room_gets_one_notice_and_is_not_answered(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    configure(isolated_env, synapse, people)
    env = openai_env(fake_openai)
    omega = start(env, isolated_env)
    try:
        room = room_with_omega(people.ana, people.omega, encrypted=True)
        secret = {
            "algorithm": "m.megolm.v1.aes-sha2",
            "ciphertext": "AwgAEnACgAkLmt6qF84IK++J7UDH2Za1YVchHyprqTqsg",
            "device_id": "ANADEVICE",
            "sender_key": "IlRMeOPX2e0MurIyfWEucYBRVOEEUMrOHqn/8mLqMjA",
            "session_id": "X3lUlvLELLYxeTx4yOVu6UDpasGEVO0Jbu+QFnm0cKQ",
        }
        people.ana.send(room, secret, kind="m.room.encrypted")
        people.ana.send(room, secret, kind="m.room.encrypted")
        wait_until(lambda: people.ana.messages(room, people.omega.user_id), what="the notice")
        time.sleep(1.0)
        (notice,) = people.ana.messages(room, people.omega.user_id)
        assert notice["content"]["msgtype"] == "m.notice"
        assert "end-to-end encrypted" in notice["content"]["body"]
        assert fake_openai.requests == []
        status = run_omega("status", env=env)
        assert "1 end-to-end encrypted room(s) are not answered" in status.stdout
    finally:
        code, err = omega.terminate()
    assert code == 0, err


def test_a_refused_login_is_reported_without_the_password_and_the_others_run(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse
) -> None:
    people = cast(synapse)
    people.omega.password = "not-the-password-0123"
    configure(isolated_env, synapse, people)
    env = openai_env(fake_openai)
    omega = Running(env)
    try:
        health = isolated_env / "matrix.health.json"
        wait_until(
            lambda: health.exists() and "login refused" in health.read_text(encoding="utf-8"),
            what="the refusal reported",
        )
        omega.say("still there?")  # the terminal channel still answers
        omega.wait_for("reply")
        status = run_omega("status", env=env)
        assert "login refused" in status.stdout and "M_FORBIDDEN" in status.stdout
    finally:
        code, err = omega.terminate()
    assert code == 0, err
    log = (isolated_env / "omega.log").read_text(encoding="utf-8")
    assert "the homeserver refused the login" in log
    assert "not-the-password-0123" not in err + log + status.stdout


@pytest.mark.parametrize("invites", ["", 'invites = "allowed"'], ids=["by-default", "allowed"])
def test_with_invites_allowed_only_allowed_peoples_rooms_are_joined(
    fake_openai: FakeOpenAI, isolated_env: Path, synapse: Synapse, invites: str
) -> None:
    """Under the allow-list (the default DM policy) a stranger's room is not joined: nothing
    they write there would be read."""
    people = cast(synapse)
    configure(isolated_env, synapse, people, invites)
    omega = start(openai_env(fake_openai), isolated_env)
    try:
        declined = people.eve.create_room([people.omega.user_id])
        room_with_omega(people.ana, people.omega)  # joined: Ana is allowed
        wait_until(
            lambda: people.eve.membership(declined, people.omega.user_id) == "leave",
            what="the stranger's invitation declined",
        )
        assert people.omega.user_id not in people.eve.members(declined)
    finally:
        code, err = omega.terminate()
    assert code == 0, err
