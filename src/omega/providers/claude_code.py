"""The Claude Code CLI provider: runs `claude -p --output-format json` in the workspace."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

from omega.config import ClaudeCodeConfig
from omega.providers.base import ProviderError
from omega.types import Context, Reply, Usage


def render_prompt(context: Context) -> str:
    """Flatten the history into the single prompt `claude -p` takes."""
    lines = []
    for turn in context.messages[:-1]:
        speaker = "User" if turn.role == "user" else "Assistant"
        lines.append(f"{speaker}: {turn.content}")
    history = ("Conversation so far:\n" + "\n".join(lines) + "\n\n") if lines else ""
    return f"{history}{context.prompt}"


class ClaudeCodeProvider:
    """Delegates to the local `claude` CLI, which brings its own tools and authentication."""

    def __init__(self, config: ClaudeCodeConfig, workspace: Path, executable: str = "claude"):
        self._config = config
        self._workspace = workspace
        self._executable = executable

    @property
    def name(self) -> str:
        return "claude-code"

    def availability(self) -> tuple[bool, str]:
        path = shutil.which(self._executable)
        if path is None:
            return False, "`claude` CLI not found on PATH"
        return True, f"{path} (model {self._config.model})"

    async def prepare(self) -> None:
        return None  # the CLI is a separate process; nothing to load here

    async def complete(self, context: Context) -> Reply:
        executable = shutil.which(self._executable)
        if executable is None:
            raise ProviderError("`claude` CLI not found on PATH", kind="unavailable")
        model = context.model or self._config.model
        args = [
            executable,
            "-p",
            render_prompt(context),
            "--output-format",
            "json",
            "--model",
            model,
            "--max-turns",
            str(self._config.max_turns),
        ]
        if context.system_prompt:
            args += ["--append-system-prompt", context.system_prompt]
        if self._config.allowed_tools:
            args += ["--allowedTools", ",".join(self._config.allowed_tools)]
        env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}  # no nested sessions
        self._workspace.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *args,
            cwd=self._workspace,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), self._config.timeout_secs)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise ProviderError("claude CLI timed out", kind="timeout") from None
        except asyncio.CancelledError:
            proc.kill()
            await proc.wait()
            raise
        if proc.returncode != 0 and not out.strip():
            raise ProviderError(
                f"claude CLI exited {proc.returncode}: {err.decode(errors='replace')[:300]}"
            )
        try:
            data = json.loads(out)
        except json.JSONDecodeError:
            raise ProviderError(f"claude CLI gave non-JSON output: {out[:200]!r}") from None
        if not isinstance(data, dict):
            raise ProviderError("claude CLI gave an unexpected JSON shape")
        if data.get("is_error") and not data.get("result"):
            raise ProviderError(f"claude CLI error: {data.get('subtype', 'unknown')}")
        usage = data.get("usage") or {}
        return Reply(
            text=str(data.get("result") or "").strip(),
            provider=self.name,
            model=model,
            usage=Usage(
                input_tokens=int(usage.get("input_tokens", 0) or 0),
                output_tokens=int(usage.get("output_tokens", 0) or 0),
                cost_usd=data.get("total_cost_usd"),
            ),
            session_id=data.get("session_id"),
            elapsed_ms=int((time.perf_counter() - started) * 1000),
        )
