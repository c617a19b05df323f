"""Built-in tools for API providers: files and a shell confined to the workspace, memory
search over the current sender's past messages, and fetching a web page.

Failures raise `ToolError`; the registry's toolset hands the message to the model as the
tool's result, so a refused path or a failing command never ends the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import re
import signal
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from omega.config import SandboxSection
from omega.paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, OmegaPaths
from omega.sandbox import Sandbox
from omega.tools.fetch import fetch
from omega.tools.registry import ToolError, ToolRegistry, current_deps

if TYPE_CHECKING:
    from omega.memory.store import Store

MAX_READ_BYTES = 200_000
MAX_WRITE_BYTES = 2_000_000
MAX_LIST_ENTRIES = 500
MAX_SHELL_OUTPUT = 16_000
MAX_SHELL_TIMEOUT = 600
MAX_FETCH_BYTES = 100_000
FETCH_TIMEOUT_SECS = 15.0
MAX_RECALL_CHARS = 500

# What a command the model runs inherits from Omega's environment: an allow-list, so that
# credentials of any name (AWS_ACCESS_KEY_ID, DATABASE_URL, SSH_AUTH_SOCK, provider keys, the
# bot token, CLAUDECODE...) never reach it. TMPDIR (and, in `sandbox` mode, HOME) are then
# pointed at the sandbox's own folders by `Sandbox.environment`.
ALLOWED_ENV_VARS = frozenset(
    {
        "PATH",
        "HOME",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "TMPDIR",
        "USER",
        "LOGNAME",
        "SHELL",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
    }
)
ALLOWED_ENV_PREFIXES = ("LC_",)  # LC_ALL, LC_CTYPE, ...


def tool_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for commands the model runs: only the allow-listed variables of this
    one (locale, terminal, zone, user, shell, proxies, PATH, HOME, TMPDIR)."""
    env = os.environ if environ is None else environ
    return {
        key: value
        for key, value in env.items()
        if key in ALLOWED_ENV_VARS or key.startswith(ALLOWED_ENV_PREFIXES)
    }


def _truncated(text: str, shown: int, total: int, unit: str) -> str:
    return f"{text}\n[truncated: showing the first {shown} of {total} {unit}]"


