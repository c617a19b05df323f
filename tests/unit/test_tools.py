"""Built-in tools: workspace confinement, the shell, fetching, memory search; the registry."""

from __future__ import annotations

import asyncio
import gzip
import os
import stat
import sys
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from omega.memory import Store
from omega.providers import ProviderError, api
from omega.providers.api import ApiProvider, ApiSettings
from omega.tools import BuiltinTools, ToolDeps, ToolError, ToolRegistry, builtin_registry, safe_fs
from omega.tools.builtin import (
    MAX_FETCH_BYTES,
    MAX_READ_BYTES,
    MAX_SHELL_OUTPUT,
    tool_environment,
)
from omega.tools.context import reset_current_deps, set_current_deps
from omega.tools.html_text import html_to_text
from omega.tools.mcp import enter_available, mcp_toolsets, tool_prefix
from omega.types import ChatMessage, Context, McpServer
from tests.fakes.openai_server import FakeOpenAI, Step

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "workspace"


@pytest.fixture
def tools(workspace: Path) -> BuiltinTools:
    return BuiltinTools(workspace)


@pytest.fixture
def local_tools(workspace: Path) -> BuiltinTools:
    """Tools allowed to fetch the test's own server on 127.0.0.1."""
    return BuiltinTools(workspace, allow_private_urls=True)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---- files -------------------------------------------------------------------------------


@pytest.mark.no_store
def test_write_read_and_list_inside_the_workspace(tools: BuiltinTools, workspace: Path) -> None:
    assert tools.write_file("notes/todo.txt", "buy milk") == "wrote 8 bytes to notes/todo.txt"
    assert (workspace / "notes" / "todo.txt").read_text() == "buy milk"
    assert mode(workspace / "notes" / "todo.txt") == 0o600
    assert tools.read_file("notes/todo.txt") == "buy milk"
    assert tools.read_file("./notes//todo.txt") == "buy milk"
    assert tools.list_files() == "notes/"
    assert tools.list_files("notes") == "todo.txt (8 bytes)"


@pytest.mark.no_store
def test_overwriting_a_file_makes_it_private(tools: BuiltinTools, workspace: Path) -> None:
    workspace.mkdir()
    existing = workspace / "shared.txt"
    existing.write_text("old")
    existing.chmod(0o644)
    tools.write_file("shared.txt", "new")
    assert existing.read_text() == "new"
    assert mode(existing) == 0o600


@pytest.mark.no_store
@pytest.mark.parametrize("path", ["../secret.txt", "a/../../secret.txt", "notes/../.."])
def test_dotdot_is_refused(tools: BuiltinTools, tmp_path: Path, path: str) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    attempts: list[Callable[[], str]] = [
        lambda: tools.read_file(path),
        lambda: tools.write_file(path, "x"),
        lambda: tools.list_files(path),
    ]
    for attempt in attempts:
        with pytest.raises(ToolError, match=r"refused: .*'\.\.'"):
            attempt()
    assert (tmp_path / "secret.txt").read_text() == "top secret"


@pytest.mark.no_store
@pytest.mark.parametrize("path", ["/etc/passwd", "~/.ssh/id_rsa", "/tmp/x.txt"])
def test_absolute_paths_are_refused(tools: BuiltinTools, path: str) -> None:
    with pytest.raises(ToolError, match="absolute path"):
        tools.read_file(path)
    with pytest.raises(ToolError, match="absolute path"):
        tools.write_file(path, "x")


