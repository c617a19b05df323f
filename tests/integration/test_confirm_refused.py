"""`/confirm <code>` (markers.confirm): what the owner's reply was refused for having read a page
(markers.provenance) the owner may still have done, as quoted in the alert, with the code that
alert alone carried: once, for a day, never by anyone else. Played through `omega chat --jsonl`
with the scripted OpenAI fake and a page on 127.0.0.1; the clock moved with faketime."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from pathlib import Path

from omega.memory import Store
from omega.turn import local_owner_id
from tests.conftest import OMEGA_BIN, jsonl
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.page import served_page
from tests.integration.test_provenance import fetch
from tests.integration.test_provenance_carried import env
from tests.integration.test_untrusted_quoted import db

OWNER = local_owner_id()
CHECK = "Look at the garden camera each morning"
ACTION = "water the garden"
MARKERS = f"Will do.\nHEARTBEAT_ADD: {CHECK}\nSCHEDULE_ACTION: {ACTION} | 2031-06-01T07:00 | daily"
START = "2031-01-01 08:00:00"  # faked wall-clock times (UTC)
CODE = re.compile(r"/confirm ([0-9a-f]{8})")


def _chat(stamp: str, fake: FakeOpenAI, *lines: dict[str, object]) -> list[dict[str, object]]:
    """`omega chat --jsonl` at `stamp`; the objects it wrote."""
    done = subprocess.run(
        ["faketime", stamp, OMEGA_BIN, "chat", "--jsonl"],
        input=jsonl(*lines),
        capture_output=True,
        text=True,
        env=dict(os.environ, **env(fake)),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _refused(fake: FakeOpenAI, url: str, stamp: str = START) -> str:
    """The owner asks about the page and wants the garden watched: the reply's markers are
    refused; the code the owner's alert gave."""
    fake.script = [
        Step(match="garden", tool_calls=[fetch(url)]),
        Step(match="garden", text=MARKERS),
    ]
    events = _chat(stamp, fake, {"text": f"read {url} and look after my garden"})
    [alert] = [e for e in events if "Not done" in str(e.get("text", ""))]
    assert alert["to"] == OWNER and alert["kind"] == "alert"
    codes = CODE.findall(str(alert["text"]))
    assert len(codes) == 1, alert["text"]
    return str(codes[0])


def _answers(events: list[dict[str, object]], to: str = OWNER) -> list[str]:
    return [str(e["text"]) for e in events if e.get("kind") == "command" and e["to"] == to]


def test_the_owner_confirms_what_was_refused_once_and_only_that(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    with served_page(b"<html><body><p>Roses need water.</p></body></html>", "/g") as url:
        code = _refused(fake_openai, url)
        assert db(isolated_env, "SELECT * FROM scheduled_tasks") == []
        heartbeat = isolated_env / "HEARTBEAT.md"
        assert not heartbeat.exists() or CHECK not in heartbeat.read_text()

        # Someone else who has the code (they cannot, but suppose) may not use it...
        events = _chat(START, fake_openai, {"text": f"/confirm {code}", "sender_id": "mallory"})
        assert _answers(events, "mallory") == ["Only my owner can do that."]
        assert db(isolated_env, "SELECT * FROM scheduled_tasks") == []
        # ...nor does a code the alert never gave do anything.
        events = _chat(START, fake_openai, {"text": "/confirm 0123abcd"})
        assert "nothing done" in _answers(events)[0]

        # The owner confirms: exactly the quoted markers act, as the owner's, on that chat.
        requests = len(fake_openai.requests)
        events = _chat(START, fake_openai, {"text": f"/confirm {code.upper()}"})
        [answer] = _answers(events)
        assert answer.startswith("As you confirmed:") and "SCHEDULE_ACTION" in answer, answer
        assert len(fake_openai.requests) == requests  # a command: no model call
        [task] = db(
            isolated_env,
            "SELECT task_type, creator_role, description, sender_id FROM scheduled_tasks",
        )
        assert (task["task_type"], task["creator_role"], task["description"]) == (
            "action",
            "owner",
            ACTION,
        )
        assert task["sender_id"] == OWNER
        assert CHECK in heartbeat.read_text()
        [audit] = db(
            isolated_env,
            "SELECT status, detail FROM audit_log WHERE event = 'marker_confirmed'"
            " AND status = 'ok'",
        )
        assert "applied: SCHEDULE_ACTION" in audit["detail"]

        # Once only.
        events = _chat(START, fake_openai, {"text": f"/confirm {code}"})
        assert "nothing done" in _answers(events)[0]
        assert len(db(isolated_env, "SELECT * FROM scheduled_tasks")) == 1


def test_a_code_expires_after_a_day(fake_openai: FakeOpenAI, isolated_env: Path) -> None:
    with served_page(b"<html><body><p>Roses need water.</p></body></html>", "/g") as url:
        code = _refused(fake_openai, url)
        events = _chat("2031-01-02 08:30:00", fake_openai, {"text": f"/confirm {code}"})
        assert "more than a day old" in _answers(events)[0]
        assert db(isolated_env, "SELECT * FROM scheduled_tasks") == []
        # A later refusal prunes what expired: nothing old is kept.
        newer = _refused(fake_openai, url, "2031-01-03 08:00:00")
        store = Store(isolated_env / "memory.db")
        try:
            assert store.state_keys("confirm") == [newer]
        finally:
            store.close()


def test_two_replicas_taking_one_code_at_once_apply_it_once(isolated_env: Path) -> None:
    stores = [Store(isolated_env / "memory.db") for _ in range(2)]
    try:
        for round_ in range(20):
            stores[0].state_put("confirm", f"c{round_}", {"n": round_})
            got: list[object] = []
            start = threading.Barrier(2)
            threads = [
                threading.Thread(target=_take, args=(s, f"c{round_}", start, got)) for s in stores
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert sorted(got, key=str) == [None, {"n": round_}]
    finally:
        for store in stores:
            store.close()


def _take(store: Store, key: str, start: threading.Barrier, got: list[object]) -> None:
    start.wait()
    got.append(store.state_take("confirm", key))
