"""What Omega sends through the real `claude` CLI per ordinary message, counted on the wire.

Runs `omega chat --jsonl` with the Claude Code provider (the pinned CLI, installed by
scripts/install-claude-cli.sh) against the fake Messages API and prints: the planning request's
size, every request's size for one "hi", bytes and estimated tokens per "hi" (characters / 4 of
the system prompt, messages and tool schemas), and the session transcripts the CLI left in
~/.claude/projects after the messages. Needs npm (or the CLI already in the cache).

Run: .venv/bin/python bench/claude_request_size.py [--messages N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.anthropic_server import FakeAnthropic, RecordedRequest  # noqa: E402
from tests.fakes.real_claude import UnavailableError, claude_env, pinned_claude  # noqa: E402

OMEGA = str(Path(sys.executable).with_name("omega"))


def size(request: RecordedRequest) -> int:
    """The request body's size in bytes, as JSON."""
    return len(json.dumps(request.body).encode())


def tokens(request: RecordedRequest) -> int:
    """Estimated input tokens: what the model reads, at about 4 characters a token."""
    body = request.body
    parts: list[Any] = [body.get("system", ""), body.get("messages", []), body.get("tools", [])]
    return sum(len(json.dumps(p)) for p in parts) // 4


def run(messages: int) -> dict[str, Any]:
    """Send `messages` times "hi" through Omega; what the fake API received."""
    claude = pinned_claude()
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as api:
        base = Path(tmp)
        home, bin_dir = base / "home", base / "bin"
        (home / ".claude").mkdir(parents=True)
        bin_dir.mkdir()
        (bin_dir / "claude").symlink_to(claude)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("OMEGA_")},
            **claude_env(api.base_url, home),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "OMEGA_HOME": str(base / "omega"),
            "OMEGA_PROVIDER__DEFAULT": "claude-code",
            "OMEGA_ALLOW_ROOT": "1",
        }
        for key in ("OMEGA_SANDBOX__MODE",):  # the mode may be chosen from outside
            if key in os.environ:
                env[key] = os.environ[key]
        stdin = "".join(
            json.dumps({"text": "hi", "sender_id": "bench"}) + "\n" for _ in range(messages)
        )
        done = subprocess.run(
            [OMEGA, "chat", "--jsonl"],
            input=stdin,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"omega failed: {done.stderr[-2000:]}")
        projects = home / ".claude" / "projects"
        transcripts = len(list(projects.rglob("*.jsonl"))) if projects.exists() else 0
        return {
            "planning": [size(r) for r in api.planner_requests],
            "answers": [size(r) for r in api.requests],
            "tokens": sum(tokens(r) for r in [*api.planner_requests, *api.requests]),
            "transcripts": transcripts,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3, help="how many 'hi' to send")
    args = parser.parse_args()
    try:
        first = run(1)
        many = run(args.messages) if args.messages > 1 else first
    except UnavailableError as exc:
        print(f"skipped: {exc}")
        return
    planning = first["planning"][0] if first["planning"] else 0
    total = sum(first["planning"]) + sum(first["answers"])
    heavy = sum(1 for b in [*first["planning"], *first["answers"]] if b > 16 * 1024)
    print(f"planning request: {planning} bytes (target <= 16384)")
    print(f"requests for one 'hi': planning {first['planning']}, others {first['answers']}")
    print(f"per 'hi': {total} bytes, ~{first['tokens']} tokens, {heavy} request(s) over 16 KB")
    print(
        f"session transcripts in ~/.claude/projects after {args.messages} messages: "
        f"{many['transcripts']}"
    )


if __name__ == "__main__":
    main()
