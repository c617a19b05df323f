"""Cold one-shot `omega ask`: wall time and peak RSS, bundled model and an instant API server
(the lean tool-less path, and `--tools` through pydantic-ai).

Prints medians over N runs, then the costliest imports of the lean path (`-X importtime`) and
any heavy module it loaded (none is the budget, tests/integration/test_ask_lean.py). The price
memo is warm after the first run, as in use. Run: .venv/bin/python bench/ask_cold.py [runs]
[--api-only] (--api-only leaves out the bundled model, which needs the `local` extra).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

OMEGA = str(Path(sys.executable).with_name("omega"))
# What the lean path must not import (the budget test's list, in short).
HEAVY = frozenset(
    {"pydantic_ai", "openai", "httpx", "httpx2", "genai_prices", "anthropic", "google", "numpy"}
    | {"yaml", "mcp", "fastmcp", "telegram", "llama_cpp"}
)


def run_once(env: dict[str, str], question: str, *flags: str) -> tuple[float, float]:
    """One `omega ask`: (wall seconds, peak RSS MiB) of that process alone."""
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
    return wall, usage.ru_maxrss / 1024


def measure(label: str, env: dict[str, str], runs: int, *flags: str) -> None:
    """Print the medians for one provider set-up."""
    run_once(env, "warm the page cache", *flags)  # first run only warms the OS file cache
    walls, rss = zip(
        *(run_once(env, "What is the capital of France?", *flags) for _ in range(runs)),
        strict=True,
    )
    print(
        f"{label:<28} wall p50 {statistics.median(walls):.2f} s   "
        f"max {max(walls):.2f} s   peak RSS p50 {statistics.median(rss):.0f} MiB"
    )


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
    args = [a for a in sys.argv[1:] if a != "--api-only"]
    runs = int(args[0]) if args else 5
    with tempfile.TemporaryDirectory() as home:
        base = dict(os.environ, OMEGA_HOME=home, OMEGA_ALLOW_ROOT="1")
        print(f"omega ask, cold process, {runs} runs each")
        if "--api-only" not in sys.argv:
            measure(
                "bundled model (local)",
                dict(base, OMEGA_PROVIDER__DEFAULT="local", OMEGA_PROVIDER__LOCAL__MAX_TOKENS="32"),
                runs,
            )
        with FakeOpenAI() as server:
            api = dict(
                base,
                OMEGA_PROVIDER__DEFAULT="openai",
                OMEGA_PROVIDER__OPENAI__BASE_URL=server.base_url,
                OMEGA_PROVIDER__OPENAI__API_KEY="bench",
            )
            measure("instant OpenAI-compatible", api, runs)
            measure("  the same with --tools", api, runs, "--tools")
            import_profile(api)


if __name__ == "__main__":
    main()
