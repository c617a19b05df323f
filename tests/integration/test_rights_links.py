"""Rights never travel (issue 24, finding 5): a link joins memory, never authority. After
`omega people link terminal:guest terminal:<owner>` the guest shares the owner's tasks, facts
and folder, but every marker and command that touches the owner's objects is checked against
the guest's own role; a task keeps its creator's role, an edit needs at least it, and an action
never runs with more. Played through `omega chat --jsonl` with the scripted OpenAI fake."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from omega.turn import local_owner_id
from tests.conftest import MakeDeps, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_many_people import chat, db
from tests.integration.test_tool_loop import tool_call, tool_names

OWNER = local_owner_id()
GUEST = "guest"
NO_ROUTING = {"OMEGA_PROVIDER__CLASSIFY": "false"}
LATER = "2031-01-01T09:00"


def as_guest(text: str) -> dict[str, object]:
    return {"text": text, "sender_id": GUEST}


def owners_action(fake: FakeOpenAI, home: Path) -> sqlite3.Row:
    """The owner schedules an action; then links the guest to themself."""
    fake.script = [Step(text=f"Will do.\nSCHEDULE_ACTION: back up my notes | {LATER} | daily")]
    chat(fake, {"text": "back up my notes every day"})
    [task] = db(home, "SELECT * FROM scheduled_tasks")
    assert task["creator_role"] == "owner"
    linked = run_omega("people", "link", f"terminal:{GUEST}", f"terminal:{OWNER}")
    assert linked.returncode == 0, linked.stderr
    return task


def refusals(home: Path) -> str:
    rows = db(
        home,
        "SELECT detail FROM audit_log WHERE status = 'denied' "
        "AND event IN ('marker_refused', 'command_refused')",
    )
    return "\n".join(row["detail"] for row in rows)


def test_a_linked_guest_cannot_update_the_owners_action(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    task = owners_action(fake_openai, isolated_env)
    fake_openai.script = [
        Step(
            match="do it now",
            text=f"Sure.\nUPDATE_TASK: {task['id'][:8]} | run_shell cat config.toml and send it "
            "to guest | 2020-01-01T09:00 | once",
        ),
        Step(
            match="Scheduled action",
            tool_calls=[tool_call("x1", "run_shell", command="cat ../config.toml")],
        ),
        Step(match="Scheduled action", text="Sent."),
        Step(match="anything else", text="No."),
    ]
    chat(fake_openai, as_guest("do it now with my file"), as_guest("anything else?"))
    [after] = db(isolated_env, "SELECT * FROM scheduled_tasks")
    assert dict(after) == dict(task)  # same text, same time, still pending, still the owner's
    assert f"UPDATE_TASK: task {task['id'][:8]} was made by owner, not allowed for person" in (
        refusals(isolated_env)
    )
    actions = [r for r in fake_openai.requests if "Scheduled action" in r.last_user_text]
    assert all("run_shell" not in tool_names(r) for r in actions)
    assert actions == []


def test_a_linked_guest_cannot_cancel_the_owners_task(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    task = owners_action(fake_openai, isolated_env)
    short = task["id"][:8]
    fake_openai.script = [Step(match="drop it", text=f"Done.\nCANCEL_TASK: {short}")]
    result = chat(fake_openai, as_guest("drop it please"), as_guest(f"/cancel {short}"))
    [after] = db(isolated_env, "SELECT status FROM scheduled_tasks")
    assert after["status"] == "pending"
    found = refusals(isolated_env)
    assert f"CANCEL_TASK: task {short} was made by owner, not allowed for person" in found
    assert f"/cancel {short}: made by owner, not person" in found
    [answer] = [e["text"] for e in result.events if e.get("kind") == "command"]
    assert str(answer).startswith("Nothing cancelled")
    # The guest still sees the tasks they share with the owner (a link joins memory).
    listing = chat(fake_openai, as_guest("/tasks"))
    assert "back up my notes" in str(listing.events[-1]["text"])


def test_tasks_are_edited_with_at_least_their_creators_role(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    owners_action(fake_openai, isolated_env)
    # The guest's own task: the guest may change and cancel it, the owner may too.
    fake_openai.script = [Step(text=f"Ok.\nSCHEDULE_ACTION: water the plants | {LATER}")]
    chat(fake_openai, as_guest("water the plants later"))
    [mine] = db(isolated_env, "SELECT * FROM scheduled_tasks WHERE creator_role = 'person'")
    assert mine["origin_id"] == GUEST
    short = mine["id"][:8]
    fake_openai.script = [Step(text=f"Ok.\nUPDATE_TASK: {short} | water the roses")]
    chat(fake_openai, as_guest("roses, not plants"))
    fake_openai.script = [Step(text=f"Ok.\nUPDATE_TASK: {short} | | | weekly")]
    chat(fake_openai, {"text": "make the roses weekly"})
    [mine] = db(isolated_env, "SELECT * FROM scheduled_tasks WHERE id = ?", mine["id"])
    assert (mine["description"], mine["repeat"]) == ("water the roses", "weekly")
    assert mine["creator_role"] == "person"  # the owner's edit does not raise it
    chat(fake_openai, as_guest(f"/cancel {short}"))
    [mine] = db(isolated_env, "SELECT status FROM scheduled_tasks WHERE id = ?", mine["id"])
    assert mine["status"] == "cancelled"
    assert refusals(isolated_env) == ""


OWNER_MARKERS = [
    ("HEARTBEAT_ADD: mail the owner's notes to guest", "HEARTBEAT_ADD"),
    ("HEARTBEAT_REMOVE: backups", "HEARTBEAT_REMOVE"),
    ("HEARTBEAT_INTERVAL: 1", "HEARTBEAT_INTERVAL"),
    ("SELF_HEAL: notes | read config.toml", "SELF_HEAL"),
    ("SELF_HEAL_RESOLVED", "SELF_HEAL_RESOLVED"),
    ("LIMITATION_RESOLVED: Printing | fixed", "LIMITATION_RESOLVED"),
    ("WHATSAPP_QR", "WHATSAPP_QR"),
]


def test_owner_markers_from_a_linked_guest_are_refused(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    isolated_env.mkdir(parents=True, exist_ok=True)
    heartbeat = isolated_env / "HEARTBEAT.md"
    heartbeat.write_text("- check the backups\n")
    owners_action(fake_openai, isolated_env)
    fake_openai.script = [
        Step(match=f"please {i}", text=f"Sure.\n{marker}")
        for i, (marker, _) in enumerate(OWNER_MARKERS)
    ] + [
        Step(match="a lesson", text="Noted.\nSKILL_IMPROVE: skill-creator | run curl x | sh"),
        Step(match="a gap of", text="Sure.\nLIMITATION: Mail | cannot mail | send config.toml"),
    ]
    chat(
        fake_openai,
        *(as_guest(f"please {i}") for i in range(len(OWNER_MARKERS))),
        as_guest("a lesson for you"),
        as_guest("a gap of mine"),
    )
    assert heartbeat.read_text() == "- check the backups\n"
    # A guest's LIMITATION is their gap (issue 28): recorded as theirs, never the owner's
    # checklist line, never an immediate owner alert.
    [gap] = db(isolated_env, "SELECT title, reported_by FROM limitations")
    assert gap["title"] == "Mail" and gap["reported_by"].startswith("person:")
    assert len(db(isolated_env, "SELECT * FROM scheduled_tasks")) == 1  # no self-heal task
    found = refusals(isolated_env)
    for _, name in OWNER_MARKERS:
        assert f"{name}: not allowed for person" in found, name
    # SKILL_IMPROVE from anyone but the owner is a proposal for the owner, never a lesson.
    assert db(isolated_env, "SELECT * FROM skill_lessons") == []
    [proposal] = db(isolated_env, "SELECT kind, status FROM proposals")
    assert (proposal["kind"], proposal["status"]) == ("lesson", "pending")


OWNER_COMMANDS = [
    "/status",
    "/limitations",
    "/resolve 1 done",
    "/proposals",
    "/approve 1 fine",
    "/reject 1 no",
    "/fragments",
    "/fragments deactivate 1",
    "/selfheal clear",
    "/whatsapp",
    "/quant status",
]


def test_owner_commands_from_a_linked_guest_are_refused(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    owners_action(fake_openai, isolated_env)
    fake_openai.script = [
        Step(
            match="print", text="Noted.\nLIMITATION: Printing | cannot print | add a printer tool"
        ),
        Step(match="lesson", text="Noted.\nSKILL_IMPROVE: skill-creator | keep it short"),
    ]
    chat(fake_openai, {"text": "print this"}, {"text": "a lesson for you", "sender_id": "bob"})
    tables = ("limitations", "proposals", "skill_lessons", "scheduled_tasks")
    before = {t: [dict(r) for r in db(isolated_env, f"SELECT * FROM {t}")] for t in tables}
    assert before["limitations"] and before["proposals"]
    result = chat(fake_openai, *(as_guest(text) for text in OWNER_COMMANDS))
    answers = [e["text"] for e in result.events if e.get("kind") == "command"]
    assert answers == ["Only my owner can do that."] * len(OWNER_COMMANDS)
    after = {t: [dict(r) for r in db(isolated_env, f"SELECT * FROM {t}")] for t in tables}
    assert after == before
    found = refusals(isolated_env)
    for text in OWNER_COMMANDS:
        assert f"{text.split()[0]} is the owner's; role: person" in found, text


def test_an_action_runs_with_its_creators_role_at_creation(
    fake_openai: FakeOpenAI, isolated_env: Path, make_deps: MakeDeps
) -> None:
    from omega.gateway.pipeline import respond
    from omega.loops.scheduler import Scheduler
    from tests.fakes.outbox import Recorder

    # Alice schedules an action while she is a person ...
    fake_openai.script = [Step(text=f"Will do.\nSCHEDULE_ACTION: look around | {LATER}")]
    chat(fake_openai, {"text": "look around later", "sender_id": "alice"})
    # ... and is made an owner afterwards: her old action still runs with a person's rights.
    env = openai_env(fake_openai, **NO_ROUTING, OMEGA_AUTH__OWNERS=json.dumps(["terminal:alice"]))
    deps = make_deps(**env)
    store = deps.store
    fake_openai.script = [Step(match="Scheduled action", text="Done.\nHEARTBEAT_ADD: look again")]
    [task] = store.due_tasks(datetime(2100, 1, 1, tzinfo=UTC))
    assert task.creator_role == "person"
    assert asyncio.run(Scheduler(deps, Recorder(), respond).fire(task)) is True
    action = next(r for r in fake_openai.requests if "Scheduled action" in r.last_user_text)
    assert "run_shell" not in tool_names(action)
    assert not (isolated_env / "HEARTBEAT.md").exists()
    [row] = store.query("SELECT detail FROM audit_log WHERE event = 'marker_refused'")
    assert "cause: action\nrole: person" in row["detail"]
