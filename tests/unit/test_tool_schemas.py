"""The committed snapshot of the built-in tools' OpenAI entries (omega.tools.schemas) is the one
pydantic-ai makes now, and a tool that changed since is not served from it."""

from __future__ import annotations

from pathlib import Path

from omega.tools import ToolRegistry, builtin_registry
from omega.tools.schemas import fingerprint, openai_tools, snapshot
from omega.tools.schemas_gen import generate


def test_the_committed_snapshot_is_what_pydantic_ai_makes_now() -> None:
    """Stale? Run `python -m omega.tools.schemas_gen` and commit src/omega/tools/schemas.json."""
    assert snapshot() == generate()["tools"]


def test_every_built_in_tool_is_served_and_a_guest_gets_only_theirs(tmp_path: Path) -> None:
    registry = builtin_registry(tmp_path)
    entries = openai_tools(registry)
    assert entries is not None
    assert [e["function"]["name"] for e in entries] == list(registry.names())
    guest = openai_tools(registry, frozenset({"read_file", "calc_add"}))
    assert [e["function"]["name"] for e in guest or []] == ["read_file"]
    assert openai_tools(registry, frozenset()) == []


def test_a_changed_or_unknown_tool_is_not_served(tmp_path: Path) -> None:
    def read_file(path: str, limit: int = 10) -> str:
        """Read a text file in the workspace."""
        return path

    changed = ToolRegistry()
    changed.add(read_file)
    assert fingerprint(changed.get("read_file")) != snapshot()["read_file"]["fingerprint"]
    assert openai_tools(changed) is None

    def weather(city: str) -> str:
        """The weather in a city."""
        return city

    registry = builtin_registry(tmp_path)
    registry.add(weather)
    assert openai_tools(registry) is None
    assert openai_tools(registry, frozenset({"read_file"})) is not None
