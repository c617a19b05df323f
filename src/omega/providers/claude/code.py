"""The Claude Code CLI provider: runs `claude -p` in the workspace and parses its JSON output.

Every run of the CLI (answers, background calls, the version and login check) goes through the
OS sandbox with a private, per-call CLAUDE_CONFIG_DIR and its login through a pipe
(`claude.home`); the prompt goes on stdin, the system prompt in a file.

stream-json output (the default) also yields the tool calls Claude made; plain json output
gives only the final result. Runs stopped at max turns are resumed automatically. What each call
may do (tools, permission mode, environment) is decided in `claude.cli`; the output is parsed in
`claude.stream`; a skill's MCP servers are handed over by `claude.mcp`.

One module because a call is one sequence - argv, environment and login, the sandboxed process
and its pipes, the resume after max turns, the reply - and the process helpers here (kill, reap,
drain, read, wait) are only its steps, tuned by the limits at the top of this file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from omega.config.providers import ClaudeCodeConfig
from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.base import ProviderError, salvage_tool_calls, salvage_usage
from omega.providers.claude.cli import (
    BACKGROUND_SYSTEM_PROMPT,
    CHECK_TIMEOUT_SECS,
    INSTALL_HINT,
    LOGIN_HINT,
    ToolMode,
    background_args,
    check_cli,
    cli_environment,
    credential,
    exit_error,
    login_failed,
    tool_mode,
)
from omega.providers.claude.home import login_pipe, private_home, write_system_prompt
from omega.providers.claude.mcp import (
    SETTINGS_NAME,
    mcp_lock,
    mcp_settings,
    report_servers,
    usable_servers,
)
from omega.providers.claude.stream import (
    MAX_TOOL_CALLS,
    PREVIEW_CHARS,
    RunOutcome,
    StreamParser,
)
from omega.sandbox import Sandbox, stop_launched
from omega.sandbox.folders import UnsafeFolderError, confined_folder
from omega.tools.home_guard import guarded
from omega.types import Context, McpServer, Reply, ToolCall, Usage

log = logging.getLogger(__name__)
# How long the CLI waits for MCP servers before its first request: a Python server in a
# virtualenv, or npx, can take longer than the CLI's 5 s on a busy machine.
MCP_CONNECT_MS = 30_000

OutputFormat = Literal["stream-json", "json"]

CONTINUE_PROMPT = "Continue where you left off."
MAX_RESULT_CHARS = 1_000_000  # a runaway answer must not eat memory
MAX_LINE_BYTES = 8 * 1024 * 1024  # one stream-json event; a tool result can carry a whole file
STDERR_TAIL_BYTES = 4096
AFTER_RESULT_GRACE_SECS = 30.0  # the CLI exits right after its result; this bounds stragglers
EXIT_GRACE_SECS = 5.0
# Why a tool call left without a result when the run was stopped is a failed call.
TIMED_OUT = "timed out: the run was stopped"
STOPPED = "interrupted: the run was stopped"

__all__ = ["ClaudeCodeProvider", "OutputFormat", "render_prompt"]


def render_prompt(context: Context) -> str:
    """Flatten the history into the single prompt `claude -p` takes."""
    lines = []
    for turn in context.messages[:-1]:
        speaker = "User" if turn.role == "user" else "Assistant"
        lines.append(f"{speaker}: {turn.content}")
    history = ("Conversation so far:\n" + "\n".join(lines) + "\n\n") if lines else ""
    return f"{history}{context.prompt}"


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """End the CLI and all it started (its MCP servers and what they left the group with)."""
    await stop_launched(proc, EXIT_GRACE_SECS)


async def _drain_tail(stream: asyncio.StreamReader | None, tail: bytearray) -> None:
    """Read a stream to its end, keeping only its last bytes (for error messages)."""
    if stream is None:
        return
    while chunk := await stream.read(65536):
        tail += chunk
        del tail[:-STDERR_TAIL_BYTES]


async def _read_stdout(
    proc: asyncio.subprocess.Process, stream: asyncio.StreamReader, parser: StreamParser
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
            await _stop(proc)
            return
        if not line:
            return
        parser.feed_line(line, time.monotonic())


async def _send_prompt(stdin: asyncio.StreamWriter | None, prompt: str) -> None:
    """Write the prompt to the CLI's stdin and close it (`-p` reads the prompt there)."""
    if stdin is None:
        return
    with contextlib.suppress(ConnectionError, BrokenPipeError):
        stdin.write(prompt.encode())
        await stdin.drain()
    with contextlib.suppress(ConnectionError, BrokenPipeError):
        stdin.close()
        await stdin.wait_closed()


