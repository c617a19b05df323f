"""Cold one-shot `omega ask`: wall time, CPU (user + sys) and peak RSS, bundled model and an
instant API server (the lean tool-less path, and `--tools` through pydantic-ai).

Prints medians over N runs, then the costliest imports of the lean path (`-X importtime`) and
any heavy module it loaded (none is the budget, tests/integration/test_ask_lean.py). The price
memo is warm after the first run, as in use. This checkout's `src/` is what runs (first on
PYTHONPATH, whatever the venv has installed); `--against REV` runs another commit too, run by
run in turn, so both meet the same machine load (on a busy machine compare CPU, which waiting
does not inflate). Each tree's bytecode is compiled first (PYTHONDONTWRITEBYTECODE would
otherwise make a tree compile every module on every run).
Run: .venv/bin/python bench/ask_cold.py [runs] [--api-only] [--against REV]...
(--api-only leaves out the bundled model, which needs the `local` extra).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

if TYPE_CHECKING:
    from bench.burst import Tree

OMEGA = str(Path(sys.executable).with_name("omega"))
# What the lean path must not import (the budget test's list, in short).
HEAVY = frozenset(
    {"pydantic_ai", "openai", "httpx", "httpx2", "genai_prices", "anthropic", "google", "numpy"}
    | {"yaml", "mcp", "fastmcp", "telegram", "llama_cpp"}
)


def run_once(env: dict[str, str], question: str, *flags: str) -> tuple[float, float, float]:
    """One `omega ask`: (wall seconds, CPU seconds, peak RSS MiB) of that process alone."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [OMEGA, "ask", *flags, question], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdout is not None
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"omega ask failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(label: str, env: dict[str, str], trees: list[Tree], runs: int, *flags: str) -> None:
    """Print the medians for one provider set-up, each tree's runs taken in turn (each tree in
    a home of its own: an older tree refuses a database a newer one has migrated)."""
    envs = []
    for number, tree in enumerate(trees):
        home = Path(env["OMEGA_HOME"], f"tree-{number}")
        home.mkdir(exist_ok=True)
        envs.append(dict(env, PYTHONPATH=tree.src, OMEGA_HOME=str(home)))
    for tree_env in envs:  # the first run only warms the OS file cache
        run_once(tree_env, "warm the page cache", *flags)
    results: list[list[tuple[float, float, float]]] = [[] for _ in trees]
    for _ in range(runs):
        for tree_env, result in zip(envs, results, strict=True):
            result.append(run_once(tree_env, "What is the capital of France?", *flags))
    for tree, result in zip(trees, results, strict=True):
        walls, cpus, rss = zip(*result, strict=True)
        print(
            f"{label:<28} {tree.commit:<9} wall p50 {statistics.median(walls):.3f} s   "
            f"max {max(walls):.3f} s   CPU p50 {statistics.median(cpus):.3f} s   "
            f"peak RSS p50 {statistics.median(rss):.0f} MiB"
        )


def compiled(tree: Tree) -> Tree:
    """The tree with its bytecode written, so that no run pays for compiling."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", tree.src], check=True)
    return tree


def import_profile(env: dict[str, str], top: int = 12) -> None:
    """`python -X importtime` of one lean `omega ask`: the imports that cost most (cumulative,
    as Python reports them), so what the lean path loads is in plain sight."""
    code = (
        "import sys; from omega.cli.main import main; sys.argv = ['omega', 'ask', 'hi']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or "cumulative" in line:
            continue
        name = parts[2].rstrip()
        if len(name) - len(name.lstrip()) <= 3:  # top-level imports and their children
            rows.append((int(parts[1].strip()), name.strip()))
    print("  -X importtime of the lean ask, the costliest imports (cumulative ms):")
    for micros, name in sorted(rows, reverse=True)[:top]:
        print(f"    {micros / 1000:7.1f}  {name}")
    imported = {line.split("|")[2].strip() for line in proc.stderr.splitlines() if "|" in line}
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY)
    print(f"  heavy modules imported: {', '.join(heavy) or 'none'}")


def main() -> None:
    from bench.burst import Tree, other_tree, this_tree  # burst imports run_once from here

    args = [a for a in sys.argv[1:] if a != "--api-only"]
    against = [args[i + 1] for i, a in enumerate(args) if a == "--against"]
    args = [a for i, a in enumerate(args) if a != "--against" and args[i - 1 : i] != ["--against"]]
    runs = int(args[0]) if args else 5
    here = Tree(this_tree().commit, str(ROOT / "src"))
    trees = [compiled(tree) for tree in (here, *(other_tree(rev) for rev in against))]
    with tempfile.TemporaryDirectory() as home:
        base = dict(os.environ, OMEGA_HOME=home, OMEGA_ALLOW_ROOT="1")
        print(
            f"omega ask, cold process, {runs} runs each, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.1f}"
        )
        if "--api-only" not in sys.argv:
            measure(
                "bundled model (local)",
                dict(base, OMEGA_PROVIDER__DEFAULT="local", OMEGA_PROVIDER__LOCAL__MAX_TOKENS="32"),
                trees,
                runs,
            )
        with FakeOpenAI() as server:
            api = dict(
                base,
                OMEGA_PROVIDER__DEFAULT="openai",
                OMEGA_PROVIDER__OPENAI__BASE_URL=server.base_url,
                OMEGA_PROVIDER__OPENAI__API_KEY="bench",
            )
            measure("instant OpenAI-compatible", api, trees, runs)
            measure("  the same with --tools", api, trees, runs, "--tools")
            import_profile(dict(api, PYTHONPATH=here.src, OMEGA_HOME=str(Path(home, "tree-0"))))


if __name__ == "__main__":
    main()
