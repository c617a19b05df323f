"""Built-in tools for API providers: files and a shell confined to the workspace, memory
search over the current sender's past messages, and fetching a web page.

Failures raise `ToolError`; the registry's toolset hands the message to the model as the
tool's result, so a refused path or a failing command never ends the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from omega.config.safety import SandboxSection
from omega.memory.provenance import found_origin
from omega.paths import PRIVATE_DIR_MODE, OmegaPaths
from omega.sandbox import Sandbox, stop_launched
from omega.sandbox.folders import UnsafeFolderError, confined_folder
from omega.tools import safe_fs
from omega.tools.context import FailedOutput, ToolError, current_deps
from omega.tools.fetch import fetch
from omega.tools.home_guard import guarded
from omega.tools.html_text import html_to_text
from omega.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from omega.memory.store import Store

MAX_READ_BYTES = 200_000
MAX_WRITE_BYTES = 2_000_000
MAX_LIST_ENTRIES = 500
MAX_SHELL_OUTPUT = 16_000
MAX_SHELL_TIMEOUT = 600
# How long a command's launcher gets to kill what the command started before its group is.
STOP_GRACE_SECS = 2.0
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
        workspace itself (the owner's). A person's folder that is not a real directory there,
        reached without a symlink (`people/x -> ..` would be the owner's), is refused."""
        given = current_deps().workspace
        if not given:
            return self.workspace
        try:
            return confined_folder(self.workspace, Path(given))
        except UnsafeFolderError as exc:
            raise ToolError(f"refused: {exc}") from None

    def root(self) -> Path:
        """The person's workspace folder (created owner-only if missing), symlinks resolved;
        the shell's working folder. The file tools open beneath `_root_fd` instead."""
        folder = self.current_workspace()
        folder.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        return folder.resolve()

    def _folder_parts(self) -> tuple[str, ...]:
        """The person's folder as components beneath the workspace."""
        folder = self.current_workspace()
        base = self.workspace
        if not folder.is_relative_to(base):  # the same folder spelt through a symlink
            folder, base = folder.resolve(), base.resolve()
        return safe_fs.parts_of(folder.relative_to(base).as_posix() or ".")

    @contextlib.contextmanager
    def _root_fd(self) -> Iterator[int]:
        """A descriptor of the person's folder, reached from the workspace's without a
        symlink (and created 0700 if missing); every file tool opens beneath it."""
        self.workspace.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        base = safe_fs.open_root(self.workspace)
        try:
            try:
                fd = safe_fs.open_folder(base, self._folder_parts(), create=True)
            except (OSError, ValueError):
                raise ToolError("refused: this person's folder is not a plain folder") from None
        finally:
            os.close(base)
        try:
            yield fd
        finally:
            os.close(fd)

    def parts(self, path: str) -> tuple[str, ...]:
        """A model-given path as components beneath the person's folder; ToolError for an
        absolute path, a '..' or an empty one. Nothing is resolved here: opens do it."""
        try:
            return safe_fs.parts_of(path)
        except ValueError as exc:
            raise ToolError(f"refused: {path!r}: {exc}") from None

    # ---- tools -----------------------------------------------------------------------------

    def read_file(self, path: str) -> str:
        """Read a text file in the workspace."""
        parts = self.parts(path)
        with self._root_fd() as root:
            try:
                fd = safe_fs.open_for_reading(root, parts)
            except IsADirectoryError:
                raise ToolError(f"{path!r} is a folder; use list_files") from None
            except (FileNotFoundError, NotADirectoryError):
                raise ToolError(f"no file {path!r} in the workspace") from None
            except OSError as exc:
                raise _refused(path, exc) from None
        with os.fdopen(fd, "rb") as handle:
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
        parts = self.parts(path)
        with self._root_fd() as root:
            try:
                # Folders made from descriptors; the file opened without O_TRUNC, checked
                # (regular, one link) on its descriptor, only then emptied and made 0600.
                fd = safe_fs.open_for_writing(root, parts)
            except IsADirectoryError:
                raise ToolError(f"{path!r} is a folder") from None
            except NotADirectoryError:
                raise ToolError(f"refused: a part of {path!r} is a file, not a folder") from None
            except OSError as exc:
                raise _refused(path, exc) from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return f"wrote {len(data)} bytes to {'/'.join(parts)}"

    def list_files(self, path: str = ".") -> str:
        """List a folder in the workspace (folders end with /)."""
        parts = self.parts(path) if path.strip() not in ("", ".") else ()
        with self._root_fd() as root:
            try:
                fd = safe_fs.open_folder(root, parts)
            except (FileNotFoundError, NotADirectoryError):
                raise ToolError(f"no folder {path!r} in the workspace") from None
            except OSError as exc:
                raise _refused(path, exc) from None
        try:
            with os.scandir(fd) as found:  # entries are looked at from this descriptor
                entries = sorted(found, key=lambda entry: entry.name)
            lines: list[str] = []
            for entry in entries[:MAX_LIST_ENTRIES]:
                if entry.is_symlink():
                    lines.append(f"{entry.name}@")
                elif entry.is_dir(follow_symlinks=False):
                    lines.append(f"{entry.name}/")
                else:
                    size = entry.stat(follow_symlinks=False).st_size
                    lines.append(f"{entry.name} ({size} bytes)")
        except OSError as exc:
            raise ToolError(f"could not list {path!r}: {exc.strerror}") from None
        finally:
            os.close(fd)
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
        deps = current_deps()
        who = (deps.channel, deps.sender_id)
        # Without bubblewrap, the modes of Omega's own files are checked after the command.
        async with guarded(sandbox, self.store, f"run_shell: {command}", deps.call_id, who):
            return await self._shell(sandbox, root, command, limit=timeout)

    async def _shell(self, sandbox: Sandbox, root: Path, command: str, *, limit: int) -> str:
        """Run `command` confined by `sandbox` in `root` for at most `limit` seconds."""
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
            await asyncio.wait_for(drain(), limit)
        except TimeoutError:
            await stop_launched(process, STOP_GRACE_SECS)
            output = _output(buffer, total)
            raise ToolError(
                f"timed out after {limit}s; the command was killed. Output so far:\n{output}"
            ) from None
        finally:
            if process.returncode is None:  # cancelled or timed out: leave nothing running
                await stop_launched(process, STOP_GRACE_SECS)
        text = f"exit code {process.returncode}\n{_output(buffer, total)}"
        # A command that fails is a failed tool call in the records (the critic and
        # introspection learn from them); the model reads the same text either way.
        return FailedOutput(text) if process.returncode else text

    async def search_memory(self, query: str, limit: int = 5) -> str:
        """Search this person's past messages (full text)."""
        deps = current_deps()
        sender = deps.sender_id
        if self.store is None or not sender:
            raise ToolError("memory search is not available in this conversation")
        store = self.store
        # In a group room only that room's messages: nothing said in private is found there.
        within = (deps.channel, deps.thread) if deps.group else None
        found = await store.call(
            store.search_messages, sender, query, min(max(limit, 1), 20), within=within
        )
        if not found:
            return "no matching messages"
        ids = [r.conversation_id for r in found]  # a room's or a page's words: said first
        origin = await store.call(found_origin, store, ids, deps.group)
        return origin + "\n".join(
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


def _refused(path: str, exc: OSError) -> ToolError:
    """A refused open as the model's tool error: why, never the real path."""
    if isinstance(exc, safe_fs.UnsafePathError) and exc.errno in (errno.ELOOP, errno.EXDEV):
        why = "goes through a symlink, which could lead outside the workspace"
    elif isinstance(exc, safe_fs.UnsafePathError) and exc.errno == errno.EMLINK:
        why = "is a hard link to a file that may be elsewhere"
    elif isinstance(exc, safe_fs.UnsafePathError):
        why = "is not a regular file (a pipe, device or socket)"
    else:
        why = f"could not be opened: {exc.strerror or type(exc).__name__}"
    return ToolError(f"refused: {path!r} {why}")


def _output(buffer: bytearray, total: int) -> str:
    text = bytes(buffer).decode("utf-8", errors="replace")
    if total > len(buffer):
        return _truncated(text, len(buffer), total, "bytes of output")
    return text


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
