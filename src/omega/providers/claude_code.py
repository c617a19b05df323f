"""The Claude Code CLI provider: runs `claude -p` in the workspace and parses its JSON output.

stream-json output (the default) also yields the tool calls Claude made; plain json output
gives only the final result. Runs stopped at max turns are resumed automatically.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import stat
import time
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from omega.config import ClaudeCodeConfig, SandboxSection
from omega.paths import OmegaPaths
from omega.providers.base import ProviderError
from omega.sandbox import Sandbox
from omega.types import Context, McpServer, Reply, ToolCall, Usage

log = logging.getLogger(__name__)

OutputFormat = Literal["stream-json", "json"]

CONTINUE_PROMPT = "Continue where you left off."
MAX_RESULT_CHARS = 1_000_000  # a runaway answer must not eat memory
MAX_LINE_BYTES = 8 * 1024 * 1024  # one stream-json event; a tool result can carry a whole file
MAX_TOOL_CALLS = 500
PREVIEW_CHARS = 300
STDERR_TAIL_BYTES = 4096
AFTER_RESULT_GRACE_SECS = 30.0  # the CLI exits right after its result; this bounds stragglers
EXIT_GRACE_SECS = 5.0
SETTINGS_NAME = "settings.local.json"
BACKUP_NAME = "settings.local.json.omega-backup"
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")  # ends up in tool ids and a comma-joined list

# One lock per workspace and event loop: MCP calls rewrite the same settings file.
_MCP_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def render_prompt(context: Context) -> str:
    """Flatten the history into the single prompt `claude -p` takes."""
    lines = []
    for turn in context.messages[:-1]:
        speaker = "User" if turn.role == "user" else "Assistant"
        lines.append(f"{speaker}: {turn.content}")
    history = ("Conversation so far:\n" + "\n".join(lines) + "\n\n") if lines else ""
    return f"{history}{context.prompt}"


@dataclass
class _RunOutcome:
    """What one `claude` invocation produced."""

    text: str = ""
    subtype: str = ""
    is_error: bool = False
    got_result: bool = False
    session_id: str | None = None
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


def _as_int(value: object) -> int:
    """A token count from JSON: ints only (bools and junk count as 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _content_blocks(event: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The content blocks of an assistant/user event's message."""
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        yield from (block for block in content if isinstance(block, dict))


def _tool_result_text(content: object) -> str:
    """A tool result's content as text: a string, or a list of text (and other) blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)[:PREVIEW_CHARS]


class _StreamParser:
    """Turns the CLI's output lines (stream-json events, or one json object) into an outcome."""

    def __init__(self) -> None:
        self.outcome = _RunOutcome()
        self._pending: dict[str, tuple[str, dict[str, Any], float]] = {}
        self._unparsed: list[str] = []
        self._unparsed_chars = 0

    def feed_line(self, raw: bytes, now: float) -> None:
        """Parse one output line; lines that are not JSON are kept aside, never fatal."""
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            return
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            log.debug("claude-code: unparseable output line: %.200s", line)
            # Kept in case it is part of a pretty-printed json object (parsed at the end).
            if self._unparsed_chars + len(line) <= MAX_RESULT_CHARS:
                self._unparsed.append(line)
                self._unparsed_chars += len(line)
            return
        self._feed_value(data, now)

    def finish(self, now: float) -> _RunOutcome:
        """Close the run: try leftover lines as one object, record tool calls left unanswered."""
        if not self.outcome.got_result and self._unparsed:
            try:
                self._feed_value(json.loads("\n".join(self._unparsed)), now)
            except json.JSONDecodeError:
                log.warning("claude-code: skipped %d unparseable output lines", len(self._unparsed))
        for name, arguments, started in self._pending.values():
            self._record(
                ToolCall(
                    name=name,
                    arguments=arguments,
                    ok=False,
                    duration_ms=int((now - started) * 1000),
                    error="no result (the run ended first)",
                )
            )
        self._pending.clear()
        return self.outcome

    def _feed_value(self, data: object, now: float) -> None:
        if isinstance(data, list):  # `--output-format json --verbose` prints one array of events
            for item in data:
                if isinstance(item, dict):
                    self._event(item, now)
        elif isinstance(data, dict):
            self._event(data, now)

    def _event(self, event: dict[str, Any], now: float) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            model = event.get("model")
            if isinstance(model, str):
                self.outcome.model = model
        elif kind == "assistant":
            for block in _content_blocks(event):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    arguments = block.get("input")
                    self._pending[block["id"]] = (
                        str(block.get("name") or "unknown"),
                        arguments if isinstance(arguments, dict) else {},
                        now,
                    )
        elif kind == "user":
            for block in _content_blocks(event):
                if block.get("type") == "tool_result":
                    self._tool_result(block, now)
        elif kind == "result" or (kind is None and ("result" in event or "session_id" in event)):
            self._result(event)

    def _tool_result(self, block: dict[str, Any], now: float) -> None:
        pending = self._pending.pop(str(block.get("tool_use_id")), None)
        if pending is None:
            log.debug("claude-code: tool_result for an unknown tool_use id")
            return
        name, arguments, started = pending
        text = _tool_result_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        self._record(
            ToolCall(
                name=name,
                arguments=arguments,
                ok=not is_error,
                result_preview=text[:PREVIEW_CHARS],
                duration_ms=int((now - started) * 1000),
                error=(text[:PREVIEW_CHARS] or "tool error") if is_error else "",
            )
        )

    def _record(self, call: ToolCall) -> None:
        if len(self.outcome.tool_calls) < MAX_TOOL_CALLS:
            self.outcome.tool_calls.append(call)

    def _result(self, event: dict[str, Any]) -> None:
        out = self.outcome
        out.got_result = True
        text = event.get("result")
        out.text = text[:MAX_RESULT_CHARS] if isinstance(text, str) else ""
        out.subtype = str(event.get("subtype") or "")
        out.is_error = bool(event.get("is_error"))
        session_id = event.get("session_id")
        if isinstance(session_id, str) and session_id:
            out.session_id = session_id
        usage = event.get("usage")
        if isinstance(usage, dict):
            # Cached prompt tokens are still prompt tokens; the CLI reports them apart.
            out.input_tokens = (
                _as_int(usage.get("input_tokens"))
                + _as_int(usage.get("cache_creation_input_tokens"))
                + _as_int(usage.get("cache_read_input_tokens"))
            )
            out.output_tokens = _as_int(usage.get("output_tokens"))
        cost = event.get("total_cost_usd", event.get("cost_usd"))
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            out.cost_usd = float(cost)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the child's whole process group (it leads one: start_new_session=True)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait (briefly) for a killed child so it leaves no zombie."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), EXIT_GRACE_SECS)


async def _drain_tail(stream: asyncio.StreamReader | None, tail: bytearray) -> None:
    """Read a stream to its end, keeping only its last bytes (for error messages)."""
    if stream is None:
        return
    while chunk := await stream.read(65536):
        tail += chunk
        del tail[:-STDERR_TAIL_BYTES]


async def _read_stdout(
    proc: asyncio.subprocess.Process, stream: asyncio.StreamReader, parser: _StreamParser
) -> None:
    """Feed stdout to the parser line by line as it arrives."""
    while True:
        try:
            if parser.outcome.got_result:
                line = await asyncio.wait_for(stream.readline(), AFTER_RESULT_GRACE_SECS)
            else:
                line = await stream.readline()
        except ValueError:  # a line over the limit: readline dropped it, the stream goes on
            log.warning("claude-code: skipped an output line over %d bytes", MAX_LINE_BYTES)
            continue
        except TimeoutError:
            # We have the answer but something in the group keeps stdout open.
            log.warning("claude-code: output still open after the result; killing the CLI")
            _kill_group(proc)
            return
        if not line:
            return
        parser.feed_line(line, time.monotonic())


async def _wait_exit(proc: asyncio.subprocess.Process) -> None:
    """Wait for the CLI to exit once its output is done."""
    try:
        await asyncio.wait_for(proc.wait(), EXIT_GRACE_SECS)
    except TimeoutError:
        _kill_group(proc)  # a leftover grandchild holds the pipes open
        await proc.wait()


def _mcp_lock(workspace: Path) -> asyncio.Lock:
    """The lock serializing MCP calls in this workspace (asyncio locks belong to one loop)."""
    locks = _MCP_LOCKS.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(workspace.resolve(), asyncio.Lock())


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically replace `path` with `data`, readable only by its owner (`mode`)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), mode)  # a leftover tmp file would keep its old mode
        handle.write(data)
    os.replace(tmp, path)


