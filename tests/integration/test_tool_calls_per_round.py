"""`[limits] max_tool_calls_per_round` end to end: a model response asking for more tool calls
at once than the cap runs only the cap's worth; the others are refused unrun, told to the model
and recorded as failed, and the turn still answers (`omega chat --jsonl`, scripted server)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import jsonl, openai_env, run_omega
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_tool_loop import ANA_OWNER, replies, tool_call, tool_results, tool_rows

LIMIT_TEXT = "tool-call limit reached"


def writes(count: int) -> list[dict[str, object]]:
    """`count` write_file calls, each to a file of its own (what ran is what exists)."""
    return [
        tool_call(f"call_{n}", "write_file", path=f"out-{n:03d}.txt", content=str(n))
        for n in range(count)
    ]


def test_a_response_asking_for_more_calls_than_the_cap_runs_only_the_cap(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [Step(tool_calls=writes(40)), Step(text="Wrote what I could.")]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER),
        stdin=jsonl({"text": "write forty files", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["Wrote what I could."]
    written = sorted((isolated_env / "workspace").glob("out-*.txt"))
    assert len(written) == 16  # the default cap
    # The model hears which calls ran and which were refused, each by its id.
    results = tool_results(fake_openai.requests[1])
    assert len(results) == 40
    refused = [call for call, text in results.items() if LIMIT_TEXT in text]
    assert len(refused) == 24
    ran = {
        f"out-{int(call.removeprefix('call_')):03d}.txt" for call in results if call not in refused
    }
    assert ran == {path.name for path in written}
    # Every call asked for is on record, the refused ones as failed calls with the reason.
    rows = tool_rows(isolated_env)
    assert len(rows) == 40
    failed = [row for row in rows if not row["ok"]]
    assert len(failed) == 24
    assert all(LIMIT_TEXT in row["error"] for row in failed)


def test_the_cap_is_set_in_config_and_counts_each_round_anew(
    fake_openai: FakeOpenAI, isolated_env: Path
) -> None:
    fake_openai.script = [
        Step(tool_calls=writes(3)),
        Step(tool_calls=[tool_call("again", "list_files", path=".")]),
        Step(text="Done."),
    ]
    result = run_omega(
        "chat",
        "--jsonl",
        env=openai_env(
            fake_openai, OMEGA_AUTH__OWNERS=ANA_OWNER, OMEGA_LIMITS__MAX_TOOL_CALLS_PER_ROUND="2"
        ),
        stdin=jsonl({"text": "write three files, then look", "sender_id": "ana"}),
    )
    assert result.returncode == 0, result.stderr
    assert replies(result.events) == ["Done."]
    assert len(list((isolated_env / "workspace").glob("out-*.txt"))) == 2
    # The next response's one call is within its own round's cap: it ran.
    listing = tool_results(fake_openai.requests[2])["again"]
    assert LIMIT_TEXT not in listing
    assert "out-000.txt" in listing