@pytest.mark.no_store
def test_symlinks_out_of_the_workspace_are_refused(
    tools: BuiltinTools, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    workspace.mkdir()
    (workspace / "door").symlink_to(outside)
    (workspace / "peek.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.read_file("door/secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.read_file("peek.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.write_file("door/planted.txt", "x")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.write_file("peek.txt", "overwritten")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.list_files("door")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "top secret"
    # No symlink is followed, not even one that stays inside (it could be swapped for one
    # that does not between a check and the open, issue 24); listing shows it, unfollowed.
    (workspace / "real.txt").write_text("inside")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    with pytest.raises(ToolError, match="goes through a symlink"):
        tools.read_file("alias.txt")
    assert "door@" in tools.list_files().splitlines()
    assert "alias.txt@" in tools.list_files().splitlines()


@pytest.mark.no_store
def test_hard_links_and_special_files_are_refused(
    tools: BuiltinTools, workspace: Path, tmp_path: Path
) -> None:
    """Checked with fstat on the opened descriptor: a hard link to a file elsewhere is neither
    read nor emptied, and a pipe never blocks a read."""
    secret = tmp_path / "config.toml"
    secret.write_text("top secret")
    workspace.mkdir()
    os.link(secret, workspace / "hard.txt")
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match="hard link"):
        tools.read_file("hard.txt")
    with pytest.raises(ToolError, match="hard link"):
        tools.write_file("hard.txt", "overwritten")
    assert secret.read_text() == "top secret"
    started = time.monotonic()
    with pytest.raises(ToolError, match="not a regular file"):
        tools.read_file("pipe")
    assert time.monotonic() - started < 5


@pytest.mark.no_store
def test_the_file_tools_work_on_the_walk_without_openat2(
    tools: BuiltinTools, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel has no openat2, every folder is opened from its parent's descriptor
    with O_NOFOLLOW: the same answers, the same refusals."""
    monkeypatch.setattr(safe_fs, "openat2_available", lambda: False)
    assert tools.write_file("a/b.txt", "walked") == "wrote 6 bytes to a/b.txt"
    assert tools.read_file("a/b.txt") == "walked"
    assert tools.list_files("a") == "b.txt (6 bytes)"
    (tmp_path / "secret.txt").write_text("top secret")
    (workspace / "up").symlink_to("..")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.read_file("up/secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.write_file("up/secret.txt", "overwritten")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.list_files("up")
    assert (tmp_path / "secret.txt").read_text() == "top secret"


@pytest.mark.no_store
def test_reads_are_capped_and_say_so(tools: BuiltinTools, workspace: Path) -> None:
    workspace.mkdir()
    (workspace / "big.txt").write_text("x" * (MAX_READ_BYTES + 5000))
    text = tools.read_file("big.txt")
    assert text.startswith("x" * 1000)
    assert text.count("x") == MAX_READ_BYTES
    assert f"[truncated: showing the first {MAX_READ_BYTES} of {MAX_READ_BYTES + 5000} bytes]" in (
        text
    )


@pytest.mark.no_store
def test_missing_files_and_folders_are_tool_errors(tools: BuiltinTools) -> None:
    with pytest.raises(ToolError, match=r"no file 'nope\.txt'"):
        tools.read_file("nope.txt")
    with pytest.raises(ToolError, match="no folder 'nowhere'"):
        tools.list_files("nowhere")


# ---- shell ---------------------------------------------------------------------------------


@pytest.mark.no_store
async def test_shell_runs_in_the_workspace(tools: BuiltinTools, workspace: Path) -> None:
    out = await tools.run_shell("pwd; echo oops >&2; exit 3")
    lines = out.splitlines()
    assert lines[0] == "exit code 3"
    assert Path(lines[1]).resolve() == workspace.resolve()
    assert "oops" in lines


def _dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/stat")
    # A killed child of a reaper-less container lingers as a zombie: dead all the same.
    return status.exists() and status.read_text().split(")")[-1].split()[0] == "Z"


def _running(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line holds `marker`, seen from this host
    (a command in a PID namespace knows its children by other numbers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv and not _dead(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.mark.no_store
async def test_shell_timeout_kills_the_whole_process_group(tools: BuiltinTools) -> None:
    marker = f"{60 + os.getpid() % 1000 / 1000:.3f}"  # `sleep 60.123`: this test's own
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 1s") as caught:
        await tools.run_shell(f"sleep {marker} & echo started; sleep 60", 1)
    assert time.monotonic() - started < 10
    assert "started" in str(caught.value)
    for _ in range(50):
        if not _running(marker):
            break
        await asyncio.sleep(0.05)
    assert not _running(marker), "the background child survived the timeout"


@pytest.mark.no_store
async def test_shell_output_is_capped_and_says_so(tools: BuiltinTools) -> None:
    out = await tools.run_shell("head -c 100000 /dev/zero | tr '\\0' '#'")
    assert out.startswith("exit code 0\n")
    assert out.count("#") == MAX_SHELL_OUTPUT
    assert f"[truncated: showing the first {MAX_SHELL_OUTPUT} of 100000 bytes of output]" in out


@pytest.mark.no_store
async def test_shell_environment_has_no_credentials(
    tools: BuiltinTools, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-secret-1",
        "OPENAI_API_KEY": "sk-openai-secret-2",
        "GEMINI_API_KEY": "gemini-secret-3",
        "OPENROUTER_API_KEY": "openrouter-secret-4",
        "TELEGRAM_BOT_TOKEN": "123:telegram-secret",
        "CLAUDECODE": "nested-claude-marker",
        "OMEGA_PROVIDER__OPENAI__API_KEY": "sk-omega-secret-5",
        # Credentials whose names say nothing of being secret (issue 17: a deny-list kept them).
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEY0001",
        "DATABASE_URL": "postgres://app:dbpass-6@db/prod",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent-secret-7.sock",
    }
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("https_proxy", "http://proxy.local:3128")
    out = await tools.run_shell("env")
    for key, value in secrets.items():
        assert f"{key}=" not in out
        assert value not in out
    assert "LC_TIME=C" in out
    assert "https_proxy=http://proxy.local:3128" in out
    assert "PATH=" in out


@pytest.mark.no_store
def test_tool_environment_is_an_allow_list() -> None:
    env = tool_environment(
        {
            "PATH": "/bin",
            "GITHUB_TOKEN": "t",
            "DB_PASSWORD": "p",
            "LANG": "C",
            "LC_ALL": "C.UTF-8",
            "AWS_ACCESS_KEY_ID": "a",
            "DATABASE_URL": "postgres://u:p@h/d",
            "SSH_AUTH_SOCK": "/tmp/agent",
            "HARMLESS_SETTING": "not needed either",
            "TZ": "UTC",
            "NO_PROXY": "localhost",
        }
    )
    assert env == {
        "PATH": "/bin",
        "LANG": "C",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "NO_PROXY": "localhost",
    }


@pytest.mark.no_store
async def test_commands_run_under_the_sandbox_with_a_private_temp_dir(workspace: Path) -> None:
    tools = BuiltinTools(workspace)
    (workspace.parent / "config.toml").write_text("api_key = 'hidden'")
    out = await tools.run_shell("echo $TMPDIR; cat ../config.toml")
    assert out.startswith("exit code 1\n")
    assert f"{(workspace / '.tmp').resolve()}\n" in out
    # Landlock refuses it; bubblewrap's namespace (where it works) does not show it at all
    assert "hidden" not in out
    assert "Permission denied" in out or "No such file or directory" in out


# ---- fetch_url -----------------------------------------------------------------------------

GZIP_BOMB = gzip.compress(b"\0" * (64 << 20), 9)  # 64 MiB of zeros in ~64 KB
GZIPPED_TWICE = gzip.compress(gzip.compress(b"\0" * (256 << 20), 9), 9)  # 256 MiB in ~1 KB
ENCODED: dict[str, tuple[str, bytes]] = {
    "/bomb": ("gzip", GZIP_BOMB),
    "/bomb2": ("gzip, gzip", GZIPPED_TWICE),
    "/gz.html": ("gzip", gzip.compress(b"<p>Hello, inflated</p>")),
    "/raw-deflate.txt": ("deflate", zlib.compress(b"raw deflate text")[2:-4]),
    "/br": ("br", b"\x0b\x02\x80hello\x03"),
}
PAGE = b"""<html><head><title>Test page</title><style>body{color:red}</style></head>
<body><script>var secret = 1;</script><h1>Hello &amp; welcome</h1><p>First para.</p>
<p>Second<br>line</p></body></html>"""


@pytest.fixture
def web() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            if self.path == "/page.html":
                self._send(200, "text/html; charset=utf-8", PAGE)
            elif self.path == "/big.txt":
                self._send(200, "text/plain", b"z" * (MAX_FETCH_BYTES * 3))
            elif self.path in ENCODED:
                encoding, body = ENCODED[self.path]
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Encoding", encoding)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/to-file":
                self.send_response(302)
                self.send_header("Location", "file:///etc/passwd")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send(404, "text/plain", b"not here")

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.no_store
async def test_fetch_url_returns_status_and_page_text(local_tools: BuiltinTools, web: str) -> None:
    tools = local_tools
    out = await tools.fetch_url(f"{web}/page.html")
    assert out.startswith("HTTP 200 text/html")
    assert "Hello & welcome" in out
    assert "First para." in out
    assert "secret" not in out
    assert "color:red" not in out
    assert "<p>" not in out
    missing = await tools.fetch_url(f"{web}/nothing")
    assert missing.startswith("HTTP 404")
    assert "not here" in missing


@pytest.mark.no_store
async def test_fetch_url_caps_the_body(local_tools: BuiltinTools, web: str) -> None:
    out = await local_tools.fetch_url(f"{web}/big.txt")
    assert out.count("z") == MAX_FETCH_BYTES
    assert f"[truncated: only the first {MAX_FETCH_BYTES} bytes were read]" in out


@pytest.mark.no_store
async def test_fetch_url_inflates_a_compressed_page_only_up_to_the_cap(
    local_tools: BuiltinTools, web: str
) -> None:
    """A few KB of gzip can be gigabytes: fetch_url inflates them itself, never past the cap
    (httpx's own decoding inflated each chunk whole: 4 GB for a 3 KB page gzipped twice)."""
    assert "Hello, inflated" in await local_tools.fetch_url(f"{web}/gz.html")
    assert "raw deflate text" in await local_tools.fetch_url(f"{web}/raw-deflate.txt")
    tracemalloc.start()
    try:
        out = await local_tools.fetch_url(f"{web}/bomb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"[truncated: only the first {MAX_FETCH_BYTES} bytes were read]" in out
    assert peak < 8 << 20, peak  # without the cap: a whole inflated chunk, tens of MB
    with pytest.raises(ToolError, match="compressed more than once"):
        await local_tools.fetch_url(f"{web}/bomb2")
    with pytest.raises(ToolError, match="encoding not asked for"):
        await local_tools.fetch_url(f"{web}/br")


@pytest.mark.no_store
@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "example.com"]
)
async def test_fetch_url_refuses_other_schemes(tools: BuiltinTools, url: str) -> None:
    with pytest.raises(ToolError, match="only http:// and https://"):
        await tools.fetch_url(url)


@pytest.mark.no_store
async def test_fetch_url_does_not_follow_a_redirect_to_a_file(
    local_tools: BuiltinTools, web: str
) -> None:
    with pytest.raises(ToolError, match="only http:// and https://"):
        await local_tools.fetch_url(f"{web}/to-file")


@pytest.mark.no_store
def test_html_to_text_is_crude_but_readable() -> None:
    assert html_to_text("<div>a<b>b</b></div><div>c &lt;d&gt;</div>") == "a b\nc <d>"


@pytest.mark.no_store
@pytest.mark.parametrize(
    "page",
    ["<!--" * 25_000, "<" * 100_000, "<script<!--" * 9_000, "<br" * 33_000, "<a " * 33_000],
    ids=["comments", "angles", "script-comments", "breaks", "open-tags"],
)
def test_html_to_text_of_a_hostile_page_ends_at_once(page: str) -> None:
    """Unclosed comments, scripts and tags once made it quadratic: 100 KB of "<!--" took 15 s
    of CPU after fetch_url's time cap, on the event loop. Now it is linear (milliseconds);
    the bound is that of a page that hangs, not a speed figure."""
    started = time.process_time()
    text = html_to_text(page)
    assert time.process_time() - started < 2.0
    assert "<!--" not in text and "script" not in text


# ---- memory --------------------------------------------------------------------------------


async def test_search_memory_sees_only_the_current_sender(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        store.store_exchange("terminal", "ana", "My cat is called Felix", "Lovely name")
        store.store_exchange("terminal", "bob", "My cat is called Tom", "Nice")
        tools = BuiltinTools(tmp_path / "workspace", store)
        token = set_current_deps(ToolDeps(sender_id="ana"))
        try:
            found = await tools.search_memory("what is my cat called")
        finally:
            reset_current_deps(token)
        assert "Felix" in found
        assert "Tom" not in found
        with pytest.raises(ToolError, match="not available"):
            await tools.search_memory("cat")  # no run, no sender
    finally:
        store.close()


# ---- the registry --------------------------------------------------------------------------


@pytest.mark.no_store
def test_registry_names_must_be_unique_and_valid() -> None:
    def ping() -> str:
        """Answer pong."""
        return "pong"

    registry = ToolRegistry()
    registry.add(ping)
    with pytest.raises(ValueError, match="already registered"):
        registry.add(ping)
    with pytest.raises(ValueError, match="invalid tool name"):
        registry.add(ping, name="has space")
    assert registry.names() == ("ping",)
    assert registry.get("ping").description == "Answer pong."


def test_builtin_registry_has_memory_search_only_with_a_store(tmp_path: Path) -> None:
    plain = builtin_registry(tmp_path / "ws")
    assert plain.names() == ("read_file", "write_file", "list_files", "run_shell", "fetch_url")
    store = Store(tmp_path / "memory.db")
    try:
        assert "search_memory" in builtin_registry(tmp_path / "ws", store)
    finally:
        store.close()


def _script(*steps: list[ToolCallPart] | str) -> FunctionModel:
    """A model that plays `steps` in order: tool calls, then text."""
    remaining = list(steps)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = remaining.pop(0)
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))

    return FunctionModel(respond)


def _tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


@pytest.mark.no_store
async def test_refusals_reach_the_model_as_tool_results(tmp_path: Path) -> None:
    registry = builtin_registry(tmp_path / "ws")
    seen: list[AgentInfo] = []
    calls = [
        ToolCallPart("read_file", {"path": "../../etc/passwd"}, tool_call_id="a"),
        ToolCallPart("write_file", {"path": "ok.txt", "content": "fine"}, tool_call_id="b"),
    ]
    remaining: list[list[ToolCallPart] | str] = [calls, "done"]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        step = remaining.pop(0)
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))

    agent: Agent[ToolDeps, str] = Agent(FunctionModel(respond), deps_type=ToolDeps)
    result = await agent.run("go", deps=ToolDeps("ana"), toolsets=[registry.toolset()])
    assert result.output == "done"
    refused, wrote = _tool_returns(result.all_messages())
    assert refused.outcome == "failed"
    assert "refused" in str(refused.content)
    assert wrote.outcome == "success"
    assert (tmp_path / "ws" / "ok.txt").read_text() == "fine"
    # The schemas come from the functions' signatures.
    schemas = {t.name: t.parameters_json_schema for t in seen[0].function_tools}
    assert schemas["write_file"]["required"] == ["path", "content"]
    assert schemas["run_shell"]["properties"]["timeout_secs"] == {"default": 30, "type": "integer"}


