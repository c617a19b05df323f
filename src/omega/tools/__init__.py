"""Omega's tools for API providers: the registry, the built-ins and skills' MCP servers."""

from omega.tools.builtin import BuiltinTools, builtin_registry
from omega.tools.registry import ToolDeps, ToolError, ToolRegistry, ToolSpec, current_deps

__all__ = [
    "BuiltinTools",
    "ToolDeps",
    "ToolError",
    "ToolRegistry",
    "ToolSpec",
    "builtin_registry",
    "current_deps",
]
