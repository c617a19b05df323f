"""Issue 27's table in one command: a burst of senders, the warm reply, CPU per message and the
cold `omega ask`, all through the real CLI (`omega chat --jsonl`) against the scripted
OpenAI-compatible HTTP server (keep-alive, TCP_NODELAY).

- burst: 50 senders write "hi" at once, every provider call (planning calls too) takes 1.0 s;
  the time until all 50 are answered, classification off and on. Goals: <= 1.3 s / <= 1.4 s.
- warm: one sender, 200 messages one after another with an instant provider: p50 / p99 from
  writing the line to reading the reply, the omega process's CPU per message, and the provider
  calls each message cost (classification on: a plain question is one call, a request two).
- cold: `omega ask hi` wall time and peak RSS (the lean path).
- memory: the RSS of `omega chat` after the 200 warm messages.

Every row is printed with the commit it measured. `--against REV` measures another commit in the
same run, figure by figure in turn (its tree checked out once under /tmp, run from this venv), so
two commits meet the same machine load.

Run: .venv/bin/python bench/burst.py [--senders 50] [--messages 200] [--delay 1.0]
     [--against 6b208b4]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

from bench.ask_cold import run_once  # noqa: E402

OMEGA = str(Path(sys.executable).with_name("omega"))
WAIT_SECS = 120.0


@dataclass
class Event:
    """One line `omega chat --jsonl` wrote, and when it was read."""

    at: float
    data: dict[str, object]


class Chat:
    """A running `omega chat --jsonl`: write lines, read its events as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [OMEGA, "chat", "--jsonl"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.events: queue.Queue[Event] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.events.put(Event(time.perf_counter(), json.loads(line)))

    def send(self, *messages: Mapping[str, object]) -> float:
        """Write the messages in one go; returns when they were written."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        self.proc.stdin.flush()
        return time.perf_counter()

    def replies(self, count: int) -> list[Event]:
        """The next `count` replies (errors count too, so a failure cannot hang the bench)."""
        got: list[Event] = []
        deadline = time.monotonic() + WAIT_SECS
        while len(got) < count:
            event = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
            if event.data.get("kind") in ("reply", "error"):
                got.append(event)
        return got

    def cpu_secs(self) -> float:
        """User + system CPU the omega process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        """The omega process's resident memory now."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@dataclass(frozen=True)
class Tree:
    """The code an `omega` process runs: this checkout, or another commit's `src/` first on
    PYTHONPATH (the venv's own install of this checkout is a plain path entry, so it yields)."""

    commit: str
    src: str = ""


def omega_env(
    home: str, server: FakeOpenAI, tree: Tree | None = None, **extra: str
) -> dict[str, str]:
    """The environment of an `omega` process in `home` that talks to `server`."""
    if tree is not None and tree.src:
        extra = {"PYTHONPATH": tree.src, **extra}
    return dict(
        os.environ,
        OMEGA_HOME=home,
        OMEGA_ALLOW_ROOT="1",
        OMEGA_PROVIDER__DEFAULT="openai",
        OMEGA_PROVIDER__OPENAI__BASE_URL=server.base_url,
        OMEGA_PROVIDER__OPENAI__API_KEY="bench",
        **extra,
    )


@contextmanager
def chat(server: FakeOpenAI, classify: bool, tree: Tree | None = None) -> Iterator[Chat]:
    """`omega chat --jsonl` in a fresh home, talking to `server`, warmed by one exchange."""
    with tempfile.TemporaryDirectory() as home:
        env = omega_env(
            home,
            server,
            tree,
            OMEGA_PROVIDER__OPENAI__MODEL="fake-model",
            OMEGA_PROVIDER__CLASSIFY="true" if classify else "false",
            OMEGA_CHANNEL__TERMINAL__ALLOWED_USERS='["*"]',
        )
        session = Chat(env)
        try:
            delay, planner_delay = server.default_delay, server.planner_delay
            server.default_delay = server.planner_delay = 0.0
            session.send({"text": "warm up", "sender_id": "warm"})
            session.replies(1)
            server.default_delay, server.planner_delay = delay, planner_delay
            yield session
        finally:
            session.close()


def burst(
    senders: int, delay: float, classify: bool, tree: Tree | None = None
) -> tuple[float, float]:
    """Seconds from writing `senders` greetings at once until every one is answered, and the
    provider calls each greeting cost."""
    with FakeOpenAI() as server:
        server.default_delay = server.planner_delay = delay
        with chat(server, classify, tree) as session:
            before = len(server.requests) + len(server.planner_requests)
            started = session.send(*({"text": "hi", "sender_id": f"s{i}"} for i in range(senders)))
            answered = session.replies(senders)
            if any(e.data["kind"] == "error" for e in answered):
                raise SystemExit(f"burst: an error came back: {answered}")
            calls = len(server.requests) + len(server.planner_requests) - before
            return max(e.at for e in answered) - started, calls / senders


@dataclass
class Warm:
    """One warm run's figures."""

    p50_ms: float
    p99_ms: float
    cpu_ms: float
    calls: float
    rss_mib: float = field(default=float("nan"))


def warm(messages: int, classify: bool, text: str, tree: Tree | None = None) -> Warm:
    """One sender, `messages` messages one after another, instant provider."""
    with FakeOpenAI() as server, chat(server, classify, tree) as session:
        before = len(server.requests) + len(server.planner_requests)
        walls: list[float] = []
        cpu = session.cpu_secs()
        for i in range(messages):
            started = session.send({"text": text.format(i=i), "sender_id": "ana"})
            [reply] = session.replies(1)
            walls.append((reply.at - started) * 1000)
        cpu = session.cpu_secs() - cpu
        rss = session.rss_mib()
        calls = len(server.requests) + len(server.planner_requests) - before
        walls.sort()
        return Warm(
            p50_ms=statistics.median(walls),
            p99_ms=walls[min(len(walls) - 1, int(len(walls) * 0.99))],
            cpu_ms=cpu * 1000 / messages,
            calls=calls / messages,
            rss_mib=rss,
        )


def cold(runs: int, tree: Tree | None = None) -> tuple[float, float]:
    """Median wall seconds and peak RSS MiB of `omega ask hi` (lean path, instant server)."""
    with tempfile.TemporaryDirectory() as home, FakeOpenAI() as server:
        env = omega_env(home, server, tree)
        run_once(env, "warm the page cache")
        results = [run_once(env, "hi") for _ in range(runs)]
    return statistics.median(w for w, _, _ in results), statistics.median(r for _, _, r in results)


def this_tree() -> Tree:
    """This checkout, named by its commit (with "+" when the work tree has changes); its
    `src/` first on PYTHONPATH, so a worktree is measured rather than the checkout the venv
    was installed from."""
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return Tree(commit + ("+" if dirty else ""), str(ROOT / "src"))


def other_tree(rev: str) -> Tree:
    """Another commit's tree, checked out once (detached) under the temporary folder."""
    commit = _git("rev-parse", "--short", rev)
    folder = Path(tempfile.gettempdir()) / f"omega-bench-{commit}"
    if not folder.exists():
        _git("worktree", "add", "--detach", str(folder), commit)
    return Tree(commit, str(folder / "src"))


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def figures(tree: Tree, args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """Every row of the table for one tree: (figure, value, goal)."""
    rows: list[tuple[str, str, str]] = []
    floor = args.delay
    off, _ = burst(args.senders, args.delay, classify=False, tree=tree)
    rows.append(
        (
            f"{args.senders} senders at once, provider {args.delay:g} s, classification off",
            f"{off:.2f} s",
            f"<= 1.3 s (floor {floor:.2f} s)",
        )
    )
    on, calls = burst(args.senders, args.delay, classify=True, tree=tree)
    rows.append(("same, classification on", f"{on:.2f} s", "<= 1.4 s"))
    rows.append(("provider calls per 'hi', classification on", f"{calls:g}", "1"))
    question = warm(args.messages, True, "what about the garden budget {i}?", tree)
    request = warm(args.messages, True, "note the garden budget {i}", tree)
    plain = warm(args.messages, False, "note the garden budget {i}", tree)
    for label, w in (
        ("a plain question, classification on", question),
        ("a request, classification on", request),
        ("a request, classification off", plain),
    ):
        rows.append(
            (
                f"warm reply p50 / p99, {label} ({w.calls:g} calls)",
                f"{w.p50_ms:.1f} / {w.p99_ms:.1f} ms",
                "<= 10 / 25 ms",
            )
        )
    for label, w in (("on, request", request), ("off", plain)):
        rows.append((f"CPU per message (classification {label})", f"{w.cpu_ms:.1f} ms", "<= 10 ms"))
    rows.append((f"RSS after {args.messages} messages", f"{request.rss_mib:.0f} MiB", "<= 100 MiB"))
    wall, rss = cold(args.runs, tree)
    rows.append(("cold `omega ask hi`", f"{wall:.3f} s / {rss:.0f} MiB", "<= 0.25 s / 40 MiB"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--delay", type=float, default=1.0, help="provider latency in the burst")
    parser.add_argument("--runs", type=int, default=5, help="cold `omega ask` runs")
    parser.add_argument("--against", action="append", default=[], help="another commit to measure")
    args = parser.parse_args()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"issue 27/40 figures, {when}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    trees = [this_tree(), *(other_tree(rev) for rev in args.against)]
    # Tree by tree in turn, so each commit meets the same machine load.
    tables = [figures(tree, args) for tree in trees]
    width = max(len(r[0]) for r in tables[0])
    print(f"| {'figure':<{width}} | " + " | ".join(t.commit for t in trees) + " | goal |")
    print(f"|{'-' * (width + 2)}|" + "---|" * len(trees) + "---|")
    for i, (figure, _value, goal) in enumerate(tables[0]):
        values = " | ".join(table[i][1] for table in tables)
        print(f"| {figure:<{width}} | {values} | {goal} |")


if __name__ == "__main__":
    main()
