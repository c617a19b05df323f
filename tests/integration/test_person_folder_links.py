"""A person's folder must be a real directory beneath the workspace, reached without a symlink:
a turn of the owner's that was talked into `ln -s .. people/telegram-42-<digest>` must not hand
that person the owner's workspace. Refused alike by the built-in tools (run_shell, read_file,
list_files, write_file), by the Claude Code provider's choice of the folder its CLI runs in and
by the API provider's folder for MCP servers; a real folder (created when missing) works."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from omega.config.safety import SandboxSection
from omega.paths import OmegaPaths
from omega.providers.api import ApiProvider, ApiSettings
from omega.providers.base import ProviderError
from omega.sandbox import Sandbox
from omega.sandbox.folders import UnsafeFolderError, confined_folder
from omega.tools import BuiltinTools, ToolDeps, ToolError
from omega.tools.context import reset_current_deps, set_current_deps
from omega.types import ChatMessage, Context, McpServer
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.integration.test_claude_code import FakeClaude, fake_claude, make_context, make_provider

__all__ = ["fake_claude"]  # the fixture this module uses

ECHO_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo_server.py"
PERSON = "telegram-42-0123456789"
DIARY = "OWNER DIARY 77"

# Symlinks an owner's turn could leave (name beneath the workspace -> where it points): the
# person's folder itself at the owner's workspace or a folder of the owner's, or `people` at one.
LINKS = {
    "folder-to-workspace": (f"people/{PERSON}", ".."),
    "folder-to-owners-folder": (f"people/{PERSON}", "../projects"),
    "people-to-owners-folder": ("people", "projects"),
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The owner's workspace in a fresh $OMEGA_HOME, with the owner's diary in it (and in the
    owner's projects/ and projects/<person>/ folders, where the links above lead)."""
    paths = OmegaPaths(tmp_path / "home")
    paths.ensure()
    ws = paths.workspace
    for where in (ws, ws / "projects", ws / "projects" / PERSON):
        where.mkdir(parents=True, exist_ok=True)
        (where / "diary.txt").write_text(DIARY)
    return ws


def link(workspace: Path, case: str) -> Path:
    """Leave the symlink of `case`; the person's folder as Omega names it."""
    name, target = LINKS[case]
    (workspace / name).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, workspace / name)
    return workspace / "people" / PERSON


def rwx(workspace: Path) -> Sandbox:
    """The sandbox in `rwx` mode: what stops a person here is the folder check alone."""
    return Sandbox(SandboxSection(mode="rwx"), OmegaPaths(workspace.parent))


@pytest.fixture
def as_person(workspace: Path) -> Iterator[Path]:
    """The tools' run is the person's: their folder is workspace/people/<them>."""
    folder = workspace / "people" / PERSON
    token = set_current_deps(ToolDeps(sender_id="42", channel="telegram", workspace=str(folder)))
    yield folder
    reset_current_deps(token)


# ---- the built-in tools ----------------------------------------------------------------------


