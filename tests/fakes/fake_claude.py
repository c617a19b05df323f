#!/usr/bin/env python3
"""A scripted stand-in for the `claude` CLI, for the Claude Code provider's tests.

Its events are the real CLI's: each one is a transcript recorded from the pinned CLI
(tests/fixtures/claude_cli/*.jsonl, made by record.py there) with the scripted values put in,
and `transcript` replays a recorded run as it is. Like the real CLI it answers `--version` and
`auth status`, and refuses bypassPermissions as root unless IS_SANDBOX=1.

FAKE_CLAUDE_SCRIPT names a JSON file holding a list of runs, used one per invocation, in
order (the last one repeats). A run may set: result, subtype, session_id, is_error, cost,
usage, tool_uses ([{name, input, result, is_error}]), sleep (seconds, after the init event),
exit_code, stderr, no_result (default: true when exit_code is non-zero), raw_lines (emitted
before the result), spawn_child (start a `sleep 60` child in the same process group),
probe_reads / probe_writes (paths it tries to read / write, $VARIABLES expanded, outcomes
logged as "probes"),
transcript (the name of a recorded transcript to replay instead).
Like the real CLI, `-p` reads the prompt from stdin, --system-prompt-file and
--append-system-prompt-file name files holding the system prompt, and the login comes through
the file descriptor named by CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR or
CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR.
Each invocation is appended as one JSON line to FAKE_CLAUDE_LOG (with its environment, the
prompt, the system prompts and the login it read).
The CLI gets an allow-listed environment, so the test's wrapper script exports these, and
FAKE_CLAUDE_VERSION (default: the recorded one), FAKE_CLAUDE_LOGGED_IN ("0": logged out),
FAKE_CLAUDE_UNKNOWN_OPTIONS (comma-separated options an older CLI rejects), FAKE_CLAUDE_EUID
(the uid it believes it runs as).
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TRANSCRIPTS = Path(
    os.environ.get("FAKE_CLAUDE_TRANSCRIPTS")
    or Path(__file__).resolve().parents[1] / "fixtures" / "claude_cli"
)
VALUE_OPTIONS = {
    "--output-format",
    "--model",
    "--max-turns",
    "--append-system-prompt",
    "--system-prompt",
    "--append-system-prompt-file",
    "--system-prompt-file",
    "--setting-sources",
    "--allowedTools",
    "--resume",
    "--tools",
    "--permission-mode",
    "--mcp-config",
    "--max-budget-usd",
    "--json-schema",
}
ROOT_REFUSAL = (
    "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
)


PROMPT: str | None = None  # what `-p` read from stdin
LOGIN: dict[str, str] = {}  # the login read from a file descriptor, by its variable


def transcript(name: str) -> list[dict[str, Any]]:
    """A recorded run of the real CLI, one event per line."""
    lines = (TRANSCRIPTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def recorded_version() -> str:
    """The version of the CLI the transcripts were recorded from."""
    return (TRANSCRIPTS / "VERSION").read_text(encoding="utf-8").strip()


def template(name: str, index: int) -> dict[str, Any]:
    """A recorded event to fill in (a fresh copy)."""
    event: dict[str, Any] = json.loads(json.dumps(transcript(name)[index]))
    return event


def write_wrapper(path: Path, fake: Path | None = None, **env: str) -> Path:
    """A `claude` executable at `path` running the fake (or a copy of it at `fake`) with this
    Python, exporting `env` (FAKE_CLAUDE_SCRIPT, FAKE_CLAUDE_LOG, ...): the provider hands the
    CLI only an allow-listed environment."""
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())
    program = shlex.quote(str(fake or Path(__file__).resolve()))
    path.write_text(
        f'#!/bin/sh\n{exports}exec {shlex.quote(sys.executable)} {program} "$@"\n',
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


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
            outcomes[f"read {path}"] = Path(os.path.expandvars(path)).read_text(errors="replace")[
                :200
            ]
        except OSError as exc:
            outcomes[f"read {path}"] = f"error: {exc.strerror}"
    for path in run.get("probe_writes", []):
        try:
            Path(os.path.expandvars(path)).write_text("written by claude\n")
            outcomes[f"write {path}"] = "written"
        except OSError as exc:
            outcomes[f"write {path}"] = f"error: {exc.strerror}"
    return outcomes


LOGIN_VARS = ("CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR", "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR")


def read_login() -> dict[str, str]:
    """The login handed over through a file descriptor, as the real CLI reads it."""
    found = {}
    for var in LOGIN_VARS:
        fd = os.environ.get(var)
        if fd:
            try:
                found[var] = Path(f"/proc/self/fd/{int(fd)}").read_text().strip()
            except (OSError, ValueError) as exc:
                found[var] = f"error: {exc}"
    return found


def file_option(options: dict[str, str], name: str) -> str | None:
    """The text of the file an option names (None without the option)."""
    path = options.get(name)
    return None if path is None else Path(path).read_text(encoding="utf-8")


def record(argv: list[str], child_pid: int | None, run: dict[str, Any] | None = None) -> None:
    """Append this invocation to FAKE_CLAUDE_LOG."""
    log_path = os.environ.get("FAKE_CLAUDE_LOG")
    if not log_path:
        return
    options = parse_args(argv)
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
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "claudecode_in_env": "CLAUDECODE" in os.environ,
        "stdin_is_devnull": os.path.samestat(os.fstat(0), os.stat(os.devnull)),
        "prompt": PROMPT,
        "system_prompt": file_option(options, "--system-prompt-file"),
        "append_system_prompt": file_option(options, "--append-system-prompt-file"),
        "login": LOGIN,
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
    """The final result object, as both output formats end with it (the recorded one)."""
    subtype = run.get("subtype", "success")
    event = template("max_turns" if subtype == "error_max_turns" else "reply", -1)
    usage = {key: 0 for key in ("cache_creation_input_tokens", "cache_read_input_tokens")}
    usage.update(run.get("usage", {"input_tokens": 10, "output_tokens": 5}))
    event.update(
        subtype=subtype,
        is_error=run.get("is_error", subtype != "success"),
        session_id=session_id,
        total_cost_usd=run.get("cost", 0.01),
        usage={**event["usage"], **usage},
        num_turns=1 + len(run.get("tool_uses", [])),
    )
    event.pop("result", None)  # absent at max turns, as the real CLI does
    if run.get("result") is not None:
        event["result"] = run["result"]
    return event


def init_event(options: dict[str, str], session_id: str) -> dict[str, Any]:
    """The recorded init event, saying what this invocation was given."""
    event = template("reply", 0)
    tools = options.get("--tools")
    event.update(
        cwd=os.getcwd(),
        session_id=session_id,
        model=options.get("--model", ""),
        permissionMode=options.get("--permission-mode", "default"),
        claude_code_version=os.environ.get("FAKE_CLAUDE_VERSION", event["claude_code_version"]),
    )
    if tools is not None:
        event["tools"] = [t for t in tools.split(",") if t]
    return event


def message_event(name: str, index: int, content: list[Any], session_id: str) -> dict[str, Any]:
    """A recorded assistant or user event carrying `content`."""
    event = template(name, index)
    event["message"]["content"] = content
    event["session_id"] = session_id
    if "tool_use_result" in event:  # the tool's own view of its result (Bash: stdout, stderr)
        text = content[0].get("content") if content else ""
        event["tool_use_result"] = {"stdout": text if isinstance(text, str) else "", "stderr": ""}
    return event


def stream(run: dict[str, Any], options: dict[str, str], session_id: str) -> None:
    """Emit init, tool_use/tool_result pairs, the answer and the result as stream-json."""
    if run.get("transcript"):
        for event in transcript(run["transcript"]):
            emit({**event, "session_id": session_id} if "session_id" in event else event)
        return
    emit(init_event(options, session_id))
    for n, use in enumerate(run.get("tool_uses", [])):
        tool_id = f"toolu_{n}"
        block = {"type": "tool_use", "id": tool_id, "name": use["name"], "input": use["input"]}
        emit(message_event("tool_use", 1, [block], session_id))
        time.sleep(use.get("sleep", 0))
        if use.get("no_result"):
            continue
        result = {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": use.get("result", ""),
            "is_error": use.get("is_error", False),
        }
        emit(message_event("tool_use", 2, [result], session_id))
    time.sleep(run.get("sleep", 0))
    for line in run.get("raw_lines", []):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    if run.get("result"):
        text = {"type": "text", "text": run["result"]}
        emit(message_event("reply", 1, [text], session_id))
    if not run.get("no_result", run.get("exit_code", 0) != 0):
        emit(result_event(run, session_id))


def refusal(argv: list[str], options: dict[str, str]) -> str:
    """What the real CLI would print before refusing to start ("" when it starts)."""
    for name in filter(None, os.environ.get("FAKE_CLAUDE_UNKNOWN_OPTIONS", "").split(",")):
        if name in argv:
            return f"error: unknown option '{name}'\n"
    bypass = options.get("--permission-mode") == "bypassPermissions"
    euid = int(os.environ.get("FAKE_CLAUDE_EUID") or os.geteuid())  # a test may play a user
    if bypass and euid == 0 and os.environ.get("IS_SANDBOX") != "1":
        return ROOT_REFUSAL + "\n"
    return ""


def main() -> int:
    """Behave like `claude -p` as the script says."""
    argv = sys.argv[1:]
    version = os.environ.get("FAKE_CLAUDE_VERSION") or recorded_version()
    if argv == ["--version"]:
        print(f"{version} (Claude Code)")
        return 0
    if argv[:2] == ["auth", "status"]:
        logged_in = os.environ.get("FAKE_CLAUDE_LOGGED_IN", "1") != "0"
        print(json.dumps({"loggedIn": logged_in, "authMethod": "api_key" if logged_in else "none"}))
        return 0 if logged_in else 1
    options = parse_args(argv)
    global PROMPT, LOGIN
    if "-p" in argv or "--print" in argv:
        PROMPT = sys.stdin.read()  # no prompt argument: the real CLI reads it from stdin
    LOGIN = read_login()
    refused = refusal(argv, options)
    if refused:
        record(argv, None)
        sys.stderr.write(refused)
        return 1
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
