"""Every object `omega chat --jsonl` writes holds to the documented schema (docs/jsonl.schema.json,
docs/channels/terminal.md: "omega chat --jsonl"), and every object of a turn carries that turn's
`reply_to` and a stable `id`: the plan, each step's progress and the summary, the owner's alert
a marker raised, the notice of a cut message, a photo, a provider's error, and the error for a
line that could not be read (issue 39)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import tool_call

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "jsonl.schema.json").read_text())
INPUT = {**SCHEMA, "$ref": "#/$defs/input"}


def chat(fake: FakeOpenAI, lines: str, **env: str) -> list[dict[str, Any]]:
    """Run the lines through `omega chat --jsonl`; every object written, each validated."""
    result = run_omega("chat", "--jsonl", env=openai_env(fake, **env), stdin=lines)
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    for obj in objects:
        jsonschema.validate(obj, SCHEMA)
    return objects


def of(objects: list[dict[str, Any]], turn: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["reply_to"] == turn]


def test_a_plan_its_progress_and_its_summary_carry_the_turn(fake_openai: FakeOpenAI) -> None:
    plan = {"kind": "steps", "steps": [{"do": "find the invoice"}, {"do": "email it"}]}
    fake_openai.script = [Step(text=json.dumps(plan), planner=True)]
    line = {"id": "m1", "text": "find the invoice and email it to Bob"}
    jsonschema.validate(line, INPUT)
    objects = chat(fake_openai, jsonl(line), OMEGA_PROVIDER__CLASSIFY="true")
    assert all(o["reply_to"] == "m1" for o in objects)
    assert [o["id"] for o in objects] == [
        "m1#welcome",
        "m1#plan",
        "m1#step-1",
        "m1#step-2",
        "m1#1",  # the summary, the turn's answer
    ]
    assert [o["kind"] for o in objects] == ["welcome", "status", "status", "status", "reply"]


def test_every_kind_of_a_turn_has_its_reply_to_and_a_stable_id(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [
        Step(match="note this", text="Noted.\nLIMITATION: no fax | cannot send faxes | a skill"),
        Step(match="draw", tool_calls=[tool_call("c1", "write_file", path="c.png", content="P")]),
        Step(match="draw", text="Here is your chart."),
        Step(match="fail please", status=400, text="bad request"),
    ]
    lines = (
        jsonl({"id": "a", "text": "hello"}, {"id": "b", "text": "/status"})
        + "this is not json\n"
        + jsonl(
            {"id": "d", "text": 5},
            {"id": "e", "text": "note this"},
            {"id": "f", "text": "long " * 60},
            {"id": "g", "text": "draw a chart"},
            {"id": "h", "text": "fail please"},
        )
    )

    def run() -> list[dict[str, Any]]:
        return chat(
            fake_openai,
            lines,
            OMEGA_PROVIDER__CLASSIFY="false",
            OMEGA_LIMITS__MAX_MESSAGE_CHARS="100",
        )

    objects = run()
    kinds = Counter(o["kind"] for o in objects)
    assert {"welcome", "reply", "command", "error", "alert", "notice", "photo"} <= set(kinds)
    assert all(o["reply_to"] for o in objects)  # none here is about no turn
    assert len({o["id"] for o in objects}) == len(objects)
    [unread] = of(objects, "line:3")
    assert (unread["id"], unread["kind"], unread["to"]) == ("line:3#error", "error", None)
    [bad_field] = of(objects, "d")
    assert bad_field["id"] == "d#error" and "'text'" in bad_field["text"]
    [alert] = [o for o in of(objects, "e") if o["kind"] == "alert"]
    assert alert["id"].startswith("e#alert-")
    # (An `ack` may come first when the line before is still being answered.)
    assert {o["kind"] for o in of(objects, "f")} - {"ack"} == {"notice", "reply"}
    assert {o["kind"] for o in of(objects, "g")} - {"ack"} == {"photo", "reply"}
    assert [o["kind"] for o in of(objects, "h") if o["kind"] != "ack"] == ["error"]

    # Sent again: lines already handled are not answered twice, and the errors for the lines
    # that were not taken come back with the same ids, so a script drops them.
    again = {o["id"] for o in run()}
    assert {"line:3#error", "d#error"} <= again