async def test_registry_tools_see_the_run_deps(tmp_path: Path) -> None:
    store = Store(tmp_path / "memory.db")
    try:
        store.store_exchange("terminal", "ana", "The boat is blue", "ok")
        store.store_exchange("terminal", "bob", "The boat is red", "ok")
        registry = builtin_registry(tmp_path / "ws", store)
        model = _script([ToolCallPart("search_memory", {"query": "boat colour"})], "done")
        agent: Agent[ToolDeps, str] = Agent(model, deps_type=ToolDeps)
        result = await agent.run("go", deps=ToolDeps("bob"), toolsets=[registry.toolset()])
        (found,) = _tool_returns(result.all_messages())
        assert "red" in str(found.content)
        assert "blue" not in str(found.content)
    finally:
        store.close()


# ---- MCP -----------------------------------------------------------------------------------


@pytest.mark.no_store
def test_tool_prefixes_are_safe_and_unique() -> None:
    taken: set[str] = set()
    assert tool_prefix("calc", taken) == "calc"
    assert tool_prefix("calc", taken) == "calc2"
    assert tool_prefix("my server!", taken) == "my_server"
    assert tool_prefix("???", taken) == "mcp"


@pytest.mark.no_store
async def test_mcp_servers_become_prefixed_toolsets_and_broken_ones_are_skipped() -> None:
    calc = McpServer("calc", sys.executable, (str(ECHO_SERVER),))
    broken = McpServer("broken", "/nonexistent/mcp-server")
    toolsets = mcp_toolsets([calc, calc, broken], init_timeout=20)
    assert len(toolsets) == 2  # the same server declared twice starts once
    model = _script(
        [
            ToolCallPart("calc_add", {"a": 2, "b": 40}, tool_call_id="x"),
            ToolCallPart("calc_refuse", {"reason": "no"}, tool_call_id="y"),
        ],
        "done",
    )
    async with AsyncExitStack() as stack:
        started = await enter_available(stack, toolsets)
        assert len(started) == 1
        agent: Agent[None, str] = Agent(model)
        result = await agent.run("go", toolsets=started)
    added, refused = _tool_returns(result.all_messages())
    assert str(added.content) == "42"
    assert refused.outcome == "failed"
    assert "refused: no" in str(refused.content)