def _settings_with_servers(
    previous: bytes | None, servers: Sequence[McpServer], sandbox: Sandbox | None = None
) -> bytes:
    """The settings file for this call: the owner's settings (if any) plus our MCP servers,
    each started through the sandbox's launcher (inside the CLI's own, wider sandbox)."""
    settings: dict[str, Any] = {}
    if previous:
        try:
            loaded = json.loads(previous)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            settings = dict(loaded)
    existing = settings.get("mcpServers")
    entries: dict[str, Any] = dict(existing) if isinstance(existing, dict) else {}
    for server in servers:
        argv = [server.command, *server.args]
        env = dict(server.env)
        if sandbox is not None and sandbox.mode != "rwx":  # rwx: the CLI's limits are inherited
            paths = sandbox.server_paths(server.command, server.args)
            argv = sandbox.command(argv, extra_read=paths)
            env = sandbox.environment(env)
        entries[server.name] = {"command": argv[0], "args": argv[1:], "env": env}
    settings["mcpServers"] = entries
    return json.dumps(settings, indent=2).encode()


def _restore_settings(path: Path, previous: bytes | None, mode: int) -> None:
    """Put back the owner's file, or remove ours when there was none."""
    if previous is None:
        path.unlink(missing_ok=True)
    else:
        _write_private(path, previous, mode)


