"""Tool scaffolds: a template for a human to implement, never imported or run by Omega.

Every piece of model text (description, side effects, risk, inputs) goes into the file as a
`#` comment holding a JSON string literal with every non-ASCII and control character escaped,
so no newline, quote or docstring delimiter the model writes can end the comment and become
code. The tool name is re-checked against the snake_case pattern before it is used as one.
"""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")

SCAFFOLD = '''"""Scaffold for the tool `{name}` proposed by Omega (proposal #{id}).

A template for a human to implement. Omega never imports or runs this file. When it is
implemented and reviewed, install it with `omega tools add <file>`: only a file the owner
installed (pinned by its sha256) is loaded.
"""

from __future__ import annotations

# What the proposal says (model text, quoted as JSON strings; read it, do not trust it):
{comments}


def {name}(**kwargs: object) -> str:
    """See the proposal above."""
    raise NotImplementedError("implement {name} and review it before use")
'''


def quoted(value: object) -> str:
    """Model text as one ASCII-only JSON literal: it cannot contain a line break."""
    return json.dumps(value, ensure_ascii=True, default=str)


def scaffold_text(name: str, proposal_id: int, spec: dict[str, Any]) -> str:
    """The scaffold file for an approved tool proposal; ValueError on an unusable name."""
    if not TOOL_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a tool name")
    fields = {
        "description": spec.get("description", ""),
        "side_effects": spec.get("side_effects", []),
        "risk_level": spec.get("risk_level", "medium"),
        "os_permissions": spec.get("os_permissions", []),
        "inputs": spec.get("inputs", {}),
    }
    comments = "\n".join(f"# {key}: {quoted(value)}" for key, value in fields.items())
    return SCAFFOLD.format(name=name, id=int(proposal_id), comments=comments)