@pytest.mark.no_store
@pytest.mark.parametrize("case", list(LINKS))
def test_a_symlinked_person_folder_is_refused_to_every_built_in_tool(
    workspace: Path, as_person: Path, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    link(workspace, case)
    tools = BuiltinTools(workspace, sandbox=rwx(workspace))
    with caplog.at_level(logging.WARNING, logger="omega.sandbox.folders"):
        with pytest.raises(ToolError, match="refused: this person's folder goes through a symlink"):
            asyncio.run(tools.run_shell("pwd; cat diary.txt; echo pwned > dropped.txt"))
        attempts: list[Callable[[], str]] = [
            lambda: tools.read_file("diary.txt"),
            lambda: tools.list_files(),
            lambda: tools.write_file("dropped.txt", "pwned"),
        ]
        for attempt in attempts:
            with pytest.raises(ToolError, match="refused: this person's folder"):
                attempt()
    assert str(as_person) in caplog.text  # the owner's log says which folder was refused
    assert not list(workspace.rglob("dropped.txt"))
    assert os.path.islink(workspace / LINKS[case][0])  # left as it was, for the owner to see


@pytest.mark.no_store
def test_a_real_person_folder_is_made_owner_only_and_works(
    workspace: Path, as_person: Path
) -> None:
    tools = BuiltinTools(workspace, sandbox=rwx(workspace))
    output = asyncio.run(tools.run_shell("pwd; echo mine > note.txt; cat diary.txt"))
    assert output.startswith("exit code 1")  # no diary in their folder
    assert Path(output.splitlines()[1]).resolve() == as_person.resolve()
    assert stat.S_IMODE(as_person.stat().st_mode) == 0o700
    assert tools.read_file("note.txt") == "mine\n"
    assert "note.txt (5 bytes)" in tools.list_files().splitlines()
    assert DIARY not in output


# ---- the Claude Code CLI's folder ------------------------------------------------------------


@pytest.mark.no_store
@pytest.mark.parametrize("case", list(LINKS))
def test_the_claude_cli_never_runs_in_a_symlinked_person_folder(
    fake_claude: FakeClaude, workspace: Path, case: str
) -> None:
    folder = link(workspace, case)
    provider = make_provider(workspace)
    context = make_context(workspace=str(folder), tool_access="read_only")
    with pytest.raises(ProviderError, match="this person's folder goes through a symlink"):
        asyncio.run(provider.complete(context))
    assert fake_claude.calls() == []  # the CLI was never started


@pytest.mark.no_store
def test_the_claude_cli_runs_in_a_real_person_folder(
    fake_claude: FakeClaude, workspace: Path
) -> None:
    folder = workspace / "people" / PERSON
    provider = make_provider(workspace)
    reply = asyncio.run(provider.complete(make_context(workspace=str(folder))))
    assert reply.text == "ok"
    [call] = fake_claude.calls()
    assert Path(call["cwd"]).resolve() == folder.resolve()
    assert folder.is_dir() and not folder.is_symlink()


# ---- the API provider's MCP servers ----------------------------------------------------------


def api_provider(fake: FakeOpenAI, workspace: Path) -> ApiProvider:
    settings = ApiSettings(name="openai", model="fake-model", base_url=fake.base_url, api_key="k")
    return ApiProvider(settings, sandbox=rwx(workspace))


def mcp_context(folder: Path) -> Context:
    server = McpServer("calc", sys.executable, (str(ECHO_SERVER),))
    return Context(
        system_prompt="",
        messages=[ChatMessage("user", "add 2 and 40")],
        use_tools=True,
        allowed_tools=frozenset({"mcp"}),
        mcp_servers=(server,),
        workspace=str(folder),
    )


@pytest.mark.no_store
def test_mcp_servers_never_start_in_a_symlinked_person_folder(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    folder = link(workspace, "folder-to-workspace")
    fake_openai.script = [Step(text="done")]
    with pytest.raises(ProviderError, match="this person's folder goes through a symlink"):
        asyncio.run(api_provider(fake_openai, workspace).complete(mcp_context(folder)))
    assert fake_openai.requests == []


@pytest.mark.no_store
def test_mcp_servers_start_in_a_real_person_folder(
    fake_openai: FakeOpenAI, workspace: Path
) -> None:
    folder = workspace / "people" / PERSON
    fake_openai.script = [Step(text="done")]
    reply = asyncio.run(api_provider(fake_openai, workspace).complete(mcp_context(folder)))
    assert reply.text == "done"
    assert folder.is_dir() and not folder.is_symlink()


# ---- the check itself ------------------------------------------------------------------------


@pytest.mark.no_store
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../elsewhere", "outside the workspace"),
        (f"people/../../{PERSON}", "outside the workspace"),
        ("people/file.txt/inner", "not a folder"),
    ],
)
def test_a_folder_outside_the_workspace_or_under_a_file_is_refused(
    workspace: Path, name: str, why: str
) -> None:
    (workspace / "people").mkdir()
    (workspace / "people" / "file.txt").write_text("x")
    with pytest.raises(UnsafeFolderError, match=why):
        confined_folder(workspace, workspace / name)
    assert not (workspace.parent / "elsewhere").exists()


@pytest.mark.no_store
def test_the_workspace_spelt_through_a_symlink_of_its_own_is_still_the_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    # The owner's own setup may reach the workspace through a link (a home on another disk).
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    folder = workspace / "people" / PERSON
    assert confined_folder(alias, folder) == folder
    assert folder.is_dir()
    (folder.parent / "x").symlink_to("..")
    with pytest.raises(UnsafeFolderError, match="symlink"):
        confined_folder(alias, folder.parent / "x")
