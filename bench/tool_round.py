"""What one round of many tool calls costs: `omega ask --tools` against an instant
OpenAI-compatible server whose first answer asks for N `list_files` calls at once and whose
second answers in text.

Prints, for each N, the wall time and CPU of the whole `omega ask` process, its peak RSS, the
calls Omega ran (the audit's tool rows are not kept by `ask`; the count is the number of tool
results the second request carried that were not refusals) and the size of that second
request (what the provider bills as input: every result goes back to the model). This is the
figure behind `[limits] max_tool_calls_per_round`: one reply that asks for 360 calls makes
Omega run them and send all their results back, in every one of up to six rounds.
Run: .venv/bin/python bench/tool_round.py [runs] [--calls 1,4,16,64,360] [--tool run_shell]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI, Step  # noqa: E402

from bench.ask_cold import run_once  # noqa: E402

REFUSED = "tool-call limit"  # the start of the refusal Omega sends for a call past a limit


TOOLS = {"list_files": {"path": "."}, "run_shell": {"command": "echo hi"}}


def calls_of(count: int, tool: str) -> list[dict[str, Any]]:
    """`count` calls of `tool` in OpenAI's wire format."""
    return [
        {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(TOOLS[tool])},
        }
        for n in range(count)
    ]


def second_request(server: FakeOpenAI) -> tuple[int, int]:
    """(tool results that ran, bytes of messages) of the request that carried the results."""
    for request in server.requests:
        results = [m for m in request.messages if m.get("role") == "tool"]
        if results:
            ran = [m for m in results if REFUSED not in str(m.get("content", ""))]
            return len(ran), len(json.dumps(request.messages))
    return 0, 0


def main() -> None:
    args = sys.argv[1:]
    counts = [1, 4, 16, 64, 360]
    tool = "list_files"
    if "--tool" in args:
        at = args.index("--tool")
        tool = args[at + 1]
        del args[at : at + 2]
    if "--calls" in args:
        at = args.index("--calls")
        counts = [int(n) for n in args[at + 1].split(",")]
        del args[at : at + 2]
    runs = int(args[0]) if args else 3
    with tempfile.TemporaryDirectory() as home, FakeOpenAI() as server:
        (Path(home) / "workspace").mkdir()
        for n in range(20):  # a listing of some size, as a real folder has
            (Path(home) / "workspace" / f"file-{n:02d}.txt").write_text("x")
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT / "src"),
            OMEGA_HOME=home,
            OMEGA_ALLOW_ROOT="1",
            OMEGA_PROVIDER__DEFAULT="openai",
            OMEGA_PROVIDER__OPENAI__BASE_URL=server.base_url,
            OMEGA_PROVIDER__OPENAI__API_KEY="bench",
        )
        print(f"omega ask --tools, one round of N {tool} calls, {runs} runs each")
        for count in counts:
            walls, cpus, rss = [], [], []
            ran = size = 0
            for _ in range(runs):
                server.requests.clear()
                server.script[:] = [Step(tool_calls=calls_of(count, tool)), Step(text="done")]
                wall, cpu, peak = run_once(env, "list my files", "--tools")
                walls.append(wall)
                cpus.append(cpu)
                rss.append(peak)
                ran, size = second_request(server)
            print(
                f"  N={count:<4} ran {ran:<4} wall p50 {statistics.median(walls):.3f} s   "
                f"CPU p50 {statistics.median(cpus):.3f} s   peak RSS {statistics.median(rss):.0f} "
                f"MiB   results sent back {size / 1024:.0f} KiB"
            )


if __name__ == "__main__":
    main()
