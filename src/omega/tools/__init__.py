"""Omega's tools for API providers: the registry, the built-ins and skills' MCP servers.

This module is the package's public face: callers outside `omega.tools` import the names below
from here, or one of the public submodules by its path. `context`, `registry`, `builtin` and
`fetch` are internal. The submodules are not imported here because each costs its importer
something the others do not need (pydantic-ai, the memory store, the MCP client).
- ToolDeps, ToolError, current_deps: what a tool sees of its run, and how it refuses
- ToolRegistry, ToolSpec: typed functions by name, handed to pydantic-ai
- BuiltinTools, builtin_registry: Omega's own file, shell and web tools
- tool_environment: the allow-listed environment commands the model runs get
- safe_fs (module): file operations that never follow a link out of a folder
- wrappers (module): the pydantic-ai toolsets that run and record tool calls (imports pydantic-ai)
- mcp (module): skills' MCP servers, started in the sandbox
- home_guard (module): Omega's file modes put back after a command that changed them
- mcp_health (module): what each MCP server last did, for status and self-healing
- mcp_status (module): each MCP server's state in one line, for status and the Health page
- human (module): tools the owner added by hand, pinned by digest
- schemas (module): the built-in tools' OpenAI entries, a committed snapshot (no pydantic-ai)
- schemas_gen (module): writes that snapshot with pydantic-ai
"""

from omega.tools.builtin import BuiltinTools, builtin_registry, tool_environment
from omega.tools.context import ToolDeps, ToolError, current_deps
from omega.tools.registry import ToolRegistry, ToolSpec

__all__ = [
    "BuiltinTools",
    "ToolDeps",
    "ToolError",
    "ToolRegistry",
    "ToolSpec",
    "builtin_registry",
    "current_deps",
    "home_guard",
    "human",
    "mcp",
    "mcp_health",
    "mcp_status",
    "safe_fs",
    "schemas",
    "schemas_gen",
    "tool_environment",
    "wrappers",
]