def _recover_crashed_call(claude_dir: Path) -> None:
    """Undo a settings file left behind by a call that died before its cleanup ran."""
    backup = claude_dir / BACKUP_NAME
    if not backup.exists():
        return
    try:
        saved = json.loads(backup.read_text(encoding="utf-8"))
        previous = saved["previous"]
        _restore_settings(
            claude_dir / SETTINGS_NAME,
            None if previous is None else str(previous).encode(),
            int(saved.get("mode", 0o600)),
        )
        log.warning("claude-code: restored %s after an interrupted call", SETTINGS_NAME)
    except (OSError, ValueError, KeyError, TypeError):
        log.exception("claude-code: could not recover %s from its backup", SETTINGS_NAME)
        return
    backup.unlink(missing_ok=True)


@contextlib.contextmanager
def _mcp_settings(
    workspace: Path, servers: Sequence[McpServer], sandbox: Sandbox | None = None
) -> Iterator[None]:
    """Write `.claude/settings.local.json` with the servers; restore what was there on exit."""
    claude_dir = workspace / ".claude"
    path = claude_dir / SETTINGS_NAME
    backup = claude_dir / BACKUP_NAME
    created_dir = not claude_dir.is_dir()
    previous: bytes | None = None
    mode = 0o600
    try:
        claude_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _recover_crashed_call(claude_dir)
        if path.is_symlink():
            raise ProviderError(f"{path} is a symlink; not overwriting it")
        if path.exists():
            previous = path.read_bytes()
            mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        raise ProviderError(f"cannot prepare the MCP settings: {exc}") from None
    try:
        # On disk too, so a crash (no finally) can still give the owner their file back.
        # The owner's own file is expected to be UTF-8 JSON; bytes that are not are replaced.
        record = {"previous": None if previous is None else previous.decode(errors="replace")}
        try:
            _write_private(backup, json.dumps({**record, "mode": mode}).encode())
            _write_private(path, _settings_with_servers(previous, servers, sandbox))
        except OSError as exc:
            raise ProviderError(f"cannot write the MCP settings: {exc}") from None
        yield
    finally:
        try:
            _restore_settings(path, previous, mode)
            backup.unlink(missing_ok=True)
            if created_dir:
                with contextlib.suppress(OSError):  # not empty: the CLI put things there
                    claude_dir.rmdir()
        except OSError:
            log.exception("claude-code: could not restore %s", path)


