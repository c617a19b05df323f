"""Hostile input at volume: 10^5 generated lines through the JSONL parser and the JSONL channel
loop, and a sample of the messages through the real gateway and pipeline.

Lines are valid objects with any code point (lone surrogates included, as JSON escapes), cut
JSON, deep nesting (up to 200,000 brackets), undecodable bytes read as UTF-8 with replacement,
wrong field types and oversized text. Prints how many were accepted, rejected with a clear
error, or crashed (must be 0), and throughput. Run: .venv/bin/python bench/fuzz_jsonl.py [n]
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from omega.app import bootstrap, pipeline_deps
from omega.channels.terminal import JsonlChannel, parse_jsonl_line
from omega.gateway.gateway import Gateway
from omega.gateway.routing import PLANNER_TAG
from omega.memory import Store
from omega.types import Context, IncomingMessage, OutgoingMessage, Reply

SURROGATE = re.compile("[\ud800-\udfff]")
PIPELINE_SAMPLE = 500


def random_text(rng: random.Random, size: int) -> str:
    """Any code point, surrogates and controls included, weighted to the awkward ones."""
    pools = [(0x0, 0x7F), (0x80, 0x7FF), (0xD800, 0xDFFF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    out = []
    for _ in range(size):
        low, high = rng.choice(pools)
        out.append(chr(rng.randint(low, high)))
    return "".join(out)


def random_value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(
            [None, True, 17, -3.5, float("inf"), random_text(rng, rng.randint(0, 30))]
        )
    if roll < 0.75:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {random_text(rng, 3): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def generate(rng: random.Random) -> str:
    """One input line (newline-free), of one of the hostile shapes."""
    kind = rng.random()
    if kind < 0.40:  # a plausible message with hostile strings
        obj: dict[str, object] = {"text": random_text(rng, rng.randint(0, 80))}
        if rng.random() < 0.5:
            obj["sender_id"] = random_text(rng, rng.randint(1, 12))
        if rng.random() < 0.2:
            obj["id"] = random_text(rng, rng.randint(1, 20))
        if rng.random() < 0.1:
            obj["attachments"] = [
                {"kind": "document", "data": base64.b64encode(rng.randbytes(30)).decode()}
            ]
        return json.dumps(obj)
    if kind < 0.55:  # wrong types anywhere
        return json.dumps(
            {k: random_value(rng) for k in rng.sample(["text", "sender_id", "is_group", "id"], 3)}
        )
    if kind < 0.70:  # cut JSON
        line = json.dumps({"text": random_text(rng, 40)})
        return line[: rng.randint(0, len(line))]
    if kind < 0.72:  # deep nesting
        return rng.choice("[{") * rng.choice([50, 1_000, 5_000, 200_000])
    if kind < 0.87:  # undecodable bytes, read as UTF-8 with replacement (as stdin is)
        raw = b'{"text": "' + rng.randbytes(rng.randint(0, 40)) + b'"}'
        return raw.decode("utf-8", errors="replace").replace("\n", " ")
    if kind < 0.88:  # oversized text
        return json.dumps({"text": "x" * rng.randint(20_000, 200_000)})
    return random_text(rng, rng.randint(0, 60)).replace("\n", " ").replace("\r", " ")


def parse_all(lines: list[str]) -> tuple[Counter[str], list[IncomingMessage], float]:
    outcomes: Counter[str] = Counter()
    accepted = []
    started = time.perf_counter()
    for line in lines:
        try:
            message = parse_jsonl_line(line, "me")
        except ValueError:
            outcomes["rejected"] += 1
            continue
        except Exception as exc:  # must never happen
            outcomes[f"crashed: {type(exc).__name__}"] += 1
            continue
        outcomes["accepted"] += 1
        if SURROGATE.search(message.text + message.sender_id + message.sender_name):
            outcomes["surrogate leaked"] += 1
        accepted.append(message)
    return outcomes, accepted, time.perf_counter() - started


async def channel_loop(lines: list[str]) -> tuple[int, int, float]:
    """The whole input through JsonlChannel.run: (submitted, error objects, seconds)."""
    submitted = 0

    async def submit(message: IncomingMessage) -> asyncio.Future[None]:
        nonlocal submitted
        submitted += 1
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.set_result(None)
        return future

    safe = [line.replace("\r", " ").replace("\x0b", " ").replace("\x0c", " ") for line in lines]
    stdin = io.StringIO("".join(f"{line}\n" for line in safe))
    stdout = io.StringIO()
    started = time.perf_counter()
    await JsonlChannel(stdin=stdin, stdout=stdout, default_sender="me").run(submit)
    errors = sum(1 for line in stdout.getvalue().splitlines() if '"kind": "error"' in line)
    return submitted, errors, time.perf_counter() - started


class EchoProvider:
    name = "echo"

    def availability(self) -> tuple[bool, str]:
        return True, "in-process"

    async def prepare(self) -> None:
        return None

    async def complete(self, context: Context) -> Reply:
        if PLANNER_TAG in context.prompt:
            return Reply(text='{"kind": "direct"}', provider=self.name)
        return Reply(text=f"echo: {context.prompt[:100]}\ud800", provider=self.name)


class Counting:
    name = "terminal"

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.unprintable = 0

    async def run(self, submit: object) -> None:
        return None

    async def send(self, message: OutgoingMessage) -> None:
        try:
            (message.text + message.target).encode("utf-8")
        except UnicodeEncodeError:
            self.unprintable += 1
        self.kinds[message.kind] += 1

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        return None


async def through_pipeline(messages: list[IncomingMessage]) -> tuple[Counting, int, float]:
    """The sample through the real gateway and pipeline: (channel counts, audit rows, secs)."""
    with tempfile.TemporaryDirectory() as home:
        runtime = bootstrap(Path(home))
        store = Store(runtime.paths.db)
        deps = pipeline_deps(runtime, store)
        deps.provider = EchoProvider()  # type: ignore[assignment]
        channel = Counting()
        gateway = Gateway(deps, [channel])
        started = time.perf_counter()
        for message in messages:
            await gateway.submit(message)
            await gateway.drain()
        elapsed = time.perf_counter() - started
        audited = len(store.audit_entries(1_000_000))
        store.close()
        return channel, audited, elapsed


def main() -> None:
    os.environ.setdefault("OMEGA_ALLOW_ROOT", "1")
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = random.Random(17)
    lines = [generate(rng) for _ in range(count)]
    outcomes, accepted, parse_secs = parse_all(lines)
    print(
        f"parser: {count:,} lines in {parse_secs:.2f} s ({count / parse_secs:,.0f} lines/s): "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(outcomes.items()))
    )
    submitted, errors, loop_secs = asyncio.run(channel_loop(lines))
    non_empty = sum(1 for line in lines if line.strip())
    print(
        f"channel loop: {submitted:,} submitted + {errors:,} error objects = "
        f"{submitted + errors:,} of {non_empty:,} non-empty lines in {loop_secs:.2f} s "
        f"({count / loop_secs:,.0f} lines/s); input never stopped: "
        f"{submitted + errors == non_empty}"
    )
    sample = rng.sample(accepted, min(PIPELINE_SAMPLE, len(accepted)))
    channel, audited, pipe_secs = asyncio.run(through_pipeline(sample))
    answered = channel.kinds["reply"] + channel.kinds["command"] + channel.kinds["error"]
    print(
        f"pipeline: {len(sample)} messages in {pipe_secs:.2f} s "
        f"({len(sample) / pipe_secs:,.0f} msg/s): answered {answered}, audit rows {audited}, "
        f"unprintable outgoing {channel.unprintable}, kinds "
        + ", ".join(f"{k} {v}" for k, v in sorted(channel.kinds.items()))
    )


if __name__ == "__main__":
    main()
