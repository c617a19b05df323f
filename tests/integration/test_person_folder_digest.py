"""People's folders cannot be reached by a made-up id, through `omega chat --jsonl`.

A folder's name was the id made readable (40 characters) and a 40-bit digest: someone who
chooses their own id (a Matrix server of their own, a mail domain) could search for one whose
folder is another person's. VICTIM and ATTACKER below are such a pair, found by a birthday
search of about a million hashes (seconds here; a chosen target takes a GPU minutes): under the
old naming both are `people/terminal-ana.de.souza.the.one.and.only.a-6cf5176d2c`. Now a folder
is named after the person's key with a 128-bit digest; folders named the old way are renamed at
start when exactly one known person claims them, and one two could claim is given to neither and
told to the owner.
"""

from __future__ import annotations

import json
from pathlib import Path

from omega.turn import person_folder
from omega.turn.privileges import legacy_person_folder
from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import tool_call, tool_results

VICTIM = "ana.de.souza.the.one.and.only.ana-c6c85"
ATTACKER = "ana.de.souza.the.one.and.only.ana-1ee7f5"
SECRET = "Ana's diary: the safe's code is 4471"
OWNER = '["terminal:boss"]'
TOOLS = '["read_file", "write_file", "list_files"]'


def chat(fake: FakeOpenAI, *lines: dict[str, object]) -> list[dict[str, object]]:
    done = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake, OMEGA_AUTH__OWNERS=OWNER, OMEGA_AUTH__PEOPLE_TOOLS=TOOLS),
        stdin=jsonl(*lines),
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def reading(*senders: str) -> tuple[list[Step], list[dict[str, object]]]:
    """Scripted steps and chat lines: each sender asks for `read_file diary.txt` in turn."""
    steps: list[Step] = []
    lines: list[dict[str, object]] = []
    for n, sender in enumerate(senders):
        ask = f"read my diary, please ({n})"
        steps += [
            Step(match=ask, tool_calls=[tool_call(f"r{n}", "read_file", path="diary.txt")]),
            Step(match=ask, text="Here it is."),
        ]
        lines.append({"text": ask, "sender_id": sender})
    return steps, lines


def what_each_read(fake: FakeOpenAI, *senders: str) -> dict[str, str]:
    """What `read_file diary.txt` told the model in each sender's turn (see `reading`)."""
    told: dict[str, str] = {}
    for request in fake.requests:
        for call, text in tool_results(request).items():
            if call.startswith("r"):  # a read of `reading`'s, not another tool's call
                told[senders[int(call.removeprefix("r"))]] = text
    return told


def test_the_pair_collides_under_the_old_naming_only() -> None:
    old = [legacy_person_folder("terminal", who) for who in (VICTIM, ATTACKER)]
    assert old[0] == old[1]
    assert person_folder(VICTIM) != person_folder(ATTACKER)


def test_a_made_up_id_never_opens_another_persons_folder(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    steps, lines = reading(VICTIM, ATTACKER)
    fake_openai.script = [
        Step(
            match="keep my diary",
            tool_calls=[tool_call("w1", "write_file", path="diary.txt", content=SECRET)],
        ),
        Step(match="keep my diary", text="Kept."),
        *steps,
    ]
    chat(fake_openai, {"text": "keep my diary", "sender_id": VICTIM}, *lines)
    people = isolated_env / "workspace" / "people"
    assert (people / person_folder(VICTIM) / "diary.txt").read_text() == SECRET
    told = what_each_read(fake_openai, VICTIM, ATTACKER)
    assert SECRET in told[VICTIM]  # the ordinary path still works
    assert SECRET not in told[ATTACKER]


def test_old_folders_are_renamed_and_a_contested_one_is_given_to_no_one(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    # Three people known to the store, their folders still named the old way.
    hellos: list[dict[str, object]] = [
        {"text": "hello", "sender_id": who} for who in ("bea", VICTIM, ATTACKER)
    ]
    chat(fake_openai, *hellos)
    people = isolated_env / "workspace" / "people"
    for who, text in (("bea", "Bea's notes"), (VICTIM, SECRET)):
        old = people / legacy_person_folder("terminal", who)
        old.mkdir(parents=True, exist_ok=True)
        (old / "diary.txt").write_text(text)
    contested = legacy_person_folder("terminal", VICTIM)

    # The next start renames Bea's; the folder both ids lead to goes to neither.
    fake_openai.requests.clear()
    fake_openai.script, lines = reading("bea", ATTACKER, VICTIM)
    events = chat(fake_openai, *lines)
    told = what_each_read(fake_openai, "bea", ATTACKER, VICTIM)
    assert "Bea's notes" in told["bea"]
    assert not (people / legacy_person_folder("terminal", "bea")).exists()
    assert (people / person_folder("bea") / "diary.txt").exists()
    assert SECRET not in told[ATTACKER] and SECRET not in told[VICTIM]
    assert (people / contested / "diary.txt").read_text() == SECRET  # kept, for the owner
    alerts = [str(e.get("text", "")) for e in events if e.get("kind") == "alert"]
    assert any(f"people/{contested}" in alert for alert in alerts), events
