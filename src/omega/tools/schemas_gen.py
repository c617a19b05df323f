"""Writes omega/tools/schemas.json: the `tools` entries pydantic-ai's OpenAI chat model sends for
the built-in tools, in the order and with the keys it sends them (omega.tools.schemas reads them
without pydantic-ai). Run `python -m omega.tools.schemas_gen` after changing a built-in tool; a
unit test fails until then.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from omega.tools.builtin import BuiltinTools
from omega.tools.registry import ToolRegistry
from omega.tools.schemas import SNAPSHOT, fingerprint

# The model whose mapping is recorded: every family the lean path serves maps tools the same
# way (tests/integration/test_lean_body.py compares the bodies).
MODEL = "gpt-4o-mini"


def all_builtins(workspace: Path) -> ToolRegistry:
    """Every built-in tool, memory search included (it is offered when there is a store)."""
    tools = BuiltinTools(workspace, None)
    registry = ToolRegistry()
    for function in (
        tools.read_file,
        tools.write_file,
        tools.list_files,
        tools.run_shell,
        tools.search_memory,
        tools.fetch_url,
    ):
        registry.add(function)
    return registry


async def entries(registry: ToolRegistry) -> list[dict[str, Any]]:
    """The `tools` entries pydantic-ai sends for the registry's tools, as the agent offers them."""
    from pydantic_ai import RunContext
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.toolsets import CombinedToolset
    from pydantic_ai.usage import RunUsage

    from omega.tools.context import ToolDeps
    from omega.tools.wrappers import RecordingToolset

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(api_key="none"))
    recorder = RecordingToolset(CombinedToolset([registry.toolset()]))
    context = RunContext(deps=ToolDeps(), model=model, usage=RunUsage(), prompt="", run_step=1)
    offered = await recorder.definitions(context)
    assert offered is not None
    settings, parameters = model.prepare_request({}, ModelRequestParameters(function_tools=offered))
    tools, _ = model._get_tool_choice(settings or {}, parameters)  # type: ignore[arg-type]
    return [dict(tool) for tool in tools]


def generate() -> dict[str, Any]:
    """The snapshot as pydantic-ai makes it now."""
    with tempfile.TemporaryDirectory() as folder:
        registry = all_builtins(Path(folder))
        made = asyncio.run(entries(registry))
        return {
            "about": "written by omega.tools.schemas_gen; do not edit",
            "tools": {
                spec.name: {"fingerprint": fingerprint(spec), "entry": entry}
                for spec, entry in zip(registry, made, strict=True)
            },
        }


def main() -> None:
    """Write the snapshot."""
    SNAPSHOT.write_text(json.dumps(generate(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
