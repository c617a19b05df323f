"""One tool-less provider call (classification, a summary, a reply without tools) through
`ApiProvider.complete`, against the instant HTTP fake of bench/warm_path.py: the direct model
request (issue 40) beside pydantic-ai's agent run the same call took before. Prints the CPU and
wall time per call of each, alternating rounds in one process.

Run: .venv/bin/python bench/direct_call.py [calls]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
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
from omega.types import ChatMessage, Context  # noqa: E402

CONTEXT = Context(
    system_prompt="You are Omega. Be brief.",
    messages=[ChatMessage("user", f"message {i}") for i in range(9)]
    + [ChatMessage("user", "what about the garden budget?")],
    max_tokens=400,
)


async def timed(provider: ApiProvider, calls: int, agent: bool) -> tuple[float, float]:
    """CPU and wall ms per call, the agent graph forced when `agent`."""
    offers = provider._offers_tools
    provider._offers_tools = (lambda context: True) if agent else offers  # type: ignore[method-assign]
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(calls):
            await provider.complete(CONTEXT)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        provider._offers_tools = offers  # type: ignore[method-assign]
    return cpu / calls * 1000, wall / calls * 1000


async def main(calls: int) -> None:
    """Warm both paths, then alternate five rounds of each and print the medians."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    section = {
        "base_url": f"http://127.0.0.1:{server.server_port}/v1",
        "api_key": "sk-bench-0123456789",
        "model": "fake-model",
    }
    provider = build_provider(
        "openai", Config.model_validate({"provider": {"openai": section}}), OmegaPaths(ROOT)
    )
    assert isinstance(provider, ApiProvider)
    await timed(provider, 20, False)
    await timed(provider, 20, True)
    rounds: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(5):
        for agent in (True, False):
            rounds[agent].append(await timed(provider, calls, agent))
    for agent, label in ((True, "agent run (before)"), (False, "direct request (issue 40)")):
        cpu = statistics.median(r[0] for r in rounds[agent])
        wall = statistics.median(r[1] for r in rounds[agent])
        print(f"{label:<26} CPU {cpu:5.2f} ms/call  wall {wall:5.2f} ms/call")
    server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="?", type=int, default=100)
    asyncio.run(main(parser.parse_args().calls))
