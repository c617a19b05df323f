"""Omega's own tools: a small registry of typed Python functions, handed to pydantic-ai.

pydantic-ai derives each tool's JSON schema from the function's signature. It is imported only
when `toolset()` is first called, so building a registry costs nothing at start-up.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omega.tools.context import ToolDeps

if TYPE_CHECKING:
    from pydantic_ai.toolsets import AbstractToolset

# What OpenAI, Anthropic and Gemini all accept as a function name.
TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool: its name, what the model is told it does, and the function."""

    name: str
    description: str
    function: Callable[..., Any]


class ToolRegistry:
    """Omega's tools by unique name; `toolset()` turns them into a pydantic-ai toolset."""

    def __init__(self) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self._toolset: AbstractToolset[ToolDeps] | None = None

    def add(
        self, function: Callable[..., Any], *, name: str = "", description: str = ""
    ) -> ToolSpec:
        """Register a typed (sync or async) function as a tool; ValueError on a bad or used name."""
        tool_name = name or function.__name__
        if not TOOL_NAME_RE.fullmatch(tool_name):
            raise ValueError(f"invalid tool name {tool_name!r}: use 1-64 letters, digits, _ or -")
        if tool_name in self._specs:
            raise ValueError(f"a tool named {tool_name!r} is already registered")
        text = description or (inspect.getdoc(function) or "").strip()
        if not text:
            raise ValueError(f"tool {tool_name!r} needs a description")
        spec = ToolSpec(tool_name, " ".join(text.split()), function)
        self._specs[tool_name] = spec
        self._toolset = None
        return spec

    def names(self) -> tuple[str, ...]:
        """The registered tool names, in registration order."""
        return tuple(self._specs)

    def get(self, name: str) -> ToolSpec:
        """The tool registered under `name` (KeyError if none)."""
        return self._specs[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def toolset(self) -> AbstractToolset[ToolDeps]:
        """The tools as a pydantic-ai toolset for an Agent whose deps are `ToolDeps` (cached)."""
        if self._toolset is None:
            from pydantic_ai import Tool
            from pydantic_ai.toolsets import FunctionToolset

            from omega.tools.wrappers import RegistryToolset

            tools: list[Tool[ToolDeps]] = [
                Tool(spec.function, name=spec.name, description=spec.description, takes_ctx=False)
                for spec in self._specs.values()
            ]
            self._toolset = RegistryToolset(FunctionToolset(tools))
        return self._toolset