class ClaudeCodeProvider:
    """Delegates to the local `claude` CLI, which brings its own tools and authentication."""

    def __init__(
        self,
        config: ClaudeCodeConfig,
        workspace: Path,
        executable: str = "claude",
        output_format: OutputFormat = "stream-json",
        *,
        sandbox: Sandbox | None = None,
    ) -> None:
        self._config = config
        self._workspace = workspace
        self._executable = executable
        self._output_format: OutputFormat = output_format
        # The CLI and everything it starts run under the OS sandbox (its own folders added);
        # without one given, the default mode with the workspace's parent as $OMEGA_HOME.
        self._sandbox = sandbox or Sandbox(SandboxSection(), OmegaPaths(workspace.parent))

    @property
    def name(self) -> str:
        """Provider name as in config."""
        return "claude-code"

    def availability(self) -> tuple[bool, str]:
        """Whether the `claude` CLI is on PATH."""
        path = shutil.which(self._executable)
        if path is None:
            return False, "`claude` CLI not found on PATH"
        return True, f"{path} (model {self._config.model})"

    async def prepare(self) -> None:
        """Nothing to load: the CLI is a separate process."""
        return None

    async def complete(self, context: Context) -> Reply:
        """Run the CLI (resuming it while it stops on max turns) and return its answer."""
        executable = shutil.which(self._executable)
        if executable is None:
            raise ProviderError("`claude` CLI not found on PATH", kind="unavailable")
        started = time.perf_counter()
        # One deadline for the whole call, resumes included: the gateway waits about as long.
        deadline = asyncio.get_running_loop().time() + self._config.timeout_secs
        self._workspace.mkdir(parents=True, exist_ok=True)
        servers = _usable_servers(context.mcp_servers)
        if servers:
            async with _mcp_lock(self._workspace):
                with _mcp_settings(self._workspace, servers, self._sandbox):
                    reply = await self._complete(executable, context, servers, deadline)
        else:
            reply = await self._complete(executable, context, (), deadline)
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        log.info(
            "claude-code: answered in %d ms (%d tool calls)", elapsed_ms, len(reply.tool_calls)
        )
        return Reply(
            text=reply.text,
            provider=reply.provider,
            model=reply.model,
            usage=reply.usage,
            tool_calls=reply.tool_calls,
            session_id=reply.session_id,
            elapsed_ms=elapsed_ms,
        )

    async def _complete(
        self,
        executable: str,
        context: Context,
        servers: Sequence[McpServer],
        deadline: float,
    ) -> Reply:
        model = context.model or self._config.model
        tools = list(self._config.allowed_tools)
        tools += [f"mcp__{s.name}__*" for s in servers if f"mcp__{s.name}__*" not in tools]
        prompt = render_prompt(context)
        resume: str | None = None
        texts: list[str] = []
        calls: list[ToolCall] = []
        input_tokens = output_tokens = 0
        cost: float | None = None
        outcome = _RunOutcome()
        for attempt in range(self._config.max_resume_attempts + 1):
            argv = self._argv(executable, prompt, model, context.system_prompt, tools, resume)
            if servers:
                # The CLI also loads MCP servers given explicitly; the file has the same shape.
                argv += ["--mcp-config", str(self._workspace / ".claude" / SETTINGS_NAME)]
            if not context.use_tools:  # background calls: no tools at all, one turn
                argv[argv.index("--max-turns") + 1] = "1"
                argv += ["--tools", ""]
            log.info("claude-code: run %d (model %s)", attempt + 1, model)
            log.debug("claude-code prompt: %s", prompt)
            outcome = await self._run_once(argv, deadline, servers)
            if outcome.text.strip():
                texts.append(outcome.text.strip())
            calls += outcome.tool_calls[: MAX_TOOL_CALLS - len(calls)]
            input_tokens += outcome.input_tokens
            output_tokens += outcome.output_tokens
            if outcome.cost_usd is not None:
                cost = (cost or 0.0) + outcome.cost_usd
            if outcome.subtype != "error_max_turns" or not outcome.session_id:
                break
            if attempt == self._config.max_resume_attempts:
                log.warning("claude-code: still at max turns after %d resumes", attempt)
                break
            resume, prompt = outcome.session_id, CONTINUE_PROMPT
        text = "\n\n".join(texts)[:MAX_RESULT_CHARS]
        if not text and (outcome.is_error or outcome.subtype.startswith("error")):
            raise ProviderError(f"claude CLI error: {outcome.subtype or 'unknown'}")
        return Reply(
            text=text,
            provider=self.name,
            model=outcome.model or model,
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost),
            tool_calls=tuple(calls),
            session_id=outcome.session_id,
        )

    def _argv(
        self,
        executable: str,
        prompt: str,
        model: str,
        system_prompt: str,
        tools: Sequence[str],
        resume: str | None,
    ) -> list[str]:
        # The prompt is a positional argument: a leading dash would read as an option.
        safe_prompt = f" {prompt}" if prompt.startswith("-") else prompt
        argv = [executable, "-p", safe_prompt, "--output-format", self._output_format]
        if self._output_format == "stream-json":
            argv.append("--verbose")  # the CLI requires it for stream-json with -p
        argv += ["--model", model, "--max-turns", str(self._config.max_turns)]
        if system_prompt:
            argv += ["--append-system-prompt", system_prompt]
        if tools:
            argv += ["--allowedTools", ",".join(tools)]
        if resume:
            argv += ["--resume", resume]
        return argv

    async def _run_once(
        self, argv: list[str], deadline: float, servers: Sequence[McpServer] = ()
    ) -> _RunOutcome:
        env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}  # no nested sessions
        # The CLI's sandbox must also let the MCP servers it starts read their programs.
        paths = [p for s in servers for p in self._sandbox.server_paths(s.command, s.args)]
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._sandbox.command(argv, profile="claude", extra_read=paths),
                cwd=self._workspace,
                env=self._sandbox.environment(env, profile="claude"),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout kills it all
                limit=MAX_LINE_BYTES,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise ProviderError(f"cannot run the claude CLI: {exc}", kind="unavailable") from None
        except OSError as exc:  # e.g. E2BIG: a prompt too long for one argument
            raise ProviderError(f"cannot run the claude CLI: {exc}") from None
        assert proc.stdout is not None
        parser = _StreamParser()
        stderr_tail = bytearray()
        stderr_task = asyncio.create_task(_drain_tail(proc.stderr, stderr_tail))
        try:
            async with asyncio.timeout_at(deadline):
                await _read_stdout(proc, proc.stdout, parser)
                await _wait_exit(proc)
                await asyncio.wait({stderr_task}, timeout=1.0)
        except TimeoutError:
            _kill_group(proc)
            await _reap(proc)
            raise ProviderError(
                f"claude CLI timed out after {self._config.timeout_secs}s", kind="timeout"
            ) from None
        except BaseException:  # cancelled (or a bug): never leave the CLI running
            _kill_group(proc)
            await _reap(proc)
            raise
        finally:
            stderr_task.cancel()
        outcome = parser.finish(time.monotonic())
        if not outcome.got_result:
            err = stderr_tail.decode(errors="replace").strip()[-PREVIEW_CHARS:]
            if proc.returncode:
                raise ProviderError(f"claude CLI exited {proc.returncode}: {err}")
            raise ProviderError(f"claude CLI gave no result: {err}")
        return outcome


def _usable_servers(servers: Sequence[McpServer]) -> tuple[McpServer, ...]:
    """The servers whose names are safe in tool ids; the others are skipped with a warning."""
    usable = []
    for server in servers:
        if _SERVER_NAME.match(server.name):
            usable.append(server)
        else:
            log.warning("claude-code: skipping MCP server with unusable name %r", server.name)
    return tuple(usable)