async def _wait_exit(proc: asyncio.subprocess.Process) -> None:
    """Wait for the CLI to exit once its output is done."""
    try:
        await asyncio.wait_for(proc.wait(), EXIT_GRACE_SECS)
    except TimeoutError:
        await _stop(proc)  # a leftover grandchild holds the pipes open
        await proc.wait()


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

    def tool_mode(self, context: Context | None = None) -> ToolMode:
        """The tools and permission mode an answering call gets here (for this person)."""
        if context is None:
            return tool_mode(self._config, self._sandbox.status)
        return tool_mode(
            self._config,
            self._sandbox.status,
            access=context.tool_access,
            allowed=context.allowed_tools,
        )

    def sees_images(self) -> bool:
        """The CLI's Read tool shows the model an image file named in the prompt."""
        return True

    def tool_names(self, context: Context | None = None) -> list[str]:
        """The CLI's own tools an answering call gets here (for this person, when given)."""
        return list(self.tool_mode(context).tools)

    def availability(self) -> tuple[bool, str]:
        """Whether the `claude` CLI is on PATH, recent enough and logged in; when not, the
        one sentence saying what to do."""
        path = shutil.which(self._executable)
        if path is None:
            return False, INSTALL_HINT
        check = check_cli(path, self._check_run)
        if not check.ok:
            return False, check.hint
        return True, f"{path} (version {check.version}, model {self._config.model})"

    def _check_run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
        """Run the CLI with `args` (version, login status) as every call runs it: confined,
        in a private home, with the login through a pipe; None when it cannot be run."""
        executable = shutil.which(self._executable)
        if executable is None:
            return None
        sandbox = self._sandbox
        login = credential(self._config, os.environ)
        with private_home(sandbox.tmpdir) as home, login_pipe(login) as (fd_env, fds):
            env = {**self._environment(None, home), **fd_env}
            try:
                return subprocess.run(
                    sandbox.command([executable, *args], profile="claude"),
                    cwd=sandbox.workspace,
                    env=sandbox.environment(env, profile="claude"),
                    capture_output=True,
                    text=True,
                    timeout=CHECK_TIMEOUT_SECS,
                    stdin=subprocess.DEVNULL,
                    pass_fds=fds,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError):
                return None

    async def prepare(self) -> None:
        """Nothing to load: the CLI is a separate process."""
        return None

    async def complete(self, context: Context) -> Reply:
        """Run the CLI (resuming it while it stops on max turns) and return its answer."""
        executable = shutil.which(self._executable)
        if executable is None:
            raise ProviderError(
                "`claude` CLI not found on PATH", kind="unavailable", hint=INSTALL_HINT
            )
        started = time.perf_counter()
        # One deadline for the whole call, resumes included: the gateway waits about as long.
        deadline = asyncio.get_running_loop().time() + self._config.timeout_secs
        folder = self._folder(context)
        folder.mkdir(parents=True, exist_ok=True)
        # Background calls have no tools, so no MCP servers either.
        servers = usable_servers(context.mcp_servers) if context.use_tools else ()
        sandbox = self._sandbox.for_workspace(folder)
        # The CLI's own state for this call only, in the person's private temp dir; once it
        # ended, the modes of Omega's files are checked where no namespace hid them.
        async with guarded(sandbox, None, "the claude CLI"):
            with private_home(sandbox.tmpdir) as home:
                if servers:
                    async with mcp_lock(folder):
                        with mcp_settings(folder, servers, sandbox):
                            reply = await self._complete(
                                executable, context, servers, deadline, folder, home
                            )
                else:
                    reply = await self._complete(executable, context, (), deadline, folder, home)
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

    def _folder(self, context: Context) -> Path:
        """Where this call runs: the person's own folder inside the workspace (a real
        directory reached without a symlink, else refused), else the workspace (the owner's)."""
        if context.workspace:
            try:
                return confined_folder(self._workspace, Path(context.workspace))
            except UnsafeFolderError as exc:
                raise ProviderError(f"claude-code: {exc}") from None
        return self._workspace

    async def _complete(
        self,
        executable: str,
        context: Context,
        servers: Sequence[McpServer],
        deadline: float,
        folder: Path,
        home: Path,
    ) -> Reply:
        model = context.model or self._config.model
        mode = self.tool_mode(context) if context.use_tools else None
        prompt = render_prompt(context)
        system = context.system_prompt.strip()
        if mode is None:
            system = system or BACKGROUND_SYSTEM_PROMPT
        system_file = write_system_prompt(home, system) if system else None
        resume: str | None = None
        texts: list[str] = []
        calls: list[ToolCall] = []
        input_tokens = output_tokens = cached_tokens = 0
        cost: float | None = None

        def billed() -> Usage:  # what the runs so far were billed for
            return Usage(input_tokens, output_tokens, cost, cached_tokens)

        outcome = RunOutcome()
        for attempt in range(self._config.max_resume_attempts + 1):
            argv = self._argv(executable, model, mode, servers, resume, folder, system_file)
            log.info(
                "claude-code: run %d (model %s, tools %s)",
                attempt + 1,
                model,
                mode.name if mode else "none",
            )
            log.debug("claude-code prompt: %s", prompt)
            try:
                outcome = await self._run_once(argv, prompt, deadline, servers, mode, folder, home)
            except BaseException:  # the earlier runs' tool calls and usage are recorded
                salvage_tool_calls(calls)
                salvage_usage(self.name, model, billed())
                raise
            input_tokens += outcome.input_tokens
            output_tokens += outcome.output_tokens
            cached_tokens += outcome.cached_tokens
            if outcome.cost_usd is not None:
                cost = (cost or 0.0) + outcome.cost_usd
            if outcome.is_error and outcome.subtype != "error_max_turns":
                # The CLI's error text ("Not logged in · Please run /login", "API Error: ...")
                # is never an answer.
                salvage_tool_calls([*calls, *outcome.tool_calls])
                salvage_usage(self.name, model, billed())
                raise _result_error(outcome)
            if outcome.text.strip():
                texts.append(outcome.text.strip())
            calls += outcome.tool_calls[: MAX_TOOL_CALLS - len(calls)]
            if outcome.subtype != "error_max_turns" or not outcome.session_id:
                break
            if attempt == self._config.max_resume_attempts:
                log.warning("claude-code: still at max turns after %d resumes", attempt)
                break
            resume, prompt = outcome.session_id, CONTINUE_PROMPT
        text = "\n\n".join(texts)[:MAX_RESULT_CHARS]
        if not text and outcome.subtype.startswith("error"):
            salvage_tool_calls(calls)
            salvage_usage(self.name, model, billed())
            raise ProviderError(f"claude CLI error: {outcome.subtype}")
        return Reply(
            text=text,
            provider=self.name,
            model=outcome.model or model,
            usage=Usage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=cost,
                cached_tokens=cached_tokens,
            ),
            tool_calls=tuple(calls),
            session_id=outcome.session_id,
        )

    def _argv(
        self,
        executable: str,
        model: str,
        mode: ToolMode | None,
        servers: Sequence[McpServer],
        resume: str | None,
        folder: Path,
        system_file: Path | None,
    ) -> list[str]:
        # No text of the person's nor Omega's instructions here: the prompt goes on stdin
        # (`-p` without one reads it there), the system prompt in a file.
        argv = [executable, "-p", "--output-format", self._output_format]
        if self._output_format == "stream-json":
            argv.append("--verbose")  # the CLI requires it for stream-json with -p
        # Only the private home's settings: none the model wrote into the folder's .claude/.
        argv += ["--model", model, "--setting-sources", "user"]
        if mode is None:  # a background call: lean, one turn, nothing kept
            assert system_file is not None
            argv += background_args(system_file)
        else:
            argv += ["--max-turns", str(self._config.max_turns)]
            if system_file is not None:
                argv += ["--append-system-prompt-file", str(system_file)]
            argv += mode.args([f"mcp__{s.name}__*" for s in servers])
            if servers:
                # The CLI also loads MCP servers given explicitly; the file has the same shape.
                argv += ["--mcp-config", str(folder / ".claude" / SETTINGS_NAME)]
        if resume:
            argv += ["--resume", resume]
        return argv

    def _environment(self, mode: ToolMode | None, home: Path) -> dict[str, str]:
        """The CLI's environment: the allow-list, its private home as CLAUDE_CONFIG_DIR, and
        IS_SANDBOX=1 only where the OS sandbox encloses it and the CLI (as root) would
        otherwise refuse bypassPermissions."""
        env = cli_environment(os.environ)
        env["CLAUDE_CONFIG_DIR"] = str(home)
        if mode is not None and mode.is_sandbox:
            env["IS_SANDBOX"] = "1"
        return env

    async def _run_once(
        self,
        argv: list[str],
        prompt: str,
        deadline: float,
        servers: Sequence[McpServer],
        mode: ToolMode | None,
        folder: Path,
        home: Path,
    ) -> RunOutcome:
        env = self._environment(mode, home)
        if servers:  # wait for a server to connect before the first request (default 5 s)
            env.setdefault("MCP_CONNECT_TIMEOUT_MS", str(MCP_CONNECT_MS))
            env.setdefault("MCP_CONNECTION_NONBLOCKING", "false")
        sandbox = self._sandbox.for_workspace(folder)  # one person's folder is all they write
        # The CLI's sandbox must also let the MCP servers it starts read their programs.
        paths = [p for s in servers for p in sandbox.server_paths(s.command, s.args)]
        with login_pipe(credential(self._config, os.environ)) as (fd_env, fds):
            try:
                proc = await asyncio.create_subprocess_exec(
                    *sandbox.command(argv, profile="claude", extra_read=paths),
                    cwd=folder,
                    env=sandbox.environment({**env, **fd_env}, profile="claude"),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,  # its own process group, so a timeout kills it all
                    limit=MAX_LINE_BYTES,
                    pass_fds=fds,
                )
            except (FileNotFoundError, PermissionError) as exc:
                raise ProviderError(
                    f"cannot run the claude CLI: {exc}", kind="unavailable", hint=INSTALL_HINT
                ) from None
            except OSError as exc:
                raise ProviderError(f"cannot run the claude CLI: {exc}") from None
        assert proc.stdout is not None
        parser = StreamParser()
        stderr_tail = bytearray()
        stderr_task = asyncio.create_task(_drain_tail(proc.stderr, stderr_tail))
        stdin_task = asyncio.create_task(_send_prompt(proc.stdin, prompt))
        try:
            async with asyncio.timeout_at(deadline):
                await _read_stdout(proc, proc.stdout, parser)
                await _wait_exit(proc)
                await asyncio.wait({stderr_task}, timeout=1.0)
        except TimeoutError:
            await _stop(proc)
            # What its tools did is recorded; the one it was waiting on timed out.
            salvage_tool_calls(parser.finish(time.monotonic(), TIMED_OUT).tool_calls)
            raise ProviderError(
                f"claude CLI timed out after {self._config.timeout_secs}s", kind="timeout"
            ) from None
        except BaseException:  # cancelled (or a bug): never leave the CLI running
            await _stop(proc)
            salvage_tool_calls(parser.finish(time.monotonic(), STOPPED).tool_calls)
            raise
        finally:
            stderr_task.cancel()
            stdin_task.cancel()
        outcome = parser.finish(time.monotonic())
        if servers:  # a server that did not start is told to the owner, with the reason
            await report_servers(outcome.mcp_servers, servers, sandbox, folder, env)
        if not outcome.got_result:
            salvage_tool_calls(outcome.tool_calls)
            err = stderr_tail.decode(errors="replace")
            raise exit_error(proc.returncode, err, outcome.version)
        return outcome


def _result_error(outcome: RunOutcome) -> ProviderError:
    """The error for a result marked is_error (its text is the CLI's message, not an answer)."""
    text = outcome.text.strip()[:PREVIEW_CHARS]
    if login_failed(text, outcome.error):
        return ProviderError(f"claude CLI is not logged in: {text}", "unavailable", hint=LOGIN_HINT)
    detail = text or outcome.error or outcome.subtype or "unknown"
    return ProviderError(f"claude CLI error: {outcome.subtype or 'error'}: {detail}")
