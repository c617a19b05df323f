"""The warm reply path end to end: `omega chat --jsonl` against an instant OpenAI-compatible HTTP
fake (TCP_NODELAY, keep-alive), 200 messages from one sender, classification on, with 100,000
stored messages in a fresh $OMEGA_HOME.

Prints p50/p99 wall time per message (line written -> reply line read), the omega process's
CPU time per message, and its resident memory after the warm-up and after the timed messages.
Run: .venv/bin/python bench/warm_path.py [messages] [--classify off] [--stored N] [--text T]
[--profile out.prof] (cProfile of the omega process's main thread; the database thread's time
shows as waits) [--pyspy PATH-TO-py-spy --svg out.svg] (every thread sampled).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PLANNER_TAG = "You are the planner that routes requests for Omega."
SENDER = "bench"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real provider

    def setup(self) -> None:
        super().setup()
        # Without it a response in two writes waits ~40 ms on the client's delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        messages = body.get("messages", [])
        last = str(messages[-1].get("content", "")) if messages else ""
        text = '{"kind": "direct"}' if PLANNER_TAG in last else f"echo: {last[:60]}"
        prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
        payload = {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 8,
                "total_tokens": prompt + 8,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def seed(home: Path, count: int) -> None:
    """Fill a fresh memory.db with `count` messages over 200 senders (plus some of SENDER's own)
    in one transaction through the store, so the FTS index is built as the store builds it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from omega.memory import Store
    from omega.memory.db import utc_now

    words = "calendar meeting project garden invoice travel recipe budget music train".split()
    store = Store(home / "memory.db")
    now = utc_now()
    senders = [f"user{i}" for i in range(199)] + [SENDER]
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO conversations (id, channel, sender_id, status, started_at, "
            "last_activity) VALUES (?, 'terminal', ?, 'closed', ?, ?)",
            [(f"c-{s}", s, now, now) for s in senders],
        )
        conn.executemany(
            "INSERT INTO messages (conversation_id, channel, sender_id, role, content, "
            "created_at) VALUES (?, 'terminal', ?, ?, ?, ?)",
            (
                (
                    f"c-{senders[i % len(senders)]}",
                    senders[i % len(senders)],
                    "user" if i % 2 == 0 else "assistant",
                    f"message {i} about {words[i % 10]} and {words[(i * 7) % 10]}",
                    now,
                )
                for i in range(count)
            ),
        )
        # Known already: no welcome on the first timed message.
        for key, value in (("welcomed", "true"), ("preferred_language", "English")):
            conn.execute(
                "INSERT INTO facts (sender_id, key, value, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (SENDER, key, value, now, now),
            )
    store.close()


def run(args: argparse.Namespace) -> tuple[list[float], float, tuple[float, float]]:
    """Drive one omega process; return wall ms per message, CPU ms per message, and its RSS
    in MiB after the warm-up and after the timed messages."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        started = time.perf_counter()
        seed(home, args.stored)
        print(f"seeded {args.stored:,} messages in {time.perf_counter() - started:.1f} s")
        env = dict(os.environ)
        env.update(
            {
                "OMEGA_HOME": str(home),
                "OMEGA_ALLOW_ROOT": "1",
                "OMEGA_PROVIDER__DEFAULT": "openai",
                "OMEGA_PROVIDER__OPENAI__BASE_URL": f"http://127.0.0.1:{server.server_port}/v1",
                "OMEGA_PROVIDER__OPENAI__API_KEY": "sk-bench-0123456789",
                "OMEGA_PROVIDER__OPENAI__MODEL": "fake-model",
                "OMEGA_PROVIDER__CLASSIFY": "true" if args.classify == "on" else "false",
                "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
            }
        )
        command = [sys.executable, "-m", "omega", "chat", "--jsonl"]
        if args.profile:
            command = [sys.executable, "-m", "cProfile", "-o", args.profile, "-m", "omega"]
            command += ["chat", "--jsonl"]
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            bufsize=1,
        )
        assert proc.stdin and proc.stdout

        def ask(i: int) -> float:
            assert proc.stdin and proc.stdout
            line = json.dumps({"text": args.text.format(i=i), "sender_id": SENDER})
            t0 = time.perf_counter()
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            while True:
                out = proc.stdout.readline()
                if not out:
                    raise RuntimeError("omega exited")
                event = json.loads(out)
                if event.get("kind") in ("reply", "error"):
                    return (time.perf_counter() - t0) * 1000

        for i in range(20):  # warm-up: imports, pools, caches
            ask(i)
        spy = None
        if args.pyspy:
            kind = "flamegraph" if args.svg.endswith(".svg") else "raw"
            spy = subprocess.Popen(
                [
                    *(args.pyspy, "record", "-p", str(proc.pid), "-r", "500", "--threads"),
                    "--nonblocking",
                    "-f",
                    kind,
                    "-o",
                    args.svg,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.0)
        warm_rss = _rss_mib(proc.pid)
        cpu0 = _cpu_secs(proc.pid)
        walls = [ask(20 + i) for i in range(args.messages)]
        cpu = (_cpu_secs(proc.pid) - cpu0) * 1000 / args.messages
        rss = (warm_rss, _rss_mib(proc.pid))
        if spy is not None:
            spy.send_signal(2)
            spy.wait(timeout=60)
        proc.stdin.close()
        proc.wait(timeout=60)
        server.shutdown()
        return walls, cpu, rss


def _cpu_secs(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("messages", nargs="?", type=int, default=200)
    parser.add_argument("--classify", choices=("on", "off"), default="on")
    parser.add_argument("--stored", type=int, default=100_000)
    parser.add_argument(
        "--text",
        default="what about the garden budget {i}?",
        help="each message ({i} its number); a request such as 'note the garden budget {i}' "
        "takes two provider calls with classification on, a plain question one",
    )
    parser.add_argument("--profile", default="")
    parser.add_argument("--pyspy", default="")
    parser.add_argument("--svg", default="bench/profiles/warm_path.svg")
    args = parser.parse_args()
    walls, cpu, rss = run(args)
    walls.sort()
    p99 = walls[min(len(walls) - 1, int(len(walls) * 0.99))]
    print(
        f"warm path, omega chat --jsonl, HTTP fake, {args.messages} messages, "
        f"{args.stored:,} stored, classification {args.classify}: "
        f"p50 {statistics.median(walls):.1f} ms  p99 {p99:.1f} ms  CPU {cpu:.1f} ms/message  "
        f"RSS {rss[0]:.0f} MiB after the warm-up, {rss[1]:.0f} MiB after {args.messages}"
    )


if __name__ == "__main__":
    main()
