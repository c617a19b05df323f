"""The OpenAI `tools` entries pydantic-ai sends for Omega's built-in tools, without pydantic-ai.

pydantic-ai derives a tool's JSON schema from its function (signature, docstring) and maps it
to chat-completions' `tools` entry; importing it for that costs about a second and 60 MB. The
entries it sends are committed in `schemas.json` (written by `omega.tools.schemas_gen`), each
under its tool's name with a fingerprint of what the schema is derived from: a tool whose
function or description changed since, or one not in the snapshot, has no entry here, and its
caller takes pydantic-ai's own path. tests/unit/test_tool_schemas.py regenerates the snapshot
and fails when the committed one is stale.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from omega.tools.registry import ToolRegistry, ToolSpec

SNAPSHOT = Path(__file__).with_name("schemas.json")


@functools.lru_cache(maxsize=256)
def fingerprint(spec: ToolSpec) -> str:
    """What the tool's schema is derived from (name, description, signature, docstring), hashed."""
    function = spec.function
    try:
        signature = str(inspect.signature(function))
    except (TypeError, ValueError):  # no signature to read: never in the snapshot
        signature = repr(function)
    source = "\n".join((spec.name, spec.description, signature, inspect.getdoc(function) or ""))
    return hashlib.sha256(source.encode()).hexdigest()[:24]


@functools.cache
def snapshot() -> dict[str, Any]:
    """The committed entries by tool name: {"fingerprint": ..., "entry": {...}}."""
    try:
        tools = json.loads(SNAPSHOT.read_text(encoding="utf-8")).get("tools", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return tools if isinstance(tools, dict) else {}


def openai_tools(
    registry: ToolRegistry, allowed: Collection[str] | None = None
) -> list[dict[str, Any]] | None:
    """The `tools` entries pydantic-ai would send for `registry`'s tools (only the `allowed` ones
    when given), in its order; None when any of them is not in the snapshot as it is now."""
    known = snapshot()
    entries: list[dict[str, Any]] = []
    for spec in registry:
        if allowed is not None and spec.name not in allowed:
            continue
        found = known.get(spec.name)
        if not isinstance(found, dict) or found.get("fingerprint") != fingerprint(spec):
            return None
        entries.append(found["entry"])
    return entries
