"""The seeds' small rows (issue 39, item 5), each through `omega chat --jsonl` with the scripted
OpenAI-compatible server: `/uptime` is a command, the slow-answer nudges come within the
provider's timeout, assisted mode writes a tool's scaffold when its proposal is filed, and a
model known to see images gets them without `vision = true`."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from omega.gateway.pipeline import nudge_delays
from omega.providers.vision import model_sees_images
from omega.turn import PipelineDeps
from tests.conftest import jsonl, openai_env, run_omega
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_containment_e2e import OWNER, proposal

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def chat(fake: FakeOpenAI, *lines: dict[str, Any], **env: str) -> list[dict[str, Any]]:
    result = run_omega("chat", "--jsonl", env=openai_env(fake, **env), stdin=jsonl(*lines))
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_uptime_is_answered_by_a_command_not_the_model(fake_openai: FakeOpenAI) -> None:
    objects = chat(fake_openai, {"text": "/uptime"}, {"text": "/help"})
    [uptime, help_text] = [o for o in objects if o["kind"] == "command"]
    assert uptime["text"].startswith("Uptime: 0h 0m ")
    assert "/uptime" in help_text["text"]
    assert fake_openai.requests == []  # neither reached the provider


def nudges(timeout: float) -> tuple[float, float]:
    deps = cast(PipelineDeps, SimpleNamespace(provider_timeout=timeout))
    return nudge_delays(15.0, 120.0, deps)


@pytest.mark.no_store
def test_the_nudge_schedule_fits_inside_the_provider_timeout() -> None:
    assert nudges(120.0) == (15.0, 40.0)  # 15 s, 55 s, 95 s: all before 120 s
    assert nudges(3605.0) == (15.0, 120.0)  # Claude Code's hour: as before
    assert nudges(30.0) == (10.0, 10.0)
    assert nudges(0.3) == (0.5, 0.5)  # never a busy loop


def test_a_slow_answer_is_nudged_before_the_timeout(fake_openai: FakeOpenAI) -> None:
    """With the default schedule (15 s first) a 9 s timeout could never show a nudge: its
    nudges come at 3 s and 6 s (a third of it each), and the answer at 4 s, leaving 5 s for a
    loaded machine (a 3 s timeout and a 2.2 s answer left 0.8 s, which four test workers and
    other jobs on two cores once used up)."""
    fake_openai.script = [Step(text="Here it is.", hang_secs=4)]
    objects = chat(
        fake_openai,
        {"text": "tell me a long story", "id": "s1"},
        OMEGA_PROVIDER__TIMEOUT_SECS="9",
        OMEGA_PROVIDER__CLASSIFY="false",
    )
    kinds = [(o["kind"], o["text"]) for o in objects if o["kind"] in ("status", "reply")]
    assert kinds[0] == ("status", "Taking a moment...")
    assert kinds[-1] == ("reply", "Here it is.")
    assert all(o["reply_to"] == "s1" for o in objects)


def test_assisted_mode_writes_the_scaffold_when_the_proposal_is_filed(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(text="LIMITATION: no formatter | cannot format reports | a tool"),
        Step(
            match="capability analyst",
            text=proposal("tool", "fmt_report", "Formats quarterly reports as tables."),
        ),
    ]
    objects = chat(
        fake_openai, {"text": "format it"}, **OWNER, OMEGA_EVOLUTION__AUTONOMY_MODE="assisted"
    )
    scaffold = isolated_env / "scaffolds" / "fmt_report.py"
    assert scaffold.is_file()  # there for the review, before anyone approved anything
    assert "raise NotImplementedError" in scaffold.read_text()
    conn = connect_db(isolated_env / "memory.db")
    try:
        assert conn.execute("SELECT name, status FROM proposals").fetchall() == [
            ("fmt_report", "pending")
        ]
    finally:
        conn.close()
    alerts = [str(o["text"]) for o in objects if o["kind"] == "alert"]
    assert any("New proposal #1" in a and str(scaffold) in a for a in alerts)
    # A human's work on it is never overwritten by the approval.
    scaffold.write_text("def fmt_report(**kwargs: object) -> str:\n    return 'mine'\n")
    chat(fake_openai, {"text": "/approve 1 ok"}, **OWNER, OMEGA_EVOLUTION__AUTONOMY_MODE="assisted")
    assert "return 'mine'" in scaffold.read_text()


def photo_request(fake: FakeOpenAI, **env: str) -> Any:
    image = {"kind": "image", "data": base64.b64encode(PNG).decode(), "mime_type": "image/png"}
    fake.script = [Step(text="A tiny red square.")]
    chat(fake, {"text": "what is this?", "attachments": [image]}, **env)
    return fake.requests[-1].messages[-1]["content"]


def test_a_model_known_to_see_images_gets_them_by_default(fake_openai: FakeOpenAI) -> None:
    content = photo_request(fake_openai, OMEGA_PROVIDER__OPENAI__MODEL="gpt-4o-mini")
    assert isinstance(content, list)
    assert any(part.get("type") == "image_url" for part in content)
    off = photo_request(
        fake_openai,
        OMEGA_PROVIDER__OPENAI__MODEL="gpt-4o-mini",
        OMEGA_PROVIDER__OPENAI__VISION="false",
    )
    assert isinstance(off, str) and "[Attached file:" in off


@pytest.mark.no_store
def test_which_models_see_images() -> None:
    for name in (
        "gpt-4o",
        "gpt-4.1-mini",
        "llava:13b",
        "qwen2.5-vl-7b-instruct",
        "Qwen/Qwen2-VL-7B-Instruct",
        "llama3.2-vision:11b",
        "gemma3:27b",
        "pixtral-12b",
        "anthropic/claude-sonnet-4",
    ):
        assert model_sees_images(name), name
    for name in ("", "fake-model", "llama3.1:8b", "qwen2.5:7b", "mistral", "gpt-3.5-turbo"):
        assert not model_sees_images(name), name
