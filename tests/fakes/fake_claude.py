#!/usr/bin/env python3
"""A scripted stand-in for the `claude` CLI, for the Claude Code provider's tests.

FAKE_CLAUDE_SCRIPT names a JSON file holding a list of runs, used one per invocation, in
order (the last one repeats). A run may set: result, subtype, session_id, is_error, cost,
usage, tool_uses ([{name, input, result, is_error}]), sleep (seconds, after the init event),
exit_code, stderr, no_result (default: true when exit_code is non-zero), raw_lines (emitted
before the result), spawn_child (start a `sleep 60` child in the same process group),
probe_reads / probe_writes (paths it tries to read / write, outcomes logged as "probes").
Each invocation is appended as one JSON line to FAKE_CLAUDE_LOG.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

VALUE_OPTIONS = {
    "-p",
    "--print",
    "--output-format",
    "--model",
    "--max-turns",
    "--append-system-prompt",
    "--allowedTools",
    "--resume",
    "--tools",
}


def parse_args(argv: list[str]) -> dict[str, str]:
    """The options this fake understands, by name (`--verbose` maps to "1")."""
    options: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in VALUE_OPTIONS and i + 1 < len(argv):
            options[arg] = argv[i + 1]
            i += 2
            continue
        if arg == "--verbose":
            options[arg] = "1"
        i += 1
    return options


def next_run(script: Path) -> dict[str, Any]:
    """The next run in the script (a counter file beside it remembers how many were used)."""
    runs: list[dict[str, Any]] = json.loads(script.read_text(encoding="utf-8"))
    counter = script.with_name(script.name + ".count")
    with open(counter, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # concurrent invocations take distinct runs
        handle.seek(0)
        used = int(handle.read().strip() or 0)
        handle.seek(0)
        handle.truncate()
        handle.write(str(used + 1))
    return runs[min(used, len(runs) - 1)]


def probe(run: dict[str, Any]) -> dict[str, str]:
    """Try the reads and writes the run asks for (as an attacker would); the outcome of each."""
    outcomes: dict[str, str] = {}
    for path in run.get("probe_reads", []):
        try:
            outcomes[f"read {path}"] = Path(path).read_text(errors="replace")[:200]
        except OSError as exc:
            outcomes[f"read {path}"] = f"error: {exc.strerror}"
    for path in run.get("probe_writes", []):
        try:
            Path(path).write_text("written by claude\n")
            outcomes[f"write {path}"] = "written"
        except OSError as exc:
            outcomes[f"write {path}"] = f"error: {exc.strerror}"
    return outcomes


def record(argv: list[str], child_pid: int | None, run: dict[str, Any] | None = None) -> None:
    """Append this invocation to FAKE_CLAUDE_LOG."""
    log_path = os.environ.get("FAKE_CLAUDE_LOG")
    if not log_path:
        return
    settings_path = Path(".claude/settings.local.json")
    settings: Any = None
    settings_mode = None
    if settings_path.exists():
        settings_mode = settings_path.stat().st_mode & 0o777
        text = settings_path.read_text(encoding="utf-8")
        try:
            settings = json.loads(text)
        except json.JSONDecodeError:
            settings = text
    entry = {
        "argv": argv,
        "cwd": os.getcwd(),
        "claudecode_in_env": "CLAUDECODE" in os.environ,
        "stdin_is_devnull": os.path.samestat(os.fstat(0), os.stat(os.devnull)),
        "settings": settings,
        "settings_mode": settings_mode,
        "pid": os.getpid(),
        "child_pid": child_pid,
        "probes": probe(run or {}),
    }
    with open(log_path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(entry) + "\n")


def emit(event: dict[str, Any]) -> None:
    """Write one stream-json event and flush, as the real CLI streams."""
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def result_event(run: dict[str, Any], session_id: str) -> dict[str, Any]:
    """The final result object, as both output formats end with it."""
    subtype = run.get("subtype", "success")
    event: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": run.get("is_error", False),
        "session_id": session_id,
        "total_cost_usd": run.get("cost", 0.01),
        "usage": run.get("usage", {"input_tokens": 10, "output_tokens": 5}),
        "num_turns": 1,
    }
    if run.get("result") is not None:
        event["result"] = run["result"]
    return event


def stream(run: dict[str, Any], options: dict[str, str], session_id: str) -> None:
    """Emit init, tool_use/tool_result pairs, the answer and the result as stream-json."""
    model = options.get("--model", "")
    emit({"type": "system", "subtype": "init", "session_id": session_id, "model": model})
    for n, use in enumerate(run.get("tool_uses", [])):
        tool_id = f"toolu_{n}"
        block = {"type": "tool_use", "id": tool_id, "name": use["name"], "input": use["input"]}
        emit({"type": "assistant", "message": {"content": [block]}, "session_id": session_id})
        time.sleep(use.get("sleep", 0))
        if use.get("no_result"):
            continue
        result = {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": use.get("result", ""),
            "is_error": use.get("is_error", False),
        }
        emit({"type": "user", "message": {"content": [result]}, "session_id": session_id})
    time.sleep(run.get("sleep", 0))
    for line in run.get("raw_lines", []):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    if run.get("result"):
        text = {"type": "text", "text": run["result"]}
        emit({"type": "assistant", "message": {"content": [text]}, "session_id": session_id})
    if not run.get("no_result", run.get("exit_code", 0) != 0):
        emit(result_event(run, session_id))


def main() -> int:
    """Behave like `claude -p` as the script says."""
    argv = sys.argv[1:]
    options = parse_args(argv)
    run = next_run(Path(os.environ["FAKE_CLAUDE_SCRIPT"]))
    child_pid = None
    if run.get("spawn_child"):
        child_pid = subprocess.Popen(["sleep", "60"]).pid  # stays in our process group
    record(argv, child_pid, run)
    output_format = options.get("--output-format", "text")
    if output_format == "stream-json" and "--verbose" not in options:
        sys.stderr.write("Error: --output-format=stream-json requires --verbose\n")
        return 1
    session_id = run.get("session_id", "fake-session")
    if output_format == "stream-json":
        stream(run, options, session_id)
    else:
        time.sleep(run.get("sleep", 0))
        for line in run.get("raw_lines", []):
            sys.stdout.write(line + "\n")
        if not run.get("no_result", run.get("exit_code", 0) != 0):
            sys.stdout.write(json.dumps(result_event(run, session_id)) + "\n")
        sys.stdout.flush()
    sys.stderr.write(run.get("stderr", ""))
    return int(run.get("exit_code", 0))


if __name__ == "__main__":
    sys.exit(main())