class BuiltinTools:
    """The built-in tools, bound to one workspace (and, for memory search, one store)."""

    def __init__(
        self,
        workspace: Path,
        store: Store | None = None,
        *,
        sandbox: Sandbox | None = None,
        allow_private_urls: bool = False,
        fetch_timeout_secs: float = FETCH_TIMEOUT_SECS,
    ) -> None:
        self.workspace = workspace
        self.store = store
        # Every command runs under the OS sandbox; without one given, the default mode with
        # the workspace's parent as $OMEGA_HOME (the layout OmegaPaths gives).
        self.sandbox = sandbox or Sandbox(SandboxSection(), OmegaPaths(workspace.parent))
        self.allow_private_urls = allow_private_urls
        self.fetch_timeout_secs = fetch_timeout_secs

    # ---- the workspace ---------------------------------------------------------------------

    def current_workspace(self) -> Path:
        """The folder of the person being answered: their own under the workspace, or the
        workspace itself (the owner's). A run's folder outside the workspace is refused."""
        given = current_deps().workspace
        if not given:
            return self.workspace
        folder = Path(given)
        if not folder.resolve().is_relative_to(self.workspace.resolve()):
            raise ToolError("refused: this person's folder is outside the workspace")
        return folder

    def root(self) -> Path:
        """The person's workspace folder (created owner-only if missing), symlinks resolved."""
        folder = self.current_workspace()
        folder.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        return folder.resolve()

    def resolve(self, path: str) -> Path:
        """A model-given path as a real path inside the workspace; ToolError if it would leave."""
        raw = path.strip()
        if not raw or "\x00" in raw:
            raise ToolError("refused: give a non-empty path relative to the workspace")
        relative = PurePosixPath(raw)
        if relative.is_absolute() or raw.startswith("~"):
            raise ToolError(
                f"refused: {path!r} is an absolute path; use a path relative to the workspace"
            )
        if ".." in relative.parts:
            raise ToolError(f"refused: {path!r} contains '..'; paths must stay in the workspace")
        root = self.root()
        target = (root / relative).resolve()
        if not target.is_relative_to(root):
            raise ToolError(f"refused: {path!r} leads outside the workspace (through a symlink)")
        if target.is_file() and target.stat().st_nlink > 1:
            # A hard link may be a file outside the workspace ($OMEGA_HOME/config.toml).
            raise ToolError(f"refused: {path!r} is a hard link to a file that may be elsewhere")
        return target

    def _shown(self, target: Path) -> str:
        relative = target.relative_to(self.root()).as_posix()
        return relative or "."

    # ---- tools -----------------------------------------------------------------------------

    def read_file(self, path: str) -> str:
        """Read a text file in the workspace."""
        target = self.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path!r} is a folder; use list_files")
        if not target.is_file():  # missing, or a device or pipe that could block
            raise ToolError(f"no file {path!r} in the workspace")
        with target.open("rb") as handle:
            data = handle.read(MAX_READ_BYTES + 1)
            size = os.fstat(handle.fileno()).st_size
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_READ_BYTES:
            return _truncated(text, MAX_READ_BYTES, size, "bytes")
        return text

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a text file in the workspace."""
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise ToolError(f"refused: content is over {MAX_WRITE_BYTES} bytes")
        target = self.resolve(path)
        if target.is_dir():
            raise ToolError(f"{path!r} is a folder")
        target.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        # The path is resolved; O_NOFOLLOW refuses a symlink swapped in since.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, PRIVATE_FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)  # also for a file that existed
            handle.write(data)
        return f"wrote {len(data)} bytes to {self._shown(target)}"

    def list_files(self, path: str = ".") -> str:
        """List a folder in the workspace (folders end with /)."""
        target = self.resolve(path)
        if not target.is_dir():
            raise ToolError(f"no folder {path!r} in the workspace")
        entries = sorted(target.iterdir(), key=lambda p: p.name)
        lines: list[str] = []
        for entry in entries[:MAX_LIST_ENTRIES]:
            if entry.is_symlink():
                lines.append(f"{entry.name}@")
            elif entry.is_dir():
                lines.append(f"{entry.name}/")
            else:
                lines.append(f"{entry.name} ({entry.stat().st_size} bytes)")
        listing = "\n".join(lines) if lines else "(empty)"
        if len(entries) > MAX_LIST_ENTRIES:
            return _truncated(listing, MAX_LIST_ENTRIES, len(entries), "entries")
        return listing

    async def run_shell(self, command: str, timeout_secs: int = 30) -> str:
        """Run a shell command in the workspace; returns the exit code and output."""
        if not command.strip():
            raise ToolError("refused: empty command")
        timeout = min(max(timeout_secs, 1), MAX_SHELL_TIMEOUT)
        root = self.root()
        sandbox = self.sandbox.for_workspace(self.current_workspace())
        process = await asyncio.create_subprocess_exec(
            *sandbox.command(["/bin/sh", "-c", command]),
            cwd=root,
            env=sandbox.environment(tool_environment()),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a timeout kills every child
        )
        buffer = bytearray()
        total = 0

        async def drain() -> None:
            nonlocal total
            assert process.stdout is not None
            # Keep reading past the cap so a chatty command never blocks on a full pipe.
            while chunk := await process.stdout.read(65536):
                total += len(chunk)
                if len(buffer) < MAX_SHELL_OUTPUT:
                    buffer.extend(chunk[: MAX_SHELL_OUTPUT - len(buffer)])
            await process.wait()

        try:
            await asyncio.wait_for(drain(), timeout)
        except TimeoutError:
            _kill_group(process)
            output = _output(buffer, total)
            raise ToolError(
                f"timed out after {timeout}s; the command was killed. Output so far:\n{output}"
            ) from None
        finally:
            if process.returncode is None:  # cancelled or timed out: leave nothing running
                _kill_group(process)
                await process.wait()
        return f"exit code {process.returncode}\n{_output(buffer, total)}"

    async def search_memory(self, query: str, limit: int = 5) -> str:
        """Search this person's past messages (full text)."""
        sender = current_deps().sender_id
        if self.store is None or not sender:
            raise ToolError("memory search is not available in this conversation")
        store = self.store
        found = await store.call(store.search_messages, sender, query, min(max(limit, 1), 20))
        if not found:
            return "no matching messages"
        return "\n".join(
            f"[{r.created_at[:10]}] {r.role}: {r.content[:MAX_RECALL_CHARS]}" for r in found
        )

    async def fetch_url(self, url: str) -> str:
        """Fetch an http(s) URL on the public internet; returns the status and the text."""
        import httpx

        try:
            page = await fetch(
                url,
                allow_private=self.allow_private_urls,
                timeout_secs=self.fetch_timeout_secs,
                max_bytes=MAX_FETCH_BYTES,
            )
        except TimeoutError:
            raise ToolError(
                f"timed out after {self.fetch_timeout_secs:g}s fetching {url}"
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(f"could not fetch {url}: {type(exc).__name__}: {exc}") from None
        try:
            text = page.body.decode(page.encoding, errors="replace")
        except LookupError:  # an encoding name Python does not know
            text = page.body.decode("utf-8", errors="replace")
        if "html" in page.content_type.lower():
            text = html_to_text(text)
        if page.truncated:
            text += f"\n[truncated: only the first {MAX_FETCH_BYTES} bytes were read]"
        return f"HTTP {page.status} {page.content_type}\n\n{text}"


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)


def _output(buffer: bytearray, total: int) -> str:
    text = bytes(buffer).decode("utf-8", errors="replace")
    if total > len(buffer):
        return _truncated(text, len(buffer), total, "bytes of output")
    return text


_DROP_RE = re.compile(r"<(script|style|noscript|template|svg)\b.*?</\1\s*>", re.S | re.I)
_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_BREAK_RE = re.compile(r"<(?:br|/p|/div|/li|/tr|/h[1-6]|/title|hr)\b[^>]*>", re.I)
_TAG_RE = re.compile(r"<[^>]+>")


def html_to_text(page: str) -> str:
    """HTML reduced crudely to readable text: scripts and tags dropped, entities decoded."""
    text = _COMMENT_RE.sub(" ", _DROP_RE.sub(" ", page))
    text = _TAG_RE.sub(" ", _BREAK_RE.sub("\n", text))
    lines = (" ".join(line.split()) for line in html.unescape(text).splitlines())
    return "\n".join(line for line in lines if line)


def builtin_registry(
    workspace: Path,
    store: Store | None = None,
    *,
    sandbox: Sandbox | None = None,
    allow_private_urls: bool = False,
) -> ToolRegistry:
    """The built-in tools in a registry (memory search only when there is a store)."""
    tools = BuiltinTools(workspace, store, sandbox=sandbox, allow_private_urls=allow_private_urls)
    registry = ToolRegistry()
    registry.add(tools.read_file)
    registry.add(tools.write_file)
    registry.add(tools.list_files)
    registry.add(tools.run_shell)
    if store is not None:
        registry.add(tools.search_memory)
    registry.add(tools.fetch_url)
    return registry
