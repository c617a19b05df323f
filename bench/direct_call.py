"""One provider call through `ApiProvider.complete`, against the instant HTTP fake of
bench/warm_path.py, answered without a tool call: tool-less (classification, a summary) and
offering Omega's tools (a reply). Each as a direct model request (issue 40) beside pydantic-ai's
agent run the same call took before. Prints the CPU and wall time per call of each, alternating
rounds in one process.

Run: .venv/bin/python bench/direct_call.py [calls]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.warm_path import _Handler  # noqa: E402
from omega.config import Config  # noqa: E402
from omega.paths import OmegaPaths  # noqa: E402
from omega.providers import build_provider  # noqa: E402
from omega.providers.api import ApiProvider  # noqa: E402
from omega.tools.wrappers import RecordingToolset  # noqa: E402
from omega.types import ChatMessage, Context  # noqa: E402

CONTEXT = Context(
    system_prompt="You are Omega. Be brief.",
    messages=[ChatMessage("user", f"message {i}") for i in range(9)]
    + [ChatMessage("user", "what about the garden budget?")],
    max_tokens=400,
)


async def timed(provider: ApiProvider, calls: int, agent: bool, tools: bool) -> tuple[float, float]:
    """CPU and wall ms per call, the agent graph forced when `agent`, tools offered when
    `tools` (the agent then makes the first request, as before issue 40's second step)."""
    offers, definitions = provider.offers_tools, RecordingToolset.definitions

    async def none(self: RecordingToolset, ctx: object) -> None:
        return None

    if agent:
        provider.offers_tools = lambda context: True  # type: ignore[method-assign]
        RecordingToolset.definitions = none  # type: ignore[method-assign, assignment]
    context = dataclasses.replace(CONTEXT, use_tools=tools)
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(calls):
            await provider.complete(context)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        provider.offers_tools = offers  # type: ignore[method-assign]
        RecordingToolset.definitions = definitions  # type: ignore[method-assign]
    return cpu / calls * 1000, wall / calls * 1000


MODES = (
    (False, True, "reply offering tools, agent run (before)"),
    (True, True, "reply offering tools, direct (issue 40)"),
    (False, False, "tool-less, agent run (before)"),
    (True, False, "tool-less, direct (issue 40)"),
)


async def main(calls: int) -> None:
    """Warm every path, then alternate five rounds of each and print the medians."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    section = {
        "base_url": f"http://127.0.0.1:{server.server_port}/v1",
        "api_key": "sk-bench-0123456789",
        "model": "fake-model",
    }
    with tempfile.TemporaryDirectory() as home:
        provider = build_provider(
            "openai",
            Config.model_validate({"provider": {"openai": section}}),
            OmegaPaths(Path(home)),
        )
        assert isinstance(provider, ApiProvider)
        rounds: dict[tuple[bool, bool], list[tuple[float, float]]] = {}
        for direct, tools, _ in MODES:
            await timed(provider, 20, not direct, tools)
            rounds[direct, tools] = []
        for _ in range(5):
            for direct, tools, _ in MODES:
                rounds[direct, tools].append(await timed(provider, calls, not direct, tools))
    for direct, tools, label in MODES:
        cpu = statistics.median(r[0] for r in rounds[direct, tools])
        wall = statistics.median(r[1] for r in rounds[direct, tools])
        print(f"{label:<42} CPU {cpu:5.2f} ms/call  wall {wall:5.2f} ms/call")
    server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="?", type=int, default=100)
    asyncio.run(main(parser.parse_args().calls))