# ---- the provider's tool loop ----------------------------------------------------------------


def _looping_server(fake: FakeOpenAI, tool_rounds: int) -> None:
    """Script `tool_rounds` responses that each call list_files, then a text answer."""
    call = {"name": "list_files", "arguments": "{}"}
    fake.script = [
        Step(tool_calls=[{"id": f"c{i}", "type": "function", "function": call}])
        for i in range(tool_rounds)
    ] + [Step(text="done")]


def _provider(fake: FakeOpenAI, workspace: Path) -> ApiProvider:
    settings = ApiSettings(name="openai", model="fake-model", base_url=fake.base_url, api_key="k")
    return ApiProvider(settings, tools=builtin_registry(workspace))


@pytest.mark.no_store
async def test_tool_rounds_are_capped_then_the_model_must_answer(
    fake_openai: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "MAX_TOOL_ROUNDS", 2)
    _looping_server(fake_openai, 3)
    reply = await _provider(fake_openai, workspace).complete(
        Context(system_prompt="", messages=[ChatMessage("user", "loop")], use_tools=True)
    )
    assert reply.text == "done"
    assert [call.ok for call in reply.tool_calls] == [True, True, False]
    assert "tool-call limit reached" in reply.tool_calls[-1].error
    assert len(fake_openai.requests) == 4
    assert reply.usage.input_tokens > 0


@pytest.mark.no_store
async def test_a_model_that_never_stops_calling_tools_is_stopped(
    fake_openai: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "MAX_TOOL_ROUNDS", 2)
    _looping_server(fake_openai, 10)
    with pytest.raises(ProviderError, match="too many tool rounds"):
        await _provider(fake_openai, workspace).complete(
            Context(system_prompt="", messages=[ChatMessage("user", "loop")], use_tools=True)
        )
    assert len(fake_openai.requests) == 4  # MAX_TOOL_ROUNDS + 2


@pytest.mark.no_store
async def test_calls_without_tools_offer_none(fake_openai: FakeOpenAI, workspace: Path) -> None:
    provider = _provider(fake_openai, workspace)
    reply = await provider.complete(
        Context(system_prompt="sys", messages=[ChatMessage("user", "hi")], use_tools=False)
    )
    assert reply.text == "echo: hi"
    assert "tools" not in fake_openai.requests[0].body
